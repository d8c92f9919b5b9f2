"""The command line: parse, call the API, render. Exit 0 ok, 1 fell short, 2 bad input.

The commands live in `commands` (one module per group behind it). This module stays light,
so that `main` is running, and catching, before the heavy imports start: Ctrl-C in the first
seconds stops the command quietly too.
"""

from __future__ import annotations

import atexit
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

_closing: list[Callable[[], None]] | None = None
"""What a command that needs no teardown asked to close before the process ends: None until
`main` runs (a command called in process, as tests do, exits as usual)."""


def main() -> None:
    """Entry point: user errors and a results store that fails print one line, exit 2, no
    traceback; Ctrl-C exits 130; a reader that goes away (`| head`) ends no work."""
    global _closing
    _closing = []
    for name in ("stdout", "stderr"):
        if getattr(sys, name) is None:  # started with it closed: what is printed goes nowhere
            setattr(sys, name, open(os.devnull, "w", encoding="utf-8"))  # noqa: SIM115
    try:
        with ctrl_c_deferred():  # every command's module loads: most of the start-up
            from toolproof.cli.commands import app
            from toolproof.cli.output import keep_working_without_reader

        keep_working_without_reader()
        _run(app)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)
    except SystemExit as exc:
        if isinstance(exc.code, int | None):
            _leave(exc.code or 0)
        raise
    _leave(0)


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


def exit_without_teardown(close: Callable[[], None]) -> None:
    """Once the command is done (returned, or exited with a code), call `close` and end the
    process at once, without the interpreter's teardown: freeing, one by one, every object a
    read of 100,000 trials made takes a quarter of a second. For commands that start no
    thread and register nothing to run at exit; what they printed is flushed first."""
    if _closing is not None:
        _closing.append(close)


def _leave(code: int) -> None:
    """End the process now if the command asked to (`exit_without_teardown`), or when a
    thread the suite's code started is still running (a tool module's thread must not keep
    the command alive: the interpreter would wait for it forever); what is registered to
    run at exit runs first. Not while a profiler or a coverage tracer is watching: those
    write what they saw at exit."""
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


def _run(app: Callable[[], Any]) -> None:
    from rich.markup import escape
    from sqlalchemy.exc import DBAPIError

    from toolproof.cli.output import errors
    from toolproof.errors import SuiteError, ToolproofError
    from toolproof.redact import redacted
    from toolproof.store.journal import failure

    try:
        app()
    except SuiteError as exc:
        for problem in exc.problems:
            errors.print(redacted(str(problem)), markup=False, highlight=False)
        errors.print(f"[red]{len(exc.problems)} problem(s)")
        sys.exit(exc.exit_code)
    except ToolproofError as exc:  # no password of a URL in it, whoever wrote the message
        errors.print(f"[red]error:[/] {escape(redacted(str(exc)))}", highlight=False)
        sys.exit(exc.exit_code)
    except DBAPIError as exc:  # the database itself failed: damaged, locked, gone
        errors.print(f"[red]error:[/] the results store failed: {failure(exc)}", highlight=False)
        sys.exit(2)


def __getattr__(name: str) -> Any:
    """`toolproof.cli.app`, imported when first asked for."""
    if name == "app":
        from toolproof.cli.commands import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["app", "main"]
