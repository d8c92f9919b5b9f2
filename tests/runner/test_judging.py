"""Rubrics graded by a judge model: a real local OpenAI-compatible server answers as the
judge from a script, and `toolproof run` and `regrade` run as subprocesses against a real
SQLite store."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from judges import (
    JUDGE,
    RUBRIC,
    judged_run,
    run_status,
    scripted,
    stored,
    suite_with_rubric,
    toolproof,
    trial_requests,
    verdict,
)
from servers import completion, model_server

from toolproof.store import Store

# Slow: every test here runs the CLI as a process.
pytestmark = pytest.mark.slow


def test_a_rubric_every_criterion_passes_passes_and_its_verdicts_and_cost_are_recorded(
    tmp_path: Path,
) -> None:
    run = judged_run(tmp_path, lambda name, n: verdict(True))
    assert len(trial_requests(run.seen)) == 4  # 2 trials x 2 criteria, one call each
    assert len(run.seen.bodies) == 8  # and each criterion's 2 controls, once in the run
    results = run.results
    assert [r.outcome for r in results] == ["passed", "passed"]
    record = results[0].judge
    assert record is not None and record.model == JUDGE
    assert [(c.name, c.passed) for c in record.criteria] == [
        ("polite", True),
        ("names_status", True),
    ]
    criterion = record.criteria[1]
    assert "Tells the user that the order has shipped" in criterion.prompt
    assert "[tool call] get_order" in criterion.prompt and "Where is order B?" in criterion.prompt
    assert json.loads(criterion.answers[0])["verdict"] == "pass"
    per_call = (100 * 1.0 + 10 * 2.0) / 1_000_000
    records = [r.judge for r in results if r.judge is not None]
    charged = [c for j in records for c in j.controls if c.charged]
    assert sorted(c.name for c in charged) == ["names_status", "polite"]  # each paid for once
    for judged in records:  # its 2 criteria's calls and the controls it asked
        calls = 2 + 2 * sum(c.charged for c in judged.controls)
        assert (judged.tokens_input, judged.tokens_output) == (100 * calls, 10 * calls)
        assert judged.cost_usd == pytest.approx(calls * per_call)
    assert run.summary["judge"] == {
        "model": JUDGE,
        "cost_usd": pytest.approx(8 * per_call),
        "undecided_criteria": 0,
        "failed_controls": {},
    }
    assert run.summary["metrics"]["cost_usd"] == 0.0  # the oracle's own, the judge's apart
    assert f"judge {JUDGE}: $0.0010" in run.done.stdout
    assert "undecided" not in run.done.stdout


def test_a_failed_required_criterion_fails_the_trial_naming_it(tmp_path: Path) -> None:

    def judge(name: str, n: int) -> tuple[int, dict[str, Any]]:
        return verdict(name != "names_status", "the agent never said the order shipped")

    results = judged_run(tmp_path, judge).results
    assert [r.outcome for r in results] == ["failed", "failed"]
    assert results[0].reason == (
        "rubric: criterion 'names_status' failed: the agent never said the order shipped"
    )


def test_a_weighted_rubric_passes_above_its_threshold_despite_a_failed_criterion(
    tmp_path: Path,
) -> None:
    rubric = RUBRIC.replace("required: true", "weight: 3") + "      rubric_pass: 0.75\n"
    results = judged_run(tmp_path, lambda name, n: verdict(name != "polite"), rubric=rubric).results
    assert [r.outcome for r in results] == ["passed", "passed"]
    rubric_verdict = next(v for v in results[0].verdicts if v.grader == "rubric")
    assert rubric_verdict.reason == "score 0.75: passed despite polite"


def test_a_malformed_judge_answer_is_asked_again(tmp_path: Path) -> None:

    def judge(name: str, n: int) -> tuple[int, dict[str, Any]]:
        if n == 0:
            return 200, completion("Looks fine to me!")
        return verdict(True)

    run = judged_run(tmp_path, judge, "--concurrency", "1")
    results, seen = run.results, run.seen
    assert [r.outcome for r in results] == ["passed", "passed"]
    first = [r for r in results if r.judge and len(r.judge.criteria[0].answers) == 2]
    assert first and first[0].judge is not None
    assert first[0].judge.criteria[0].answers[0] == "Looks fine to me!"
    assert len(trial_requests(seen)) == 6  # the two criteria's first answers were malformed once


def test_answers_that_stay_malformed_are_an_infra_error_not_a_verdict(tmp_path: Path) -> None:
    reply = json.dumps({"verdict": "maybe", "explanation": "unsure"})
    run = judged_run(tmp_path, lambda name, n: (200, completion(reply)))
    results = run.results
    assert [r.outcome for r in results] == ["infra_error", "infra_error"]
    assert results[0].judge is None
    assert results[0].reason.startswith(
        f"judge {JUDGE} on criterion 'polite': verdict 'maybe' is neither 'pass' nor 'fail' "
        "(3 answers;"
    )
    assert run.summary["counts"]["infra_error"] == 2 and run.summary["counts"]["passed"] == 0


def test_a_judge_server_error_is_retried_and_then_an_infra_error(tmp_path: Path) -> None:

    def judge(name: str, n: int) -> tuple[int, dict[str, Any]]:
        if name == "polite" and n == 0:
            return 500, {"error": {"message": "overloaded", "type": "server_error"}}
        if name == "names_status":
            return 400, {"error": {"message": "bad judge request", "type": "invalid_request"}}
        return verdict(True)

    run = judged_run(tmp_path, judge, "--concurrency", "1")
    results, seen = run.results, run.seen
    assert [r.outcome for r in results] == ["infra_error", "infra_error"]
    assert "on criterion 'names_status'" in results[0].reason
    assert "bad judge request" in results[0].reason
    polite = [b for b in trial_requests(seen) if "(polite)" in b["messages"][-1]["content"]]
    assert len(polite) == 3  # the 500 was retried once, then each trial's call passed


def test_a_rubric_without_a_judge_model_is_a_usage_error_before_the_run(tmp_path: Path) -> None:
    suite = suite_with_rubric(tmp_path / "suite", "http://127.0.0.1:9/v1")
    db = tmp_path / "s.db"
    done = run_status(suite, db, tmp_path / "out.json")
    assert done.returncode == 2
    assert "task(s) status have a rubric, which a judge model grades: give --judge-model" in (
        done.stderr
    )
    assert "Traceback" not in done.stderr
    assert not db.exists() or Store(str(db)).runs() == []


def test_regrade_reuses_recorded_verdicts_and_rejudges_only_when_asked(tmp_path: Path) -> None:
    out, db = tmp_path / "out.json", tmp_path / "s.db"
    with model_server(scripted(lambda name, n: verdict(True))) as (url, seen):
        suite = suite_with_rubric(tmp_path / "suite", url)
        assert run_status(suite, db, out, "--judge-model", JUDGE).returncode == 0
        calls = len(seen.bodies)
        again = toolproof("regrade", "latest", "--store", str(db))
        assert again.returncode == 0, again.stderr
        assert "0 trial outcomes changed" in again.stdout
        assert len(seen.bodies) == calls  # no judge call: the recorded verdicts were used
    with model_server(scripted(lambda name, n: verdict(name != "polite", "curt"))) as (url, seen):
        changed = (suite / "suite.yaml").read_text().replace("Is polite", "Is warm and polite")
        (suite / "suite.yaml").write_text(
            re.sub(r"base_url: '[^']*'", f"base_url: '{url}'", changed)
        )
        stale = toolproof("regrade", "latest", "--store", str(db))
        assert stale.returncode == 2
        assert "has no judge verdicts for the task's current rubric: re-grade with --rejudge" in (
            stale.stderr
        )
        assert [r.outcome for r in stored(db)] == ["passed", "passed"]  # nothing written
        fresh = toolproof("regrade", "latest", "--store", str(db), "--rejudge")
        assert fresh.returncode == 0, fresh.stderr
        assert len(trial_requests(seen)) == 4
        assert len(seen.bodies) == 8  # each criterion's controls asked once in the regrade
    results = stored(db)
    assert [r.outcome for r in results] == ["failed", "failed"]
    assert results[0].reason == "rubric: criterion 'polite' failed: curt"


def test_validate_without_a_judge_never_calls_a_rubric_only_task_sound(tmp_path: Path) -> None:
    rubric_only = (
        "  - id: tone\n"
        "    user: {opening: 'Where is order B?'}\n"
        "    expect:\n"
        "      rubric: {polite: Is polite to the user}\n"
    )
    suite = suite_with_rubric(tmp_path / "suite", "http://127.0.0.1:9/v1")
    text = (suite / "suite.yaml").read_text()
    (suite / "suite.yaml").write_text(text.replace("defaults:", rubric_only + "defaults:"))
    only = toolproof("validate", str(suite), "--tasks", "tone")
    assert only.returncode == 1
    assert "the null agent passes it" in only.stderr
    assert "(its rubric was not judged: give --judge-model)" in only.stderr
    coded = toolproof("validate", str(suite), "--tasks", "status")
    assert coded.returncode == 0, coded.stderr
    assert "task 'status': its rubric was not judged (no judge model)" in coded.stderr
    assert "by code alone: 1 rubric(s) not judged" in coded.stdout


def test_validate_with_a_judge_judges_the_oracle_and_the_baselines(tmp_path: Path) -> None:
    def judge(name: str, n: int) -> tuple[int, dict[str, Any]]:
        return verdict(True)

    with model_server(scripted(judge)) as (url, seen):
        suite = suite_with_rubric(tmp_path / "suite", url)
        done = toolproof("validate", str(suite), "--tasks", "status", "--judge-model", JUDGE)
    assert done.returncode == 0, done.stderr
    assert "not judged" not in done.stdout + done.stderr
    assert len(seen.bodies) >= 2  # the oracle's two criteria at least (failed baselines stop)


def test_a_rubric_criterion_may_not_be_called_outcome(tmp_path: Path) -> None:
    suite = suite_with_rubric(
        tmp_path / "suite",
        "http://127.0.0.1:9/v1",
        "      must_say: [shipped]\n      rubric: {outcome: Is polite}\n",
    )
    done = toolproof("validate", str(suite))
    assert done.returncode == 2
    assert "suite.yaml:" in done.stderr and "criterion name 'outcome'" in done.stderr


def test_the_label_template_has_a_row_per_trial_and_rubric_criterion(tmp_path: Path) -> None:
    out, db = tmp_path / "out.json", tmp_path / "s.db"
    with model_server(scripted(lambda name, n: verdict(name == "polite", "no"))) as (url, _):
        suite = suite_with_rubric(tmp_path / "suite", url)
        assert run_status(suite, db, out, "--judge-model", JUDGE).returncode == 0
    template = tmp_path / "labels.csv"
    done = toolproof("label", "latest", "--export", str(template), "--store", str(db))
    assert done.returncode == 0, done.stderr
    rows = [line.split(",") for line in template.read_text().splitlines()[1:]]
    assert [(r[0], r[3], r[4], r[5]) for r in rows] == [
        (task, trial, criterion, automated)
        for task, trial in (("status", "0"), ("status", "1"))
        for criterion, automated in (
            ("outcome", "fail"),
            ("polite", "pass"),
            ("names_status", "fail"),
        )
    ]
