"""The judged example suite: sound by its code expectations alone, and run end to end with the
oracle and a judge model, a real local OpenAI-compatible server answering from a script."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from judges import JUDGE, judge_models, scripted, trial_requests, verdict
from servers import model_server

from toolproof.runner.validate import validate_suite
from toolproof.store import Store
from toolproof.suite import load_suite

JUDGED = Path(__file__).parents[2] / "examples" / "judged"
CLI = str(Path(sys.executable).parent / "toolproof")


def test_every_judged_task_has_code_expectations_and_is_sound_without_a_judge() -> None:
    suite = load_suite(JUDGED)
    assert 2 <= len(suite.tasks) <= 4
    checks = asyncio.run(validate_suite(suite))
    for check in checks:
        expect = check.task.spec.expect
        assert expect.rubric and expect.actions and expect.facts(), check.task.id
        assert check.ok and check.rubric_unjudged, (check.task.id, check.problems)
        assert check.oracle == "passed"
        assert all(outcome.startswith(("failed", "n/a")) for outcome in check.baselines.values())


@pytest.mark.slow
def test_the_oracle_on_the_judged_suite_is_graded_by_the_judge_naming_a_failed_criterion(
    tmp_path: Path,
) -> None:
    def judge(name: str, n: int) -> tuple[int, dict[str, Any]]:
        if name == "explains_reservation":
            return verdict(False, "the agent gave a date but never said the book is reserved")
        return verdict(True)

    given = {
        name: criterion.controls
        for task in load_suite(JUDGED).tasks
        for name, criterion in task.spec.expect.criteria().items()
        if criterion.controls is not None
    }
    assert sorted(given) == ["explains_reservation", "new_date"]
    config = tmp_path / "toolproof.yaml"
    db, out = tmp_path / "runs.db", tmp_path / "out.json"
    with model_server(scripted(judge, given=given)) as (url, seen):
        config.write_text(judge_models(url))
        args = ["--agent", "oracle", "--trials", "2", "--k", "1,2", "--judge-model", JUDGE]
        done = subprocess.run(
            [CLI, "run", str(JUDGED), *args, "--store", str(db), "--json", str(out)],
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "TOOLPROOF_CONFIG": str(config), "COLUMNS": "200"},
        )
    assert done.returncode == 0, done.stderr
    criteria = {"renew-dune": 2, "reserved-piranesi": 1, "late-fees": 1}
    trials = trial_requests(seen, given)
    assert len(trials) == 2 * sum(criteria.values())  # one call per criterion and trial
    assert len(seen.bodies) - len(trials) == 2 * sum(criteria.values())  # 2 controls each, once
    journal = Store(str(db))
    results = [r for _, r in journal.results(journal.resolve("latest"))]
    outcomes = {(r.task_id, r.trial): (r.outcome, r.reason) for r in results}
    for trial in (0, 1):
        assert outcomes[("renew-dune", trial)][0] == "passed"
        assert outcomes[("late-fees", trial)][0] == "passed"
        assert outcomes[("reserved-piranesi", trial)] == (
            "failed",
            "rubric: criterion 'explains_reservation' failed: the agent gave a date but never "
            "said the book is reserved",
        )
    summary = json.loads(out.read_text())
    per_call = (100 * 1.0 + 10 * 2.0) / 1_000_000
    assert summary["judge"] == {
        "model": JUDGE,
        "cost_usd": pytest.approx(16 * per_call),
        "undecided_criteria": 0,
        "failed_controls": {},
    }
    assert summary["counts"]["passed"] == 4 and summary["counts"]["failed"] == 2
    assert f"judge {JUDGE}: $0.0019, apart from the cost below" in done.stdout
