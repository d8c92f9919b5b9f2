"""Per-tier (weighted by production weights) and per-tag breakdowns of per-task values."""

from __future__ import annotations

import pytest

from toolproof.metrics.breakdown import TaskMeta, by_tag, by_tier, tier_weight

VALUES = {
    "t1": {"pass@1": 1.0, "pass^2": 0.5},
    "t2": {"pass@1": 0.5, "pass^2": 0.0},
    "t3": {"pass@1": 0.0, "pass^2": 0.0},
    "t4": {"pass@1": 0.0, "pass^2": 0.0},
}
METAS = [
    TaskMeta("t1", tags=("refunds", "easy"), tools={"search": (1, 3.0), "refund": (2, 1.0)}),
    TaskMeta("t2", tags=("easy",), tools={"search": (1, None), "lookup": (1, 1.0)}),
    TaskMeta("t3", tags=(), tools={"refund": (2, 4.0)}),
    TaskMeta("t4", tags=("refunds",), tools={}),
]


def test_tier_weight_sums_the_weights_of_the_tools_of_that_tier() -> None:
    # t2 uses two tier-1 tools: weight None counts 1, plus 1.0 -> 2
    assert tier_weight(METAS[1], 1) == 2.0
    assert tier_weight(METAS[0], 1) == 3.0
    assert tier_weight(METAS[0], 2) == 1.0
    assert tier_weight(METAS[0], 3) == 0.0


def test_by_tier_weights_each_task_by_its_tools_production_weight() -> None:
    tiers = by_tier(VALUES, METAS)
    assert set(tiers) == {1, 2}
    # tier 1: t1 weight 3, t2 weight 1 (None) + 1 = 2; total 5
    # pass@1 = (1.0 * 3 + 0.5 * 2) / 5 = 0.8; pass^2 = (0.5 * 3 + 0.0 * 2) / 5 = 0.3
    assert tiers[1] == {
        "tasks": 2.0,
        "weight": 5.0,
        "pass@1": pytest.approx(0.8),
        "pass^2": pytest.approx(0.3),
    }
    # tier 2: t1 weight 1, t3 weight 4; total 5
    # pass@1 = (1.0 * 1 + 0.0 * 4) / 5 = 0.2; pass^2 = (0.5 * 1 + 0.0 * 4) / 5 = 0.1
    assert tiers[2] == {
        "tasks": 2.0,
        "weight": 5.0,
        "pass@1": pytest.approx(0.2),
        "pass^2": pytest.approx(0.1),
    }


def test_tools_without_weights_give_plain_means() -> None:
    values = {"a": {"pass@1": 1.0}, "b": {"pass@1": 0.0}, "c": {"pass@1": 0.5}}
    metas = [
        TaskMeta("a", tools={"x": (1, None)}),
        TaskMeta("b", tools={"y": (1, None)}),
        TaskMeta("c", tools={"z": (1, None)}),
    ]
    # (1.0 + 0.0 + 0.5) / 3 = 0.5
    assert by_tier(values, metas) == {1: {"tasks": 3.0, "weight": 3.0, "pass@1": 0.5}}


def test_tasks_without_tools_do_not_appear_in_any_tier() -> None:
    tiers = by_tier(VALUES, METAS)
    # t4 has no tools and a pass@1 of 0.0: had it counted, tier counts would be 3
    assert all(row["tasks"] == 2.0 for row in tiers.values())
    assert by_tier({"t4": VALUES["t4"]}, [METAS[3]]) == {}


def test_tools_of_zero_weight_leave_the_task_out_of_the_tier() -> None:
    values = {"a": {"pass@1": 1.0}, "b": {"pass@1": 0.0}}
    metas = [TaskMeta("a", tools={"x": (1, 2.0)}), TaskMeta("b", tools={"y": (1, 0.0)})]
    # only a counts: 1.0 * 2 / 2
    assert by_tier(values, metas) == {1: {"tasks": 1.0, "weight": 2.0, "pass@1": 1.0}}
    # a tier whose tools all weigh nothing is dropped
    assert by_tier({"b": {"pass@1": 0.0}}, [metas[1]]) == {}


def test_by_tag_takes_plain_means_over_tagged_tasks() -> None:
    tags = by_tag(VALUES, METAS)
    assert set(tags) == {"easy", "refunds"}
    # easy: t1, t2 -> pass@1 (1.0 + 0.5) / 2 = 0.75; pass^2 (0.5 + 0.0) / 2 = 0.25
    assert tags["easy"] == {"tasks": 2.0, "pass@1": 0.75, "pass^2": 0.25}
    # refunds: t1, t4 -> pass@1 (1.0 + 0.0) / 2 = 0.5; pass^2 (0.5 + 0.0) / 2 = 0.25
    assert tags["refunds"] == {"tasks": 2.0, "pass@1": 0.5, "pass^2": 0.25}


def test_by_tag_ignores_tasks_without_values() -> None:
    metas = [*METAS, TaskMeta("unrun", tags=("easy",))]
    # unrun has no values: easy is still the mean over t1 and t2
    assert by_tag(VALUES, metas)["easy"]["tasks"] == 2.0


def test_by_tier_ignores_tasks_without_values() -> None:
    metas = [*METAS, TaskMeta("unrun", tools={"search": (1, 5.0)})]
    # unrun has no values: tier 1 is still t1 (weight 3) and t2 (weight 2)
    assert by_tier(VALUES, metas)[1]["pass@1"] == pytest.approx(0.8)


def test_no_metas_gives_no_breakdowns() -> None:
    assert by_tier(VALUES, []) == {}
    assert by_tag(VALUES, []) == {}
