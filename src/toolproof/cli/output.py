"""What commands print and write: the consoles, the summary tables, JSON files, --fail-under."""

from __future__ import annotations

import sys
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape

from toolproof.ci.gate import flag_spec, limit_conditions
from toolproof.errors import UsageError
from toolproof.metrics.summary import RunSummary
from toolproof.report.json import write_json
from toolproof.report.terminal import summary_notes, summary_tables

console = Console() if sys.stdout.isatty() else Console(width=160)
errors = Console(stderr=True, soft_wrap=True, emoji=False)  # "file:100: ..." is no emoji code


def with_threshold_ks(ks: list[int] | None, thresholds: list[str] | None) -> list[int] | None:
    """The k values asked for, plus those --fail-under names (so the summary has them)."""
    extra = flag_spec(thresholds or [], min_flag="--fail-under").ks()
    if not extra:
        return ks
    return sorted(set(ks or []) | set(extra)) if ks else None


def finish(summary: RunSummary, json_path: Path | None, thresholds: list[str] | None) -> None:
    """Print the tables, write the JSON, apply --fail-under (the gate's `min` on this run);
    exit 1 when a threshold does not hold."""
    for table in summary_tables(summary):
        console.print(table)
    for note in summary_notes(summary):
        console.print(f"[yellow]note:[/] {escape(note)}", highlight=False)
    if json_path:
        write_json(summary.as_json(), json_path)
        console.print(f"wrote {json_path}")
    spec = flag_spec(thresholds or [], min_flag="--fail-under")
    if spec.is_empty():
        return
    if not summary.models:
        raise UsageError("--fail-under: the run has no finished trial, so nothing to check")
    broken = [c for c in limit_conditions(summary, spec, "--fail-under") if c.failed]
    for condition in broken:
        prefix = f"{condition.model}: " if condition.model else ""
        console.print(f"[red]fail-under: {escape(prefix + condition.detail)}", highlight=False)
    if broken:
        raise typer.Exit(1)
