"""toolproof in a team's own pytest suite (registered as a `pytest11` plug-in, so installed
is enabled):

    def test_retail_is_reliable(toolproof_store):
        result = toolproof.run("examples/retail", agent="oracle", trials=4, store=toolproof_store)
        assert result.pass_k(4) >= 0.9

A failing assertion on a run's metric prints the run's failing tasks with their first
failure, not just two numbers. Loading the plug-in imports nothing of toolproof's: a test
session that never runs a suite pays nothing for it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from toolproof.api.results import Measure


@pytest.fixture
def toolproof_store(tmp_path: Path) -> Path:
    """A results store of the test's own (a SQLite file in its temporary folder), so that a
    run neither reads nor resumes another test's trials."""
    return tmp_path / "toolproof.db"


def pytest_assertrepr_compare(
    config: pytest.Config, op: str, left: object, right: object
) -> list[str] | None:
    """A comparison with a run's metric (`result.pass_k(4) >= 0.9`) explained by the run's
    table: its counts and each failing task."""
    results = sys.modules.get("toolproof.api.results")
    if results is None:  # no run was made: no metric can be compared
        return None
    sides = [side for side in (left, right) if isinstance(side, results.Measure)]
    if not sides:
        return None
    measure: Measure = sides[0]
    compared = f"{float(left) if left is measure else left!r} {op} "
    compared += f"{float(right) if right is measure else right!r}"
    # pytest cuts an explanation past 8 lines unless -vv (or on CI): the first tasks then
    full = config.get_verbosity() >= 2 or bool(os.environ.get("CI"))
    table = measure.result.table() if full else measure.result.table(tasks=3, width=50)
    return [
        f"{compared}: {measure.name} of run {measure.result.run_id} is {float(measure):.3f}",
        *table.splitlines(),
    ]
