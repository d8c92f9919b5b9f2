"""summarize_run: counts, the infra-error policy, metrics, intervals and per-task rows."""

from __future__ import annotations

from typing import Any

import pytest
from rows import trial, trials

from toolproof.errors import MetricError
from toolproof.metrics.breakdown import TaskMeta
from toolproof.metrics.stats import bootstrap_ci
from toolproof.metrics.summary import summarize_run


def _row(task_id: str, trial: int, outcome: str, reason: str | None = None) -> dict[str, Any]:
    return {
        "task_id": task_id,
        "trial": trial,
        "outcome": outcome,
        "reason": reason,
        # what a stored trial also carries; the pass^k family never reads it
        "cost_usd": 0.01,
        "tokens_input": 100,
        "tokens_output": 20,
        "duration_s": 1.0,
        "model_latency_s": [0.5],
        "tool_calls": 2,
        "turns": 1,
    }


# Rows in storage order, not trial order:
#   a: trials 0..3 = passed, failed, passed, infra_error
#   b: trials 0..3 = passed x4
#   c: trials 0..3 = failed, failed, passed, infra_error
ROWS = [
    _row("a", 2, "passed", "ignored: passed trials list no failure"),
    _row("a", 0, "passed"),
    _row("a", 3, "infra_error", "endpoint timed out"),
    _row("a", 1, "failed", "wrong total"),
    _row("b", 3, "passed"),
    _row("b", 1, "passed"),
    _row("b", 0, "passed"),
    _row("b", 2, "passed"),
    _row("c", 1, "failed", "refund not issued"),
    _row("c", 3, "infra_error"),
    _row("c", 0, "failed", "refund not issued"),
    _row("c", 2, "passed"),
]
METAS = [
    TaskMeta("a", tags=("refunds",), tools={"refund": (2, 3.0)}),
    TaskMeta("b", tags=("refunds", "lookup"), tools={"refund": (2, 1.0), "find": (1, None)}),
    TaskMeta("c", tags=("lookup",), tools={}),
]


def test_counts_are_reported_whatever_the_policy() -> None:
    expected = {"passed": 7, "failed": 3, "infra_error": 2, "total": 12}
    for policy in ("fail", "exclude"):
        summary = summarize_run(ROWS, METAS, [2], policy)
        assert summary["counts"] == expected
        assert summary["infra_errors"] == policy
        assert summary["k"] == [2]


def test_infra_errors_count_as_failures_under_fail_policy() -> None:
    metrics = summarize_run(ROWS, METAS, [2], "fail")["metrics"]
    # a: T,F,T,F (n=4, c=2); b: n=4, c=4; c: F,F,T,F (n=4, c=1)
    # pass@1 = (2/4 + 1 + 1/4) / 3 = 1.75 / 3
    assert metrics["pass@1"] == pytest.approx(1.75 / 3)
    # pass^2 = (C(2,2)/C(4,2) + 1 + C(1,2)/C(4,2)) / 3 = (1/6 + 1 + 0) / 3 = 7/18
    assert metrics["pass^2"] == pytest.approx(7 / 18)
    # pass@2 = ((1 - C(2,2)/6) + 1 + (1 - C(3,2)/6)) / 3 = (5/6 + 1 + 1/2) / 3 = 7/9
    assert metrics["pass@2"] == pytest.approx(7 / 9)
    # strict (trials 0 and 1): a T,F; b T,T; c F,F -> 1/3
    assert metrics["pass^2_strict"] == pytest.approx(1 / 3)
    # 10.5/18 - 7/18
    assert metrics["reliability_tax@2"] == pytest.approx(7 / 36)


