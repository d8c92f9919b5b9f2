"""The judge's line in a run's summary: its own total cost, unknown when its model has no
price, and the rubric criteria it left undecided because it failed their controls."""

from __future__ import annotations

import pytest

from toolproof.metrics.summary import judge_cost


def test_the_judge_cost_is_the_sum_over_trials_with_unjudged_trials_costing_nothing() -> None:
    rows = [{"judge_cost_usd": 0.002}, {"judge_cost_usd": 0.0}, {"judge_cost_usd": 0.0015}]
    assert judge_cost("openai/gpt-4o-mini", rows) == {
        "model": "openai/gpt-4o-mini",
        "cost_usd": pytest.approx(0.0035),
        "undecided_criteria": 0,
        "failed_controls": {},
    }


def test_a_judge_without_a_price_has_no_cost_never_zero() -> None:
    rows = [{"judge_cost_usd": None}, {"judge_cost_usd": 0.0}]
    assert judge_cost("openai-compatible/judge", rows)["cost_usd"] is None


def test_criteria_whose_controls_failed_are_counted_once_per_task_whatever_the_trials() -> None:
    undecided = {"rubric_undecided": ["polite", "explains"]}
    rows = [
        {"task_id": "refund", "judge_cost_usd": 0.0, "conditions": undecided},
        {
            "task_id": "refund",
            "judge_cost_usd": 0.0,
            "conditions": {"rubric_undecided": ["polite"]},
        },
        {
            "task_id": "status",
            "judge_cost_usd": 0.0,
            "conditions": {"rubric_undecided": ["polite"]},
        },
        {"task_id": "cancel", "judge_cost_usd": 0.0, "conditions": {}},
    ]
    judge = judge_cost("openai/gpt-4o-mini", rows)
    assert judge["undecided_criteria"] == 3
    assert judge["failed_controls"] == {"refund": ["explains", "polite"], "status": ["polite"]}
