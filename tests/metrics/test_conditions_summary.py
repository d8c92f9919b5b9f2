"""Recovery, drift robustness and completion under load broken down per task and per tier
in a model's summary."""

from __future__ import annotations

from typing import Any

import pytest
from rows import trial, trials

from toolproof.metrics.breakdown import TaskMeta
from toolproof.metrics.summary import InfraPolicy, summarize_run


def conditions_of(
    rows: list[dict[str, Any]], metas: list[TaskMeta], infra: InfraPolicy = "fail"
) -> dict[str, Any]:
    """The `conditions` of the one model's summary."""
    conditions: dict[str, Any] = summarize_run(rows, metas, [1], infra)["models"][0]["conditions"]
    return conditions


def row(task: str, index: int, outcome: str, failed: int, recovered: int) -> dict[str, Any]:
    """A trial under a fault profile; 3 or more unrecovered calls make it loop."""
    looped = failed - recovered >= 3
    return trial(task, "faults:p", index, outcome == "passed", failed, recovered, looped)


def test_recovery_is_pooled_per_task_and_per_tier_of_the_tasks_tools() -> None:
    rows = [
        row("a", 0, "passed", 2, 2),
        row("a", 1, "failed", 4, 1),  # 3 unrecovered: a loop
        row("b", 0, "passed", 1, 0),
        row("b", 1, "passed", 0, 0),
    ]
    metas = [
        TaskMeta("a", tools={"get": (1, 0.5)}),
        TaskMeta("b", tools={"get": (1, 0.5), "refund": (3, 0.1)}),
    ]
    conditions = conditions_of(rows, metas)
    by_task = conditions["recovery_by_task"]
    # a: (2 + 1) recovered of (2 + 4) failed; one of its two trials looped; both faulted, 1 passed
    assert by_task["a"] == {
        "recovery_rate": 0.5,
        "loop_rate": 0.5,
        "corrective_action": 0.5,
        "failed_calls": 6,
    }
    # b: 0 of 1 recovered; no loop; its one faulted trial passed
    assert by_task["b"]["recovery_rate"] == 0.0 and by_task["b"]["corrective_action"] == 1.0
    by_tier = conditions["recovery_by_tier"]
    # tier 1 pools both tasks: 3 of 7 recovered; tier 3 only b
    assert by_tier["1"]["recovery_rate"] == 3 / 7
    assert by_tier["3"]["failed_calls"] == 1
    assert set(by_tier) == {"1", "3"}


# ---------------------------------------------------------------- drift and load per task, per tier


#            clean  drift:v2  drift:v3  load:8
#   a        P P    P F       F F       P F
#   b        P F    P P       P F       F F
#   c        F F    P F       F F       P P
OUTCOMES = {
    "a": {"": "PP", "drift:v2": "PF", "drift:v3": "FF", "load:8": "PF"},
    "b": {"": "PF", "drift:v2": "PP", "drift:v3": "PF", "load:8": "FF"},
    "c": {"": "FF", "drift:v2": "PF", "drift:v3": "FF", "load:8": "PP"},
}
ROWS = [
    row for task, runs in OUTCOMES.items() for v, o in runs.items() for row in trials(task, v, o)
]
# tier 1: a and b through `get` (weight 0.6 each); tier 3: b through `refund` (0.1) and c
# through `refund` and `notify` (no weight: counts 1), so c weighs 1.1
METAS = [
    TaskMeta("a", tools={"get": (1, 0.6)}),
    TaskMeta("b", tools={"get": (1, 0.6), "refund": (3, 0.1)}),
    TaskMeta("c", tools={"refund": (3, 0.1), "notify": (3, None)}),
]


def test_drift_robustness_per_task_is_the_mean_over_variants_and_its_ratio_to_clean() -> None:
    conditions = conditions_of(ROWS, METAS)
    by_task = conditions["drift_by_task"]
    # a: (1/2 + 0) / 2 = 0.25 against clean 1.0; b: (1 + 1/2) / 2 = 0.75 against 0.5
    assert by_task["a"] == {
        "drift_robustness": 0.25,
        "ratio_to_clean": 0.25,
        "clean_pass_rate": 1.0,
    }
    assert by_task["b"] == {"drift_robustness": 0.75, "ratio_to_clean": 1.5, "clean_pass_rate": 0.5}
    # c never passed clean: its ratio is not measured, never 0 or infinite
    assert by_task["c"] == {
        "drift_robustness": 0.25,
        "ratio_to_clean": None,
        "clean_pass_rate": 0.0,
    }
    # the model's drift robustness is the mean of the per-task values: (0.25 + 0.75 + 0.25) / 3
    assert conditions["drift"]["drift_robustness"] == pytest.approx(5 / 12)


