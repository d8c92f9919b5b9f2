"""Suite code that must neither hang a command nor end it: a Python tool's call, a suite
module's import.

A synchronous tool called on the main thread runs there, under a real-time timer
(`call_with_deadline`): still running at its deadline, it is interrupted by SIGALRM with
`Overran`, even inside `time.sleep` or a loop that never returns. That costs two `setitimer`
calls (a few microseconds a call in all) where a hop to another thread costs 40. Off the
main thread, where no signal arrives, the call runs on a daemon thread of its own
(`in_thread`) and is abandoned at the deadline. While suite code runs, `os._exit` raises
`ProcessExit` instead of ending the process (`exits_refused`), so a tool that calls it fails
its call like one that calls `sys.exit`.
"""

from __future__ import annotations

import asyncio
import contextvars
import importlib
import os
import signal
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, NoReturn

REPEAT_S = 0.25
"""After its deadline, a call that caught `Overran` and went on is interrupted again this
often, until it gives up."""


class Overran(BaseException):
    """Raised into suite code that is still running at its deadline (a BaseException, so
    that the code's own `except Exception` does not swallow it)."""


class ProcessExit(BaseException):
    """Raised by `os._exit` called from suite code while it is refused."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


# ---------------------------------------------------------------- os._exit

_real_exit = os._exit
_refusing = 0
_refusing_lock = threading.Lock()
_pid = os.getpid()


def _refused_exit(status: int) -> NoReturn:
    if os.getpid() != _pid:  # a child forked by the suite's code ends as usual
        _real_exit(status)
    raise ProcessExit(status)


def _refuse_exits() -> None:
    global _refusing, _pid
    with _refusing_lock:
        if _refusing == 0:
            _pid = os.getpid()
            os._exit = _refused_exit
        _refusing += 1


def _allow_exits() -> None:
    global _refusing
    with _refusing_lock:
        _refusing -= 1
        if _refusing == 0:
            os._exit = _real_exit


@contextmanager
def exits_refused() -> Iterator[None]:
    """`os._exit` raises ProcessExit while any suite code runs under this (counted, so that
    calls on several threads at once restore it only when the last one ends)."""
    _refuse_exits()
    try:
        yield
    finally:
        _allow_exits()


# ---------------------------------------------------------------- a deadline on the main thread

_deadline: float | None = None
"""When the call running on the main thread must have returned (time.monotonic)."""
_other_alarm: Any = None
"""The SIGALRM handler there was before ours: called for an alarm that is not ours."""


def can_interrupt() -> bool:
    """Whether `call_with_deadline` can interrupt a call on this thread (the main thread,
    with timers)."""
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


def _on_alarm(signum: int, frame: Any) -> None:
    """Overran into a call past its deadline; never into `call_with_deadline`'s own setting
    up and cleaning up (an alarm there is the call's end racing its deadline: the timer is
    being disarmed)."""
    if _deadline is not None and time.monotonic() >= _deadline:
        if frame is None or frame.f_code not in _OWN_CODE:
            raise Overran
        return
    if callable(_other_alarm):
        _other_alarm(signum, frame)


def call_with_deadline(func: Callable[..., Any], kwargs: dict[str, Any], seconds: float) -> Any:
    """`func(**kwargs)` on the main thread with `os._exit` refused, interrupted by Overran
    once it has run `seconds`, and again every REPEAT_S until it ends. A timer someone else
    had set is put back afterwards, less the time that went by. (Plain code, no context
    managers: this runs on every synchronous tool call.)"""
    global _deadline, _other_alarm
    if _handler_of(signal.SIGALRM) is not _on_alarm:
        _other_alarm = signal.signal(signal.SIGALRM, _on_alarm)
    outer = _deadline
    started = time.monotonic()
    _deadline = started + seconds
    left, every = signal.setitimer(signal.ITIMER_REAL, seconds, REPEAT_S)
    _refuse_exits()
    try:
        return func(**kwargs)
    finally:
        _allow_exits()
        _deadline = outer
        if left:
            left = max(left - (time.monotonic() - started), 1e-6)
        signal.setitimer(signal.ITIMER_REAL, left, every)


_OWN_CODE = frozenset(f.__code__ for f in (call_with_deadline, _refuse_exits, _allow_exits))


def _raw_getsignal() -> Callable[[int], Any]:
    """The C-level getsignal: `signal.getsignal` turns its answer into an enum, 3 us."""
    try:
        found: Callable[[int], Any] = importlib.import_module("_signal").getsignal
    except (ImportError, AttributeError):
        return signal.getsignal
    return found


_handler_of = _raw_getsignal()


# ---------------------------------------------------------------- a deadline on another thread


async def in_thread(func: Callable[..., Any], kwargs: dict[str, Any], seconds: float) -> Any:
    """`func(**kwargs)` on a daemon thread of its own, awaited for at most `seconds` (then
    Overran; the thread is left to end by itself, and never keeps the process alive)."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[Any] = loop.create_future()
    context = contextvars.copy_context()

    def settle(value: Any, error: BaseException | None) -> None:
        if done.done():
            return
        if error is not None:
            done.set_exception(error)
        else:
            done.set_result(value)

    def work() -> None:
        try:
            outcome: tuple[Any, BaseException | None] = (context.run(func, **kwargs), None)
        except BaseException as exc:  # SystemExit too: handed to the caller, not the thread
            outcome = (None, exc)
        with suppress(RuntimeError):  # the loop is closed: no one waits any more
            loop.call_soon_threadsafe(settle, *outcome)

    threading.Thread(target=work, name="toolproof-tool", daemon=True).start()
    try:
        return await asyncio.wait_for(done, seconds)
    except TimeoutError:
        raise Overran from None


# ---------------------------------------------------------------- Ctrl-C or the suite's own


def _pressed(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


@contextmanager
def interrupts_marked() -> Iterator[None]:
    """Ctrl-C raised from a frame of this module while suite code runs on the main thread
    (Python's own handler raises it in whatever frame runs), so that `raised_inside` tells
    it from a KeyboardInterrupt the suite's code raises itself."""
    main = threading.current_thread() is threading.main_thread()
    if not main or signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield
        return
    signal.signal(signal.SIGINT, _pressed)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def raised_inside(exc: BaseException, folder: Path) -> bool:
    """Whether `exc` was raised by code in `folder` (its innermost frame is there): a
    KeyboardInterrupt a tool raised itself, not Ctrl-C, which is raised from a signal
    handler's frame."""
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return False
    where = Path(frames[-1].filename)
    return where.parent == folder or folder in where.parents