def test_infra_errors_are_dropped_under_exclude_policy() -> None:
    metrics = summarize_run(ROWS, METAS, [2], "exclude")["metrics"]
    # a: T,F,T (n=3, c=2); b: n=4, c=4; c: F,F,T (n=3, c=1)
    # pass@1 = (2/3 + 1 + 1/3) / 3 = 2/3
    assert metrics["pass@1"] == pytest.approx(2 / 3)
    # pass^2 = (C(2,2)/C(3,2) + 1 + C(1,2)/C(3,2)) / 3 = (1/3 + 1 + 0) / 3 = 4/9
    assert metrics["pass^2"] == pytest.approx(4 / 9)
    # pass@2 = ((1 - C(1,2)/3) + 1 + (1 - C(2,2)/3)) / 3 = (1 + 1 + 2/3) / 3 = 8/9
    assert metrics["pass@2"] == pytest.approx(8 / 9)
    # 2/3 - 4/9
    assert metrics["reliability_tax@2"] == pytest.approx(2 / 9)


def test_exclude_policy_keeps_the_remaining_trials_in_order() -> None:
    rows = [
        _row("t", 0, "infra_error"),
        _row("t", 1, "passed"),
        _row("t", 2, "failed"),
        _row("t", 3, "passed"),
    ]
    # exclude: P,F,P -> the first trial passed (strict pass^1 = 1), the first two did not (0)
    # fail: I,P,F,P -> the first trial is a failure (strict pass^1 = 0)
    assert summarize_run(rows, [], [1, 2], "exclude")["metrics"]["pass^1_strict"] == 1.0
    assert summarize_run(rows, [], [1, 2], "fail")["metrics"]["pass^1_strict"] == 0.0
    assert summarize_run(rows, [], [2], "exclude")["metrics"]["pass^2_strict"] == 0.0


def test_exclude_leaving_a_task_without_trials_is_an_error() -> None:
    rows = [*ROWS, _row("d", 0, "infra_error"), _row("d", 1, "infra_error")]
    with pytest.raises(MetricError, match="'d' has no trial left"):
        summarize_run(rows, METAS, [1], "exclude")
    # under fail the same rows are two failures
    summary = summarize_run(rows, METAS, [1], "fail")
    assert next(t for t in summary["tasks"] if t["id"] == "d")["metrics"]["pass@1"] == 0.0


def test_k_larger_than_a_tasks_trials_is_an_error() -> None:
    with pytest.raises(MetricError, match="k=5"):
        summarize_run(ROWS, METAS, [5], "fail")
    # a and c have only 3 trials once infra errors are excluded
    with pytest.raises(MetricError, match=r"k=4 .* task '(a|c)' has 3"):
        summarize_run(ROWS, METAS, [4], "exclude")
    summarize_run(ROWS, METAS, [4], "fail")  # 4 trials each


def test_per_task_rows_are_sorted_with_trials_passes_and_unique_failures() -> None:
    tasks = summarize_run(ROWS, METAS, [2], "fail")["tasks"]
    assert [t["id"] for t in tasks] == ["a", "b", "c"]
    a, b, c = tasks
    assert (a["trials"], a["passed"], a["infra_error"]) == (4, 2, 1)
    assert (b["trials"], b["passed"], b["infra_error"]) == (4, 4, 0)
    assert (c["trials"], c["passed"], c["infra_error"]) == (4, 1, 1)
    # reasons of non-passed trials, sorted, each once; a passed trial's reason is not a failure
    assert a["failures"] == ["endpoint timed out", "wrong total"]
    assert b["failures"] == []
    assert c["failures"] == ["refund not issued"]


def test_per_task_rows_under_exclude_count_only_kept_trials() -> None:
    a = summarize_run(ROWS, METAS, [2], "exclude")["tasks"][0]
    # one infra error dropped from 4 trials; still reported as a count
    assert (a["trials"], a["passed"], a["infra_error"]) == (3, 2, 1)


def test_per_task_metrics_are_hand_computed() -> None:
    a = summarize_run(ROWS, METAS, [2], "fail")["tasks"][0]
    names = ("pass@1", "pass@2", "pass^2", "pass^2_strict")
    # a: T,F,T,F -> pass@1 2/4; pass@2 = 1 - C(2,2)/C(4,2) = 5/6; pass^2 = 1/6; strict T,F -> 0
    assert {name: a["metrics"][name] for name in names} == {
        "pass@1": 0.5,
        "pass@2": pytest.approx(5 / 6),
        "pass^2": pytest.approx(1 / 6),
        "pass^2_strict": 0.0,
    }


