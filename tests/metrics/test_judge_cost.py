"""The judge's cost in a run's summary: its own total, unknown when its model has no price."""

from __future__ import annotations

import pytest

from toolproof.metrics.summary import judge_cost


def test_the_judge_cost_is_the_sum_over_trials_with_unjudged_trials_costing_nothing() -> None:
    rows = [{"judge_cost_usd": 0.002}, {"judge_cost_usd": 0.0}, {"judge_cost_usd": 0.0015}]
    assert judge_cost("openai/gpt-4o-mini", rows) == {
        "model": "openai/gpt-4o-mini",
        "cost_usd": pytest.approx(0.0035),
    }


def test_a_judge_without_a_price_has_no_cost_never_zero() -> None:
    rows = [{"judge_cost_usd": None}, {"judge_cost_usd": 0.0}]
    assert judge_cost("openai-compatible/judge", rows)["cost_usd"] is None
