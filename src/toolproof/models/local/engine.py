"""The shared engine: one loaded model per process, and the KV snapshots of its conversations.

The model is loaded once per process (per path, context size and thread count) at first use
and shared by every client and trial. All of its llama.cpp work, from loading to freeing, runs
on one thread of its own (`ModelThread`), one piece at a time: llama.cpp keeps a pool of
worker threads per calling thread, and once two OS threads have called it the pools spin
against each other (generation fell from ~130 to ~36 tokens a second on two cores).
Consecutive prompts that share a prefix reuse its KV cache; because trials interleave, the
engine also keeps a snapshot of each conversation's KV cache after each turn and restores the
one sharing the longest prefix with a new prompt, or failing that one from the disk cache.
"""

from __future__ import annotations

import atexit
import ctypes
import json
import os
import queue
import threading
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from toolproof.models.local.cache import DiskCache
from toolproof.models.local.grammar import json_grammar, tool_grammar
from toolproof.models.local.snapshot import Snapshot, common_prefix, is_prefix
from toolproof.tools.base import ToolSchema

if TYPE_CHECKING:
    from llama_cpp import Llama

# Restoring a snapshot costs a copy of its KV cache; below this gain, evaluating is as cheap.
MIN_SNAPSHOT_GAIN = 16

T = TypeVar("T")


class ModelThread:
    """One daemon thread that runs the functions handed to it, in order, for its whole life.

    A daemon, so that a process that forgets to stop it still exits; `stop` runs what is
    queued and ends it (the engines are freed on it at exit)."""

    def __init__(self, name: str) -> None:
        self._queue: queue.SimpleQueue[tuple[Callable[[], Any], Future[Any]] | None] = (
            queue.SimpleQueue()
        )
        self._thread = threading.Thread(target=self._serve, name=name, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while (item := self._queue.get()) is not None:
            work, future = item
            if not future.set_running_or_notify_cancel():
                continue  # cancelled while it waited
            try:
                future.set_result(work())
            except BaseException as exc:  # handed to the caller, which raises it
                future.set_exception(exc)

    def submit(self, work: Callable[[], T]) -> Future[T]:
        """Run `work` on the thread; its future has the result or the exception."""
        future: Future[T] = Future()
        self._queue.put((work, future))
        return future

    def run(self, work: Callable[[], T]) -> T:
        """Run `work` on the thread and wait for it (directly when already on it)."""
        if threading.current_thread() is self._thread:
            return work()
        return self.submit(work).result()

    def stop(self) -> None:
        self._queue.put(None)
        self._thread.join()


@dataclass
class Engine:
    """One loaded model, the thread all its work runs on, and the KV snapshots of recent
    conversations. Every method that touches the model runs on `thread`: call them through
    `thread.run` or `thread.submit`."""

    path: str
    n_ctx: int
    n_threads: int
    thread: ModelThread = field(default_factory=lambda: ModelThread("toolproof-llama"))
    llama: Llama | None = None
    snapshots: OrderedDict[int, Snapshot] = field(default_factory=OrderedDict)
    snapshot_bytes: int = 0
    grammars: dict[str, Any] = field(default_factory=dict)
    disk: DiskCache | None = None
    _next: int = 0

    def load(self) -> Llama:
        """The model, loaded at first use."""
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
        replaces it. At least the last token is left to evaluate, for fresh logits.
        """
        import numpy as np

        llama = self.load()
        wanted = np.asarray(tokens, dtype=np.intc)
        live = common_prefix(llama.input_ids[: llama.n_tokens], wanted)
        shared, found = max(
            ((common_prefix(s.tokens, wanted), key) for key, s in self.snapshots.items()),
            default=(0, None),
        )
        kept = live
        if found is not None and shared > live + MIN_SNAPSHOT_GAIN:
            self.snapshots.move_to_end(found)
            kept = shared if self._restore(llama, self.snapshots[found]) else 0
        if self.disk is not None and kept < len(tokens) // 2:
            saved = self.disk.best(wanted, kept + MIN_SNAPSHOT_GAIN)
            if saved is not None:
                kept = common_prefix(saved.tokens, wanted) if self._restore(llama, saved) else 0
        kept = min(kept, len(tokens) - 1)
        # llama-cpp-python evaluates from n_tokens on, dropping the KV cache past it.
        llama.n_tokens = min(llama.n_tokens, kept)
        return kept

    def _restore(self, llama: Llama, snap: Snapshot) -> bool:
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
        the disk cache (when there is one)."""
        import llama_cpp

        llama = self.load()
        if budget <= 0 or llama.n_tokens == 0:
            return
        tokens = llama.input_ids[: llama.n_tokens].copy()
        # The same conversation's older snapshots are prefixes of this one: drop them.
        for key in [k for k, s in self.snapshots.items() if is_prefix(s.tokens, tokens)]:
            self._drop(key)
        size = llama_cpp.llama_state_seq_get_size(llama.ctx, 0)
        if size > budget:
            return
        state = (ctypes.c_uint8 * size)()
        if llama_cpp.llama_state_seq_get_data(llama.ctx, state, size, 0) != size:
            return
        if persist and self.disk is not None:
            self.disk.save(Snapshot(tokens, state))
        self._next += 1
        self.snapshots[self._next] = Snapshot(tokens, state)
        self.snapshot_bytes += size
        while self.snapshot_bytes > budget and self.snapshots:
            self._drop(next(iter(self.snapshots)))

    def close(self) -> None:
        """Free the model (loaded again at next use)."""
        if self.llama is not None:
            self.llama.close()
            self.llama = None

    def _drop(self, key: int) -> None:
        snap = self.snapshots.pop(key)
        self.snapshot_bytes -= len(snap.state)

    def grammar(self, tools: list[ToolSchema], parallel: bool) -> Any:
        """The compiled `tool_grammar` for calls of these tools, compiled once."""
        from llama_cpp.llama_grammar import LlamaGrammar

        key = json.dumps([parallel, [[t.name, t.parameters] for t in tools]], sort_keys=True)
        if key not in self.grammars:
            text = tool_grammar(tools, parallel)
            self.grammars[key] = LlamaGrammar.from_string(text, verbose=False)
        return self.grammars[key]

    def answer_grammar(self, schema: dict[str, Any]) -> Any:
        """The compiled `json_grammar` for text answers of this schema, compiled once."""
        from llama_cpp.llama_grammar import LlamaGrammar

        key = json.dumps(["answer", schema], sort_keys=True)
        if key not in self.grammars:
            self.grammars[key] = LlamaGrammar.from_string(json_grammar(schema), verbose=False)
        return self.grammars[key]


_ENGINES: dict[tuple[str, int, int], Engine] = {}
_ENGINES_LOCK = threading.Lock()


@atexit.register
def _close_engines() -> None:
    """Free the models, each on its own thread, before the interpreter tears down what
    llama-cpp-python's own finaliser needs (otherwise it prints an ignored TypeError)."""
    with _ENGINES_LOCK:
        for engine in _ENGINES.values():
            engine.thread.run(engine.close)
            engine.thread.stop()


def shared_engine(path: str, n_ctx: int, n_threads: int) -> Engine:
    """The process's engine for this model file, context size and thread count."""
    key = (os.path.realpath(path), n_ctx, n_threads)
    with _ENGINES_LOCK:
        if key not in _ENGINES:
            _ENGINES[key] = Engine(path, n_ctx, n_threads, disk=DiskCache.for_model(path, n_ctx))
        return _ENGINES[key]