def test_confidence_intervals_cover_pass_at_1_and_each_pass_hat_k() -> None:
    summary = summarize_run(ROWS, METAS, [1, 2], "fail", seed=5)
    for name in ("pass@1", "pass^1", "pass^2"):
        low, high = summary["ci"][name]
        assert low <= summary["metrics"][name] <= high
    # no failed tool call, no drift variant, no load level: not measured, so no interval
    for name in ("recovery_rate", "corrective_action", "drift_robustness", "completion_under_load"):
        assert summary["metrics"][name] is None and summary["ci"][name] is None
    # the bootstrap is over per-task values: a 2/4, b 4/4, c 1/4
    assert summary["ci"]["pass@1"] == list(bootstrap_ci([0.5, 1.0, 0.25], seed=5))


def test_same_seed_gives_the_same_summary() -> None:
    assert summarize_run(ROWS, METAS, [2], seed=3) == summarize_run(ROWS, METAS, [2], seed=3)


def test_breakdowns_use_per_task_metrics() -> None:
    summary = summarize_run(ROWS, METAS, [2], "fail")
    # tier 2: a weight 3 (pass@1 0.5), b weight 1 (pass@1 1.0) -> (1.5 + 1.0) / 4 = 0.625
    assert summary["tiers"]["2"]["pass@1"] == pytest.approx(0.625)
    # tier 1: only b (tool without weight counts 1) -> 1.0; c has no tools
    assert summary["tiers"]["1"]["pass@1"] == 1.0
    assert summary["tiers"]["1"]["tasks"] == 1.0
    # tag lookup: b (1.0) and c (0.25) -> 0.625
    assert summary["tags"]["lookup"]["pass@1"] == pytest.approx(0.625)


def test_no_rows_gives_zero_counts_and_no_model_entries() -> None:
    summary = summarize_run([], [], [1])
    assert summary["counts"] == {"passed": 0, "failed": 0, "infra_error": 0, "total": 0}
    assert summary["models"] == []


def test_a_partial_run_leaves_tasks_without_trials_out_of_the_breakdowns() -> None:
    rows = [_row("a", 0, "passed"), _row("a", 1, "failed", "wrong total")]
    metas = [
        TaskMeta("a", tags=("refunds",), tools={"refund": (1, None)}),
        TaskMeta("not-run-yet", tags=("refunds",), tools={"refund": (1, None)}),
    ]
    summary = summarize_run(rows, metas, [1], partial=True)
    # only a counts: pass@1 = 1/2
    assert summary["tiers"]["1"]["pass@1"] == 0.5
    assert summary["tags"]["refunds"]["pass@1"] == 0.5


def test_one_task_gives_no_interval_rather_than_a_point() -> None:
    # Over a single task the bootstrap can only redraw that task: a zero-width "interval"
    # would claim a certainty the run does not have.
    single = summarize_run([r for r in ROWS if r["task_id"] == "c"], METAS, [2], "fail")
    assert single["metrics"]["pass@1"] == pytest.approx(0.25)
    assert single["ci"]["pass@1"] is None and single["ci"]["pass^2"] is None
    both = summarize_run([r for r in ROWS if r["task_id"] != "b"], METAS, [2], "fail")
    low, high = both["ci"]["pass@1"]
    assert low < both["metrics"]["pass@1"] < high


# ---------------------------------------------------------------- the score is what it says


def test_the_score_takes_pass_hat_k_at_its_own_k_even_when_the_run_did_not_ask_for_it() -> None:
    rows = trials("a", "", "PPPF") + trials("b", "", "PPPP")
    summary = summarize_run(rows, [], [1], score={"k": 3})
    reliability = summary["models"][0]["reliability"]
    assert "pass^3" not in summary["metrics"]  # not asked for, still computed for the score
    assert reliability["components"]["pass^k"] == pytest.approx((0.25 + 1.0) / 2)
    too_few = summarize_run(rows, [], [1], score={"k": 5})["models"][0]["reliability"]
    assert too_few["components"]["pass^k"] is None
    assert too_few["reliability_score"] is None
    assert too_few["notes"] == [
        "pass^k is missing: pass^5 needs 5 trials of every task; the fewest here is 4"
    ]


