"""Options and arguments the commands share, each declared once, and their parsers."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from toolproof.errors import UsageError
from toolproof.metrics.summary import InfraPolicy

StoreOpt = Annotated[
    str | None, typer.Option("--store", help="SQLAlchemy URL or SQLite file [./toolproof.db].")
]
JsonOpt = Annotated[Path | None, typer.Option("--json", help="Write the summary as JSON here.")]
KOpt = Annotated[str | None, typer.Option("--k", help="k values, comma-separated: 1,5,10.")]
FailUnderOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--fail-under",
        help="METRIC=VALUE: exit 1 when the metric is below it (the gate's --min; any metric "
        "the gate accepts).",
    ),
]
InfraOpt = Annotated[
    str,
    typer.Option(
        "--infra-errors",
        help="Count infra errors as failures ('fail') or leave them out ('exclude').",
    ),
]
SuiteArg = Annotated[Path, typer.Argument(help="Suite folder or its suite.yaml.")]
TasksOpt = Annotated[str | None, typer.Option("--tasks", help="Task ids or tags.")]
FaultsOpt = Annotated[str | None, typer.Option(help="Fault profile of the suite.")]
DriftOpt = Annotated[str | None, typer.Option(help="Schema drift variant of the suite.")]
SeedOpt = Annotated[int | None, typer.Option(help="Suite seed.")]
RUN_HELP = "A run: its id, the start of it, or 'latest'."


def parse_k(text: str | None, flag: str = "--k") -> list[int] | None:
    """'1,5,10' -> [1, 5, 10]; None when not given."""
    if not text:
        return None
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise UsageError(f"{flag} {text!r}: expected positive integers such as 1,5,10") from None
    if not values or any(v < 1 for v in values):
        raise UsageError(f"{flag} {text!r}: expected positive integers such as 1,5,10")
    return values


def parse_infra(text: str) -> InfraPolicy:
    if text not in ("fail", "exclude"):
        raise UsageError(f"--infra-errors {text!r}: use 'fail' or 'exclude'")
    return "fail" if text == "fail" else "exclude"


def parse_pair(flag: str, text: str) -> tuple[str, str]:
    """'KEY=VALUE' -> ('KEY', 'VALUE')."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise UsageError(f"{flag} {text!r}: expected KEY=VALUE")
    return key.strip(), value.strip()
