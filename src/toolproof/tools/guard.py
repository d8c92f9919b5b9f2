"""Suite code that must neither hang a command nor end it: a Python tool's call, a Python
agent's turn, a suite module's import.

A synchronous tool called on the main thread runs there, under a real-time timer
(`call_with_deadline`): still running at its deadline, it is interrupted by SIGALRM with
`Overran`, even inside `time.sleep` or a loop that never returns. That costs two `setitimer`
calls (a few microseconds a call in all) where a hop to another thread costs 40. Off the
main thread, where no signal arrives, the call runs on a daemon thread of its own
(`in_thread`) and is abandoned at the deadline.

An agent's turn has a deadline too (`within_turn`): asyncio's timeout ends a turn that
awaits past it, and a watchdog thread interrupts one that blocks the event loop (a
`time.sleep` in async code) with SIGALRM, raised only into the overdue turn's own task.

While suite code runs (and, during a run, while any trial runs: `suite_code_guarded`), the
functions that would end, signal or interrupt the harness's own process raise instead:
`os._exit` and `posix._exit` raise `ProcessExit`; `os.abort`, `os.kill`/`os.killpg` of its
own process, `signal.raise_signal`, `signal.pthread_kill`, `_thread.interrupt_main`, and any
change to SIGALRM or the real-time timer raise `Refused`. The trial whose code called one
fails; the run goes on. A child the suite's code forks ends when it returns to the harness,
and a thread it started that dies of one of these is reported in one line. What this cannot
reach: a C extension or `ctypes` calling the C library directly, or a signal sent by another
process; a tool that swallows every interruption in a loop on the main thread. Tools that must
not be trusted that far run with `isolation: process`.
"""

from __future__ import annotations

import _thread
import asyncio
import contextvars
import importlib
import os
import posix
import signal
import sys
import threading
import time
import traceback
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, NoReturn, TypeVar

from toolproof.format import inert

T = TypeVar("T")

REPEAT_S = 0.25
"""After its deadline, a call that caught `Overran` and went on is interrupted again this
often, until it gives up."""


class Overran(BaseException):
    """Raised into suite code that is still running at its deadline (a BaseException, so
    that the code's own `except Exception` does not swallow it)."""


class TurnOverran(Overran):
    """Raised into an agent's turn that blocks the event loop past its deadline."""


class ProcessExit(BaseException):
    """Raised by `os._exit` called from suite code while it is refused."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


class Refused(BaseException):
    """Raised by a function that would signal, interrupt or abort the harness's own process
    (or take its timer), called while suite code runs."""

    def __init__(self, what: str) -> None:
        super().__init__(f"{what} is refused while trials run")
        self.what = what


# ---------------------------------------------------------------- os._exit and its kin

_real_exit = os._exit
_real_posix_exit = posix._exit
_real_abort = os.abort
_real_kill = os.kill
_real_killpg = os.killpg
_real_raise_signal = signal.raise_signal
_real_pthread_kill = signal.pthread_kill
_real_interrupt_main = _thread.interrupt_main
_real_signal = signal.signal
_real_setitimer = signal.setitimer
_real_alarm = signal.alarm
_refusing = 0
_refusing_lock = threading.Lock()
_pid = os.getpid()


def _in_harness() -> bool:
    """Whether this is the process the guard was set in (not a child the suite forked)."""
    return os.getpid() == _pid


def _refused_exit(status: int) -> NoReturn:
    if not _in_harness():  # a child forked by the suite's code ends as usual
        _real_exit(status)
    if _refusing or threading.current_thread() is not threading.main_thread():
        raise ProcessExit(status)
    _real_exit(status)  # the harness's own, once no suite code runs


def _name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return str(signum)


def _refused_abort() -> NoReturn:
    if not _in_harness():
        _real_abort()
    raise Refused("os.abort()")


def _refused_kill(pid: int, signum: int) -> None:
    if signum and _in_harness() and pid in (0, _pid, -os.getpgrp()):
        raise Refused(f"os.kill(its own process, {_name(signum)})")
    _real_kill(pid, signum)


def _refused_killpg(group: int, signum: int) -> None:
    if signum and _in_harness() and group in (0, os.getpgrp()):
        raise Refused(f"os.killpg(its own process group, {_name(signum)})")
    _real_killpg(group, signum)


def _refused_raise_signal(signum: int) -> None:
    if _in_harness():
        raise Refused(f"signal.raise_signal({_name(signum)})")
    _real_raise_signal(signum)


def _refused_pthread_kill(thread_id: int, signum: int) -> None:
    if signum and _in_harness():
        raise Refused(f"signal.pthread_kill({_name(signum)})")
    _real_pthread_kill(thread_id, signum)


def _refused_interrupt_main(signum: int = signal.SIGINT) -> None:
    if _in_harness():
        raise Refused("_thread.interrupt_main()")
    _real_interrupt_main(signal.Signals(signum))


def _refused_signal(signum: int, handler: Any) -> Any:
    if signum == signal.SIGALRM and _in_harness():
        raise Refused("signal.signal(SIGALRM)")
    return _real_signal(signum, handler)


def _refused_setitimer(which: int, seconds: float, interval: float = 0.0) -> tuple[float, float]:
    if which == signal.ITIMER_REAL and _in_harness():
        raise Refused("signal.setitimer(ITIMER_REAL)")
    return _real_setitimer(which, seconds, interval)


def _refused_alarm(seconds: int) -> int:
    if _in_harness():
        raise Refused("signal.alarm()")
    return _real_alarm(seconds)


_PATCHES: tuple[tuple[Any, str, Any, Any], ...] = (
    (os, "_exit", _refused_exit, _real_exit),
    (posix, "_exit", _refused_exit, _real_posix_exit),
    (os, "abort", _refused_abort, _real_abort),
    (os, "kill", _refused_kill, _real_kill),
    (os, "killpg", _refused_killpg, _real_killpg),
    (signal, "raise_signal", _refused_raise_signal, _real_raise_signal),
    (signal, "pthread_kill", _refused_pthread_kill, _real_pthread_kill),
    (_thread, "interrupt_main", _refused_interrupt_main, _real_interrupt_main),
    (signal, "signal", _refused_signal, _real_signal),
    (signal, "setitimer", _refused_setitimer, _real_setitimer),
    (signal, "alarm", _refused_alarm, _real_alarm),
)


_threads_before = 0
"""How many threads there were when suite code began to run (the watchdog not counted)."""
_lingering = False
"""Whether threads the suite's code started still ran when it last stopped running."""


