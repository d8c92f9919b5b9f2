"""Policy adherence and blame counts over stored trial rows: hand-computed, task as the unit."""

from __future__ import annotations

from typing import Any

import pytest

from toolproof.metrics.blame import blame_counts
from toolproof.metrics.policy import policy_summary
from toolproof.metrics.stats import bootstrap_ci
from toolproof.metrics.summary import summarize_run


def row(
    task: str,
    index: int,
    outcome: str,
    broken: list[str] | None = None,
    blame: tuple[str, str] | None = None,
) -> dict[str, Any]:
    """A stored trial: the policy rules it broke (None: its policy was not checked) and who
    its failure is blamed on."""
    conditions: dict[str, Any] = {"failed": {}, "recovered": {}, "looped": False, "faulted": False}
    if broken is not None:
        conditions["policy_violations"] = broken
    if blame is not None:
        conditions["blame"] = {"party": blame[0], "rule": blame[1]}
    return {
        "task_id": task,
        "trial": index,
        "outcome": outcome,
        "reason": "" if outcome == "passed" else "x",
        "conditions": conditions,
    }


AGENT = ("agent", "policy_violation")
ROWS = [
    # a: 1 of 3 checked trials broke a rule; the infra error was never graded
    row("a", 0, "passed", []),
    row("a", 1, "failed", ["read_before_write", "refuse_with_reason"], AGENT),
    row("a", 2, "passed", []),
    row("a", 3, "infra_error"),
    # b: no violation; one failure the environment caused
    row("b", 0, "passed", []),
    row("b", 1, "failed", [], ("environment", "tool_crashed")),
    # c: both broke identify_before_access
    row("c", 0, "failed", ["identify_before_access"], AGENT),
    row("c", 1, "failed", ["identify_before_access"], AGENT),
]


def test_policy_adherence_is_the_mean_over_tasks_of_each_tasks_share_of_clean_trials() -> None:
    policy = policy_summary(ROWS, seed=7)
    assert policy is not None
    shares = {"a": 2 / 3, "b": 1.0, "c": 0.0}
    assert policy["tasks"] == pytest.approx(shares)
    assert policy["policy_adherence"] == pytest.approx(sum(shares.values()) / 3)
    assert policy["ci"]["policy_adherence"] == list(bootstrap_ci(list(shares.values()), seed=7))
    assert (policy["trials"], policy["violating_trials"]) == (7, 3)
    assert policy["violations"] == {
        "identify_before_access": 2,
        "read_before_write": 1,
        "refuse_with_reason": 1,
    }


def test_policy_adherence_is_not_measured_when_no_rule_was_checked() -> None:
    unchecked = [row("a", 0, "passed"), row("a", 1, "failed"), row("b", 0, "infra_error")]
    assert policy_summary(unchecked) is None
    model = summarize_run(unchecked, [], [1])["models"][0]
    assert model["metrics"]["policy_adherence"] is None
    assert model["policy"] is None


def test_policy_adherence_over_one_task_has_no_interval() -> None:
    policy = policy_summary([row("a", 0, "passed", []), row("a", 1, "failed", ["x"])])
    assert policy is not None
    assert policy["policy_adherence"] == 0.5
    assert policy["ci"]["policy_adherence"] is None


def test_blame_counts_sum_to_the_failed_trials_by_party_and_rule() -> None:
    parties, rules = blame_counts(ROWS)
    assert parties == {"agent": 3, "user_simulator": 0, "environment": 1, "grader": 0}
    assert sum(parties.values()) == sum(r["outcome"] == "failed" for r in ROWS)
    assert rules == {"agent": {"policy_violation": 3}, "environment": {"tool_crashed": 1}}


def test_a_failure_stored_without_blame_is_counted_unattributed_never_dropped() -> None:
    parties, _ = blame_counts([*ROWS, row("d", 0, "failed")])
    assert parties["unattributed"] == 1
    assert sum(parties.values()) == 5


def test_the_run_summary_carries_blame_and_policy_per_model() -> None:
    summary = summarize_run(ROWS, [], [1], seed=7)
    model = summary["models"][0]
    assert model["blame"] == {"agent": 3, "user_simulator": 0, "environment": 1, "grader": 0}
    assert model["blame_rules"]["environment"] == {"tool_crashed": 1}
    assert model["metrics"]["policy_adherence"] == pytest.approx((2 / 3 + 1.0 + 0.0) / 3)
    assert model["ci"]["policy_adherence"] == model["policy"]["ci"]["policy_adherence"]
    assert model["policy"]["violations"]["identify_before_access"] == 2
    per_task = {t["id"]: t["metrics"]["policy_adherence"] for t in model["tasks"]}
    assert per_task == pytest.approx({"a": 2 / 3, "b": 1.0, "c": 0.0})
    assert model["variants"][""]["blame"]["agent"] == 3
