"""Terminal output: progress while a run goes, tables when it ends."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from toolproof.results import TrialResult


class RunProgress:
    """A live bar: trials done of total, passed, failed, infra errors, ETA."""

    def __init__(self, console: Console) -> None:
        self.counts = {"passed": 0, "failed": 0, "infra_error": 0}
        self.progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("[green]{task.fields[passed]} passed"),
            TextColumn("[red]{task.fields[failed]} failed"),
            TextColumn("[yellow]{task.fields[infra]} infra"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console,
            transient=False,
        )
        self.task_id = self.progress.add_task("trials", total=0, passed=0, failed=0, infra=0)

    def start(self, total: int, done: int) -> None:
        self.progress.update(self.task_id, total=total, completed=done)
        self.progress.start()

    def advance(self, result: TrialResult) -> None:
        self.counts[result.outcome] += 1
        self.progress.update(
            self.task_id,
            advance=1,
            passed=self.counts["passed"],
            failed=self.counts["failed"],
            infra=self.counts["infra_error"],
        )

    def stop(self) -> None:
        self.progress.stop()


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def summary_tables(summary: dict[str, Any]) -> list[Table]:
    """The run's tables: headline metrics with intervals, tiers, then tasks."""
    counts = summary["counts"]
    head = Table(
        title=(
            f"{summary['suite']['name']} · {summary['agent']} · run {summary['run_id']}\n"
            f"{counts['total']} trials: {counts['passed']} passed, {counts['failed']} failed, "
            f"{counts['infra_error']} infra errors (counted as {summary['infra_errors']})"
        ),
        title_justify="left",
    )
    head.add_column("metric")
    head.add_column("value", justify="right")
    head.add_column("95% CI (bootstrap over tasks)", justify="right")
    for name, value in summary["metrics"].items():
        ci = summary["ci"].get(name)
        head.add_row(name, _fmt(value), f"{ci[0]:.3f} – {ci[1]:.3f}" if ci else "")
    tables = [head]
    if summary["tiers"]:
        tiers = Table(title="by tier (weighted by production weights)", title_justify="left")
        k = max(summary["k"])
        for column in ("tier", "tasks", "weight", "pass@1", f"pass^{k}"):
            tiers.add_column(column, justify="right")
        for tier, row in summary["tiers"].items():
            tiers.add_row(
                tier,
                _fmt(int(row["tasks"])),
                _fmt(row["weight"]),
                _fmt(row["pass@1"]),
                _fmt(row[f"pass^{k}"]),
            )
        tables.append(tiers)
    tasks = Table(title="tasks", title_justify="left")
    k = max(summary["k"])
    for column in ("task", "passed", "infra", "pass@1", f"pass^{k}", "first failure"):
        tasks.add_column(column, justify="left" if column in ("task", "first failure") else "right")
    for row in summary["tasks"]:
        tasks.add_row(
            row["id"],
            f"{row['passed']}/{row['trials']}",
            str(row["infra_error"]),
            _fmt(row["metrics"]["pass@1"]),
            _fmt(row["metrics"][f"pass^{k}"]),
            (row["failures"][0][:70] if row["failures"] else ""),
        )
    tables.append(tasks)
    return tables