def _refuse_exits() -> None:
    global _refusing, _pid, _threads_before
    with _refusing_lock:
        if _refusing == 0:
            _pid = os.getpid()
            _threads_before = threading.active_count() - len(_watchdog)
            for module, name, refused, _ in _PATCHES:
                setattr(module, name, refused)
        _refusing += 1


def _allow_exits() -> None:
    global _refusing, _lingering
    if not _in_harness():  # a child the suite's code forked, back in the harness: it ends
        _real_exit(0)
    with _refusing_lock:
        _refusing -= 1
        if _refusing == 0:
            _lingering = threading.active_count() - len(_watchdog) > _threads_before
            for module, name, _, real in _PATCHES:
                if _lingering and real in (_real_exit, _real_posix_exit):
                    continue  # a thread of the suite's code still runs: exits stay refused to it
                setattr(module, name, real)


@contextmanager
def exits_refused() -> Iterator[None]:
    """The process's exit, signal and timer functions refused while suite code runs under
    this (counted, so that calls on several threads at once restore them only when the last
    one ends)."""
    _refuse_exits()
    try:
        yield
    finally:
        _allow_exits()


def _thread_ended(args: threading.ExceptHookArgs) -> None:
    """A thread the suite's code started died: one line, never a traceback over the run's
    output (a refused `os._exit` in a tool's thread lands here)."""
    if args.exc_type is SystemExit:
        return
    name = args.thread.name if args.thread is not None else "a thread"
    exc = args.exc_value
    if isinstance(exc, ProcessExit):
        what = f"os._exit({exc.code!r}) refused"
    elif isinstance(exc, Refused):
        what = f"{exc.what} refused"
    else:
        what = f"{args.exc_type.__name__}: {exc}".strip().rstrip(":")
    with suppress(Exception):
        line = inert(f"thread {name} of the suite's code ended: {what}", layout=False)
        sys.stderr.write(f"warning: {line}\n")


@contextmanager
def suite_code_guarded() -> Iterator[None]:
    """For as long as trials run: exits, signals and the timer refused to suite code (a
    thread a tool left running included), its threads' deaths told in one line, and the
    alarm handler that enforces deadlines installed."""
    _refuse_exits()
    hook = threading.excepthook
    threading.excepthook = _thread_ended
    try:
        _install_alarm()
        yield
    finally:
        _allow_exits()
        if not _lingering:  # else their end is still told in one line
            threading.excepthook = hook


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
    being disarmed). TurnOverran into an agent's turn that blocks the loop past its own."""
    if _deadline is not None and time.monotonic() >= _deadline:
        if frame is None or frame.f_code not in _OWN_CODE:
            raise Overran
        return
    if _overdue:
        try:
            task = asyncio.current_task()
        except RuntimeError:  # no loop runs on this thread
            task = None
        if task is not None and task in _overdue:
            raise TurnOverran
        return
    if callable(_other_alarm):
        _other_alarm(signum, frame)


def _install_alarm() -> None:
    """Our SIGALRM handler, where signals can reach us (the main thread)."""
    global _other_alarm
    if can_interrupt() and _handler_of(signal.SIGALRM) is not _on_alarm:
        _other_alarm = _real_signal(signal.SIGALRM, _on_alarm)


