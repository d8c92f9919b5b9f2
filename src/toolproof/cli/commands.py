"""Every command, registered on one Typer app in the order `toolproof --help` lists them.

One module per group of commands (`suite`: init, validate, run, regrade, schema; `results`: show,
runs, report, view, import; `ci`: gate, compare, verify; `telemetry`: import trace,
monitor; `serve`: serve-tools; `labels`: label, agreement), options
declared once in `options`, printing in `output`.
"""

from __future__ import annotations

from collections.abc import Callable

import typer

from toolproof.cli.ci import compare, gate, verify
from toolproof.cli.labels import agreement_command, label
from toolproof.cli.results import import_app, report, runs, show, view
from toolproof.cli.serve import serve_tools
from toolproof.cli.suite import init, regrade, run, schema, validate
from toolproof.cli.telemetry import monitor
from toolproof.version import __version__

app = typer.Typer(
    name="toolproof",
    help="Measure how reliably a tool-using LLM agent behaves in production.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # Plain help: Rich's option tables squeeze the help text into a narrow last column and cut
    # option names (`--parallel-tool-…`) at 80 columns; click's own layout wraps them whole.
    rich_markup_mode=None,
)


def version() -> None:
    """Print toolproof's version."""
    print(__version__)


COMMANDS: list[Callable[..., None]] = [init, validate, run, regrade, show, runs, schema]
MORE: list[Callable[..., None]] = [gate, compare, verify, monitor, report, view, version]
"""The commands in the order `toolproof --help` lists them (import and serve-tools between)."""

for command in COMMANDS:
    app.command()(command)
app.add_typer(import_app, name="import")
app.command("serve-tools")(serve_tools)
for command in MORE:
    app.command()(command)
app.command("label")(label)
app.command("agreement")(agreement_command)

__all__ = ["app"]
