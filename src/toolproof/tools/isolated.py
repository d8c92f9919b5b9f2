"""A Python tool called in a worker process of its own (`isolation: process`).

For tools that must not be trusted to stay in-process: a C extension that crashes, code that
swallows every interruption, a `ctypes` call to `_exit`. Each call forks a worker that
inherits the trial's world as it is; the worker runs the tool, then writes back over a pipe,
as JSON, the result (or the error) and the changes the call made to its world, and ends. The
harness applies those changes to the trial's world, so the world stays the one truth the
graders read. A worker still running at the call's deadline is killed (SIGKILL); one that
ends without an answer (os._exit, a signal, a segfault) crashes its call. Either way the
trial fails as `tool_crashed` and the run goes on.

A fork costs about a millisecond a call. The worker is a copy of a process that may run other
threads: a tool that waits on a lock one of them held at the fork never returns, and is
killed at its deadline like any other that hangs.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Callable
from typing import Any

import orjson
from pydantic_core import to_jsonable_python

from toolproof.bigints import storable
from toolproof.errors import ToolCrashed
from toolproof.tools.base import ToolContext, ToolError, ToolResult
from toolproof.tools.guard import _real_exit, _real_kill
from toolproof.world import Change, diff, thaw

Call = Callable[[dict[str, Any]], Any]


def _answer(call: Call, kwargs: dict[str, Any], context: ToolContext, is_async: bool) -> bytes:
    """In the worker: the call's outcome and its changes to the world, as JSON."""
    before = context.world.snapshot()
    try:
        if is_async:
            asyncio.events._set_running_loop(None)  # the harness's loop is not ours to use
            value = asyncio.run(call(kwargs))
        else:
            value = call(kwargs)
        outcome: dict[str, Any] = {"content": storable(to_jsonable_python(thaw(value)))}
    except ToolError as exc:
        outcome = {"error": exc.kind, "message": str(exc)}
    except Exception as exc:
        text = " ".join(f"{type(exc).__name__}: {exc}".split()).rstrip(":")
        outcome = {"error": "exception", "message": text}
    except BaseException as exc:  # SystemExit, KeyboardInterrupt, ...: the call crashed
        text = " ".join(f"{type(exc).__name__}: {exc}".split()).rstrip(":")
        outcome = {"crash": f"raised {text}"}
    changes = diff(context.world.snapshot(), before)
    outcome["changes"] = [c.model_dump(mode="json") for c in changes]
    return orjson.dumps(storable(outcome))


def _worker(write_end: int, run: Callable[[], bytes]) -> None:
    """The child's whole life: answer, write it all, end without the harness's teardown."""
    me = os.getpid()
    try:
        data = run()
    except BaseException:  # the answer itself could not be made
        data = b""
    if os.getpid() != me:  # a child the tool forked: only the worker answers
        _real_exit(0)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(write_end, view) :]
    finally:
        _real_exit(0)


async def call_isolated(
    name: str,
    call: Call,
    kwargs: dict[str, Any],
    context: ToolContext,
    *,
    is_async: bool,
    timeout_s: float,
) -> ToolResult:
    """`call(kwargs)` in a forked worker, within `timeout_s`; its world changes applied."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the worker, in a process group of its own (its kill(0) reaches itself)
        os.setpgid(0, 0)
        os.close(read_end)
        _worker(write_end, lambda: _answer(call, kwargs, context, is_async))
    os.close(write_end)
    try:
        data = await asyncio.wait_for(_read_all(read_end), timeout_s)
    except TimeoutError:
        _real_kill(pid, signal.SIGKILL)
        _reap(pid)
        raise ToolCrashed(
            f"{name} did not return within {timeout_s:g} s (its timeout_s); its worker "
            "process was killed"
        ) from None
    except BaseException:  # the trial was cancelled (its turn's deadline, Ctrl-C)
        _real_kill(pid, signal.SIGKILL)
        _reap(pid)
        raise
    finally:
        os.close(read_end)
    status = _reap(pid)
    if not data:
        raise ToolCrashed(f"{name}'s worker process ended without an answer ({status})")
    try:
        outcome = orjson.loads(data)
    except orjson.JSONDecodeError:
        raise ToolCrashed(f"{name}'s worker process wrote no readable answer ({status})") from None
    context.world.apply(Change.model_validate(c) for c in outcome["changes"])
    if "crash" in outcome:
        raise ToolCrashed(f"{name} {outcome['crash']} (in its worker process)")
    if "error" in outcome:
        return ToolResult.error(outcome["error"], outcome["message"])
    return ToolResult(outcome["content"])


async def _read_all(fd: int) -> bytes:
    """Everything written to the pipe until the worker closes it (by ending)."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[bytes] = loop.create_future()
    chunks: list[bytes] = []

    def readable() -> None:
        chunk = os.read(fd, 1 << 16)
        if chunk:
            chunks.append(chunk)
            return
        loop.remove_reader(fd)
        if not done.done():
            done.set_result(b"".join(chunks))

    loop.add_reader(fd, readable)
    try:
        return await done
    finally:
        loop.remove_reader(fd)


def _reap(pid: int) -> str:
    """Wait for the worker to be gone; how it ended, in words."""
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        return f"killed by {signal.Signals(os.WTERMSIG(status)).name}"
    return f"exit status {os.WEXITSTATUS(status)}"