def call_with_deadline(func: Callable[..., Any], kwargs: dict[str, Any], seconds: float) -> Any:
    """`func(**kwargs)` on the main thread with `os._exit` refused, interrupted by Overran
    once it has run `seconds`, and again every REPEAT_S until it ends. A timer someone else
    had set is put back afterwards, less the time that went by. (Plain code, no context
    managers: this runs on every synchronous tool call.)"""
    global _deadline, _other_alarm
    if _handler_of(signal.SIGALRM) is not _on_alarm:
        _other_alarm = _real_signal(signal.SIGALRM, _on_alarm)
    outer = _deadline
    started = time.monotonic()
    _deadline = started + seconds
    left, every = _real_setitimer(signal.ITIMER_REAL, seconds, REPEAT_S)
    _refuse_exits()
    try:
        return func(**kwargs)
    finally:
        _allow_exits()
        _deadline = outer
        if left:
            left = max(left - (time.monotonic() - started), 1e-6)
        _real_setitimer(signal.ITIMER_REAL, left, every)


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
        if not _in_harness():  # a child the suite's code forked: it ends here
            _real_exit(0)
        with suppress(RuntimeError):  # the loop is closed: no one waits any more
            loop.call_soon_threadsafe(settle, *outcome)

    threading.Thread(target=work, name="toolproof-tool", daemon=True).start()
    try:
        return await asyncio.wait_for(done, seconds)
    except TimeoutError:
        raise Overran from None


# ---------------------------------------------------------------- an agent's turn

GRACE_S = 1.0
"""How long past its deadline a turn may keep the event loop blocked before the watchdog
interrupts it with a signal (a turn that awaits is cancelled at the deadline itself)."""
WATCH_S = 0.1
"""How often the watchdog looks for overdue turns: a turn ends at most this late."""

_turns: dict[object, tuple[float, asyncio.Task[Any], int, asyncio.AbstractEventLoop]] = {}
"""The turns in flight: token -> (their deadline, the turn's task, its thread, its loop)."""
_overdue: set[asyncio.Task[Any]] = set()
_cancelled: dict[asyncio.Task[Any], int] = {}
"""Cancellations the watchdog made of each overdue turn's task."""
_watchdog: list[threading.Thread] = []


def _watch() -> None:
    """Forever, on a daemon thread: every turn past its deadline is cancelled (again each
    round, should it swallow the cancellation) and, past its grace too, interrupted by
    SIGALRM on the main thread when it blocks the loop there. Kept off the turn's own path,
    so that a turn costs a dict entry, not a timer."""
    main = threading.main_thread().ident
    while True:
        time.sleep(WATCH_S)
        now = time.monotonic()
        for token, (deadline, task, thread, loop) in list(_turns.items()):
            if now < deadline:
                continue
            with suppress(RuntimeError):  # the loop has closed
                loop.call_soon_threadsafe(_cancel, token, task)
            if now >= deadline + GRACE_S and thread == main:
                _overdue.add(task)
                with suppress(OSError, ValueError):
                    _real_pthread_kill(thread, signal.SIGALRM)


def _cancel(token: object, task: asyncio.Task[Any]) -> None:
    """On the turn's loop: cancel it, if it is still the same turn."""
    if token in _turns and not task.done():
        _cancelled[task] = _cancelled.get(task, 0) + 1
        task.cancel()


def _watching() -> None:
    if not _watchdog:
        watchdog = threading.Thread(target=_watch, name="toolproof-turns", daemon=True)
        _watchdog.append(watchdog)
        watchdog.start()
        _install_alarm()


async def within_turn(turn: Awaitable[T], seconds: float) -> T:
    """Await an agent's turn for at most `seconds` (give or take WATCH_S), with the
    process's exit, signal and timer functions refused: one that awaits past them is
    cancelled, one that blocks the loop is interrupted; either ends as `TurnOverran`. A
    child the turn's code forked ends when it returns here."""
    task = asyncio.current_task()
    if task is None:  # no task to cancel: asyncio's own timeout, which needs none
        async with asyncio.timeout(seconds):
            return await turn
    if not _watchdog:
        _watching()
    token = object()
    _turns[token] = (time.monotonic() + seconds, task, threading.get_ident(), task.get_loop())
    _refuse_exits()
    try:
        return await turn
    except asyncio.CancelledError:
        if task not in _cancelled:
            raise
        raise TurnOverran from None
    finally:
        _allow_exits()  # in a child the turn forked: ends it
        del _turns[token]
        if _overdue:
            _overdue.discard(task)
        for _ in range(_cancelled.pop(task, 0) if _cancelled else 0):
            task.uncancel()


def pressed(exc: BaseException) -> bool:
    """Whether a KeyboardInterrupt or a cancellation came from outside the suite's code:
    Ctrl-C (raised from a signal handler's frame) or the run cancelling the trial."""
    if isinstance(exc, asyncio.CancelledError):
        task = asyncio.current_task()
        return task is not None and task.cancelling() > 0
    if not isinstance(exc, KeyboardInterrupt):
        return False
    frames = traceback.extract_tb(exc.__traceback__)
    return bool(frames) and frames[-1].name in ("_on_sigint", "_pressed")


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
