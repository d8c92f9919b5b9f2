"""The command line: parse, call the API, render. Exit 0 ok, 1 fell short, 2 bad input.

The commands live in `commands` (one module per group behind it). This module stays light,
so that `main` is running, and catching, before the heavy imports start: Ctrl-C in the first
seconds stops the command quietly too.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

from toolproof.perf import allow_quick_exit, ctrl_c_deferred, leave


def main() -> None:
    """Entry point: user errors and a results store that fails print one line, exit 2, no
    traceback; Ctrl-C exits 130; a reader that goes away (`| head`) ends no work."""
    allow_quick_exit()
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
            leave(exc.code or 0)
        raise
    leave(0)


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
