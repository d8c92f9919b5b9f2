"""Cost in the terminal summary: $0 for a run that costs nothing, `unpriced` only when unknown."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

from rich.console import Console

from toolproof.report.terminal import summary_tables
from toolproof.runner.run import RunRequest, run_suite
from toolproof.store import Store
from toolproof.suite import Suite


def models_row(mini: Suite, tmp_path: Path, agent: str) -> str:
    store = Store(str(tmp_path / f"{agent}.db"))
    report = asyncio.run(run_suite(mini, RunRequest(agent=agent, trials=1, k=[1]), store))
    out = io.StringIO()
    Console(file=out, width=300, force_terminal=False).print(summary_tables(report.summary)[0])
    return next(line for line in out.getvalue().splitlines() if line.startswith("│ "))


def test_a_run_that_passed_nothing_has_no_cost_per_pass_rather_than_being_unpriced(
    mini: Suite, tmp_path: Path
) -> None:
    row = models_row(mini, tmp_path, "null")
    cells = [cell.strip() for cell in row.strip("│").split("│")]
    assert cells[1] == "0/2"
    assert cells[8:10] == ["$0.0000", "–"], row
    assert "unpriced" not in row


def test_a_run_that_passed_shows_its_cost_per_pass(mini: Suite, tmp_path: Path) -> None:
    row = models_row(mini, tmp_path, "oracle")
    cells = [cell.strip() for cell in row.strip("│").split("│")]
    assert cells[1] == "2/2"
    assert cells[8:10] == ["$0.0000", "$0.0000"], row
