"""Blame and policy violations on stored trials: results stored without them still load, and
regrade computes them from the stored transcripts."""

from __future__ import annotations

import asyncio
from pathlib import Path

from support import write_files

from toolproof.runner.regrade import regrade_run
from toolproof.runner.run import RunRequest, run_suite
from toolproof.store import Store
from toolproof.suite import load_suite
from toolproof.summaries import stored_summary


def test_results_stored_without_blame_load_and_regrade_assigns_it(
    mini_dir: Path, tmp_path: Path
) -> None:
    store = Store(str(tmp_path / "s.db"))
    report = asyncio.run(run_suite(load_suite(mini_dir), RunRequest(trials=2, k=[1]), store))
    # as an older toolproof stored them: no blame, no policy statistics
    for row_id, result in store.results(report.run_id):
        conditions = {
            k: v for k, v in result.conditions.items() if k not in ("blame", "policy_violations")
        }
        store.replace(row_id, result.model_copy(update={"blame": None, "conditions": conditions}))
    before = stored_summary(store, report.run_id).models[0]
    assert before.policy is None and before.metrics["policy_adherence"] is None
    suite_text = (mini_dir / "suite.yaml").read_text()
    write_files(
        mini_dir, {"suite.yaml": suite_text.replace("must_say: [shipped]", "must_say: [delivered]")}
    )
    assert asyncio.run(regrade_run(load_suite(mini_dir), store, report.run_id)) == 2
    results = [r for _, r in store.results(report.run_id)]
    failed = [r for r in results if r.outcome == "failed"]
    assert len(failed) == 2
    for result in failed:
        assert result.blame is not None
        assert (result.blame.party, result.blame.rule) == ("agent", "expectation_failed")
        assert result.blame.reason == "must_say: not said: 'delivered'"
    assert all(r.blame is None for r in results if r.outcome == "passed")
    after = stored_summary(store, report.run_id).models[0]
    assert after.blame == {"agent": 2, "user_simulator": 0, "environment": 0, "grader": 0}
    assert after.policy is not None and after.policy.violations == {}
    assert after.metrics["policy_adherence"] == 1.0