def test_a_score_of_one_part_says_so_and_why_each_part_is_missing() -> None:
    reliability = summarize_run(trials("a", "", "PP"), [], [1, 2])["models"][0]["reliability"]
    assert reliability["reliability_score"] == 1.0
    assert reliability["missing"] == ["recovery_rate", "completion_under_load", "drift_robustness"]
    # a run that did not store what its suite declares is told nothing it could not check
    assert reliability["notes"] == [
        "built from pass^k alone; not measured: recovery_rate (no faults injected and no tool "
        "call failed), completion_under_load (no load level run), drift_robustness (no drift "
        "variant run)"
    ]


def test_the_full_profile_is_suggested_only_for_parts_the_suite_can_measure() -> None:
    rows = trials("a", "", "PP") + trials("a", "drift:v2", "PF")

    def note(conditions: list[str]) -> str:
        score = {"conditions": conditions}
        [only] = summarize_run(rows, [], [1], score=score)["models"][0]["reliability"]["notes"]
        return only

    declared = note(["faults:production", "drift:v2", "load:200"])
    assert declared.endswith(
        "; run with --profile full to measure recovery_rate and completion_under_load"
    )
    assert "drift_robustness" not in declared  # measured: the run has its drift variant
    undeclared = note(["drift:v2"])
    assert "--profile full" not in undeclared
    assert undeclared.endswith(
        "; the suite declares no fault profile or load levels: add `faults:` and `load:` to "
        "suite.yaml to measure recovery_rate and completion_under_load (docs/conditions.md)"
    )


def test_a_variant_with_every_trial_left_out_is_not_measured_never_zero() -> None:
    infra = [
        {**row, "outcome": "infra_error", "reason": "provider: 503"}
        for row in trials("a", "drift:v2", "FF") + trials("b", "drift:v2", "FF")
    ]
    rows = trials("a", "", "PP") + trials("b", "", "PF") + infra
    summary = summarize_run(rows, [], [1], infra="exclude")
    model = summary["models"][0]
    assert model["variants"]["drift:v2"]["pass@1"] is None
    assert model["metrics"]["drift_robustness"] is None
    assert model["reliability"]["components"]["drift_robustness"] is None
    counted = summarize_run(rows, [], [1], infra="fail")["models"][0]
    assert counted["metrics"]["drift_robustness"] == 0.0  # as failures, they do count


def test_without_intervals_the_point_values_are_the_same_and_every_interval_is_null() -> None:
    rows = [
        *trials("a", "", "PPF"),
        *trials("b", "", "PFF"),
        *trials("c", "", "PPP"),
        trial("a", "faults:flaky", 0, True, failed=2, recovered=1),
        trial("b", "faults:flaky", 0, False, failed=1),
        trial("c", "faults:flaky", 0, True, failed=1, recovered=1),
    ]
    full = summarize_run(rows, [], [1, 2], seed=4)
    points = summarize_run(rows, [], [1, 2], seed=4, intervals=False)
    assert full["ci"]["pass^2"] is not None and full["ci"]["recovery_rate"] is not None
    assert set(points["ci"]) == set(full["ci"]) and set(points["ci"].values()) == {None}
    assert points["metrics"] == full["metrics"] and points["metrics"]["recovery_rate"] == 2 / 4
    for key in ("tasks", "tiers", "tags", "variants", "counts"):
        assert points["models"][0][key] == full["models"][0][key]
    score = points["models"][0]["reliability"]
    assert score["reliability_score"] == full["models"][0]["reliability"]["reliability_score"]
    assert score["ci"] == {"reliability_score": None}
