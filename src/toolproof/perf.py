"""Where toolproof sets the interpreter's defaults aside, for speed or for a clean stop, in
one place: the garbage collector paused or told to collect less while a lot is built at
once, Ctrl-C held back while modules load, and the process ended without the interpreter's
teardown once a command that needs none is done. Domain modules call these by name and keep
no such machinery of their own; each helper says what it was measured to save."""

from __future__ import annotations

import atexit
import gc
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """Cyclic garbage collection paused while many objects that hold no reference cycles are
    built (a run's rows, their columns and hashes, a report's data): every collection would
    walk all of them again, a third of the time of reading a run of 100,000 trials and three
    times the time of building its report's data. Whatever is left to collect is collected
    once it resumes; nested pauses resume only at the outermost."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


@contextmanager
def fewer_collections() -> Iterator[None]:
    """While trials run, collect garbage less often and never scan what was built before
    (modules, the suite, the clients): with hundreds of trials in flight, Python's default
    collections stalled every trial, up to 0.3 s at a time and ~8% of the run in all
    (bench/headline.py). Memory stays flat: trials still free what they made."""
    thresholds = gc.get_threshold()
    with gc_frozen():
        gc.set_threshold(20_000, 20, 20)
        try:
            yield
        finally:
            gc.set_threshold(*thresholds)


@contextmanager
def gc_frozen() -> Iterator[None]:
    """Every object alive now left out of later collections until the block ends: a process
    forked inside it never touches (and so never copies) the parent's pages by collecting."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


@contextmanager
def ctrl_c_deferred() -> Iterator[None]:
    """Ctrl-C held back while modules load, then raised (KeyboardInterrupt) once they have:
    one raised while a C extension initializes can crash the interpreter (orjson's did, in
    about one start in twenty interrupted at 0.3 s), and one raised in an import's clean-up
    callback is ignored, so the command carried on as if no one had pressed it. Only where
    Ctrl-C raises KeyboardInterrupt (not where it is ignored or handled elsewhere), and only
    around toolproof's own imports: a suite's modules can still be interrupted."""
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield
        return
    pressed: list[int] = []
    try:
        signal.signal(signal.SIGINT, lambda number, _frame: pressed.append(number))
    except ValueError:  # not the main thread, where Ctrl-C is never raised anyway
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if pressed:
        raise KeyboardInterrupt


_closing: list[Callable[[], None]] | None = None
"""What a command that needs no teardown asked to close before the process ends: None until
the command line allows it (`allow_quick_exit`; a command called in process, as tests do,
exits as usual)."""


def allow_quick_exit() -> None:
    """From now on `exit_without_teardown` may end this process (the command line's `main`)."""
    global _closing
    _closing = []


def exit_without_teardown(close: Callable[[], None]) -> None:
    """Once the command is done (returned, or exited with a code), call `close` and end the
    process at once, without the interpreter's teardown: freeing, one by one, every object a
    read of 100,000 trials made takes a quarter of a second. For commands that start no
    thread and register nothing to run at exit; what they printed is flushed first."""
    if _closing is not None:
        _closing.append(close)


def leave(code: int) -> None:
    """End the process now if the command asked to (`exit_without_teardown`), or when a
    thread the suite's code started is still running (a tool module's thread must not keep
    the command alive: the interpreter would wait for it forever); what is registered to
    run at exit runs first. Not while a profiler or a coverage tracer is watching: those
    write what they saw at exit. Otherwise it returns and the process ends as usual."""
    left = [t for t in threading.enumerate() if not t.daemon and t is not threading.main_thread()]
    if not (_closing or left) or sys.getprofile() is not None or sys.gettrace() is not None:
        return
    for close in _closing or []:
        close()
    if left:
        atexit._run_exitfuncs()  # stops the suite's services and servers, as teardown would
    for stream in (sys.stdout, sys.stderr):  # None where the command started without one
        try:
            if stream is not None:
                stream.flush()
        except OSError:  # as the interpreter's own last flush would report it
            code = code or 120
    os._exit(code)