def test_drift_robustness_per_tier_is_weighted_by_production_weights() -> None:
    by_tier = conditions_of(ROWS, METAS)["drift_by_tier"]
    # tier 1: a and b, equal weights: drift (0.25 + 0.75) / 2, clean (1 + 0.5) / 2
    assert by_tier["1"] == {
        "tasks": 2.0,
        "weight": pytest.approx(1.2),
        "drift_robustness": pytest.approx(0.5),
        "ratio_to_clean": pytest.approx(0.5 / 0.75),
        "clean_pass_rate": pytest.approx(0.75),
    }
    # tier 3: b weighs 0.1, c 1.1: drift (0.1·0.75 + 1.1·0.25) / 1.2 = 0.35 / 1.2,
    # clean (0.1·0.5 + 1.1·0) / 1.2 = 0.05 / 1.2, ratio 0.35 / 0.05
    tier = by_tier["3"]
    assert (tier["tasks"], tier["weight"]) == (2.0, pytest.approx(1.2))
    assert tier["drift_robustness"] == pytest.approx(0.35 / 1.2)
    assert tier["clean_pass_rate"] == pytest.approx(0.05 / 1.2)
    assert tier["ratio_to_clean"] == pytest.approx(7.0)


def test_completion_under_load_per_task_and_per_tier_against_the_clean_baseline() -> None:
    conditions = conditions_of(ROWS, METAS)
    # level 1 was not run: the clean trials stand for it
    assert conditions["load"]["baseline"] == 1 and conditions["load"]["peak"] == 8
    by_task = conditions["load_by_task"]
    assert by_task["a"] == {
        "completion_under_load": 0.5,
        "ratio_to_baseline": 0.5,
        "baseline_pass_rate": 1.0,
    }
    assert by_task["b"]["completion_under_load"] == 0.0 and by_task["b"]["ratio_to_baseline"] == 0.0
    assert (
        by_task["c"]["completion_under_load"] == 1.0 and by_task["c"]["ratio_to_baseline"] is None
    )
    by_tier = conditions["load_by_tier"]
    # tier 1: (0.5 + 0) / 2 against 0.75; tier 3: (0.1·0 + 1.1·1) / 1.2 against 0.05 / 1.2
    assert by_tier["1"]["completion_under_load"] == pytest.approx(0.25)
    assert by_tier["1"]["ratio_to_baseline"] == pytest.approx(1 / 3)
    assert by_tier["3"]["completion_under_load"] == pytest.approx(1.1 / 1.2)
    assert by_tier["3"]["ratio_to_baseline"] == pytest.approx(22.0)


def test_level_one_when_run_is_the_load_baseline_per_task() -> None:
    rows = [*ROWS, *trials("a", "load:1", "FF"), *trials("b", "load:1", "PF")]
    by_task = conditions_of(rows, METAS)["load_by_task"]
    # a passed nothing at level 1: no ratio; b: 0 at the peak against 0.5; c has no level 1
    assert by_task["a"]["baseline_pass_rate"] == 0.0 and by_task["a"]["ratio_to_baseline"] is None
    assert by_task["b"]["baseline_pass_rate"] == 0.5 and by_task["b"]["ratio_to_baseline"] == 0.0
    assert by_task["c"]["baseline_pass_rate"] is None


def test_without_clean_trials_drift_has_no_ratio_per_task_or_per_tier() -> None:
    rows = [row for row in ROWS if row["variant"] == "drift:v2"]
    conditions = conditions_of(rows, METAS)
    assert conditions["drift_by_task"]["b"] == {
        "drift_robustness": 1.0,
        "ratio_to_clean": None,
        "clean_pass_rate": None,
    }
    assert conditions["drift_by_tier"]["1"]["ratio_to_clean"] is None
    assert "load_by_task" not in conditions and "load_by_tier" not in conditions


def test_infra_errors_follow_the_run_policy_per_task() -> None:
    infra = {**trial("a", "drift:v2", 2, False), "outcome": "infra_error"}
    rows = [*ROWS, infra]
    fail = conditions_of(rows, METAS, "fail")["drift_by_task"]
    exclude = conditions_of(rows, METAS, "exclude")
    # fail: a's drift:v2 is P F I = 1/3; exclude: P F = 1/2, as without the infra error
    assert fail["a"]["drift_robustness"] == pytest.approx((1 / 3 + 0) / 2)
    assert exclude["drift_by_task"]["a"]["drift_robustness"] == 0.25


def test_a_clean_run_has_no_drift_or_load_breakdown() -> None:
    rows = [row for row in ROWS if row["variant"] == ""]
    conditions = conditions_of(rows, METAS)
    assert set(conditions) == {"recovery", "recovery_by_task", "recovery_by_tier"}
