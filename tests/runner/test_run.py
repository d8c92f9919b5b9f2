"""Whole runs through the API: seeds, streaming to the store, resume by id, re-grading."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from support import write_files

from toolproof.errors import StoreError, UsageError
from toolproof.records.trial import TrialResult
from toolproof.report.terminal import summary_notes
from toolproof.runner.plan import derive_seed, plan
from toolproof.runner.regrade import regrade_run
from toolproof.runner.run import RunRequest, run_suite
from toolproof.store import Store
from toolproof.suite import Suite, load_suite
from toolproof.summaries import stored_summary


def test_seeds_derive_from_suite_seed_variant_task_and_trial() -> None:
    seed = derive_seed(7, "", "cancel", 2)
    assert seed == derive_seed(7, "", "cancel", 2)
    others = {
        derive_seed(8, "", "cancel", 2),
        derive_seed(7, "drift", "cancel", 2),
        derive_seed(7, "", "status", 2),
        derive_seed(7, "", "cancel", 3),
    }
    assert seed not in others and len(others) == 4
    assert 0 <= seed < 2**63


def test_plan_is_round_robin_so_partial_runs_stay_even(mini: Suite) -> None:
    specs = plan(mini.tasks, 2, 0)
    assert [(s.task_id, s.trial) for s in specs] == [
        ("cancel", 0),
        ("status", 0),
        ("cancel", 1),
        ("status", 1),
    ]


def test_a_trial_is_stored_before_the_caller_hears_of_it(mini: Suite, tmp_path: Path) -> None:
    store = Store(str(tmp_path / "s.db"))
    stored: list[bool] = []

    def on_result(result: TrialResult) -> None:
        done = store.done(store.runs()[0]["id"])
        stored.append((result.variant, result.model, result.task_id, result.trial) in done)

    report = asyncio.run(
        run_suite(mini, RunRequest(trials=3, concurrency=1), store, on_result=on_result)
    )
    # progress never counts a trial a kill could still lose (that trials are written as they
    # finish, not at the end, is what test_resume's SIGKILL checks)
    assert stored == [True] * 6
    assert report.summary.counts.passed == 6
    assert report.summary.metrics == report.summary.models[0].metrics
    assert report.summary.models[0].metrics["pass^3"] == 1.0
    with pytest.raises(StoreError):
        store.write(report.run_id, next(store.results(report.run_id))[1])


def test_same_request_on_a_finished_run_starts_a_new_one(mini: Suite, tmp_path: Path) -> None:
    store = Store(str(tmp_path / "s.db"))
    first = asyncio.run(run_suite(mini, RunRequest(trials=3), store))
    second = asyncio.run(run_suite(mini, RunRequest(trials=3), store))
    assert first.run_id != second.run_id and second.ran == 6


def test_k_above_trials_is_a_usage_error_before_any_trial(mini: Suite, tmp_path: Path) -> None:
    store = Store(str(tmp_path / "s.db"))
    with pytest.raises(UsageError, match="k=5 needs at least 5 trials"):
        asyncio.run(run_suite(mini, RunRequest(trials=3, k=[1, 5]), store))
    assert store.runs() == []


def test_resume_refuses_a_changed_suite(mini_dir: Path, tmp_path: Path) -> None:
    store = Store(str(tmp_path / "s.db"))
    report = asyncio.run(run_suite(load_suite(mini_dir), RunRequest(trials=3), store))
    (mini_dir / "policy.md").write_text("A different policy.\n")
    with pytest.raises(UsageError, match="different version"):
        asyncio.run(run_suite(load_suite(mini_dir), RunRequest(), store, resume=report.run_id))


def test_regrade_applies_current_expectations_to_stored_transcripts(
    mini_dir: Path, tmp_path: Path
) -> None:
    store = Store(str(tmp_path / "s.db"))
    report = asyncio.run(run_suite(load_suite(mini_dir), RunRequest(trials=3), store))
    assert report.summary.counts.passed == 6
    suite_text = (mini_dir / "suite.yaml").read_text()
    write_files(
        mini_dir, {"suite.yaml": suite_text.replace("must_say: [shipped]", "must_say: [delivered]")}
    )
    changed = asyncio.run(regrade_run(load_suite(mini_dir), store, report.run_id))
    assert changed == 3
    outcomes = {(r.task_id, r.outcome) for _, r in store.results(report.run_id)}
    assert outcomes == {("cancel", "passed"), ("status", "failed")}
    failed = next(r for _, r in store.results(report.run_id) if r.task_id == "status")
    assert failed.reason == "must_say: not said: 'delivered'"
    assert store.run(report.run_id).config.regraded_at is not None


def test_regrade_recomputes_every_derived_value_from_the_transcript(
    mini: Suite, tmp_path: Path
) -> None:
    """What an older toolproof stored (stale condition statistics, counts, costs) is
    replaced by what the transcript says now, so a fix to loop or recovery detection
    reaches stored runs."""
    store = Store(str(tmp_path / "s.db"))
    report = asyncio.run(run_suite(mini, RunRequest(trials=2, k=[1]), store))
    fresh = {r.task_id + str(r.trial): r for _, r in store.results(report.run_id)}
    for row_id, result in store.results(report.run_id):
        stale = {"failed": {"bogus": 3}, "recovered": {}, "looped": True, "faulted": True}
        store.replace(
            row_id,
            result.model_copy(
                update={"conditions": {**stale, "tool_errors": 9}, "tool_calls": 99, "turns": 0}
            ),
        )
    assert {r.conditions["looped"] for _, r in store.results(report.run_id)} == {True}
    assert asyncio.run(regrade_run(mini, store, report.run_id)) == 0
    for _, result in store.results(report.run_id):
        before = fresh[result.task_id + str(result.trial)]
        assert result.conditions == before.conditions
        assert (result.tool_calls, result.turns) == (before.tool_calls, before.turns)
    rows = store.outcomes(report.run_id)
    assert {row["tool_errors"] for row in rows} == {0}
    assert all(not row["conditions"]["looped"] for row in rows)


def test_the_suites_notes_are_shown_under_the_run_summary_and_kept_with_the_run(
    mini_dir: Path, tmp_path: Path
) -> None:
    suite_yaml = mini_dir / "suite.yaml"
    note = "12 nl assertions are left out: these numbers do not grade them."
    suite_yaml.write_text(
        suite_yaml.read_text(encoding="utf-8") + f"notes: [{note!r}]\n", encoding="utf-8"
    )
    store = Store(str(tmp_path / "s.db"))
    report = asyncio.run(run_suite(load_suite(mini_dir), RunRequest(trials=1, k=[1]), store))
    assert report.summary.notes == [note]
    assert summary_notes(stored_summary(store, report.run_id))[0] == note
    assert report.summary.as_json()["notes"] == [note]


def test_a_suite_without_notes_adds_none_to_the_summary(mini: Suite, tmp_path: Path) -> None:
    report = asyncio.run(run_suite(mini, RunRequest(trials=1, k=[1]), Store(str(tmp_path / "s"))))
    assert "notes" not in report.summary.as_json()
