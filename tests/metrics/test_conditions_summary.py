"""Recovery metrics broken down per task and per tier in a model's summary."""

from __future__ import annotations

from typing import Any

from toolproof.metrics.breakdown import TaskMeta
from toolproof.metrics.summary import summarize_run


def row(task: str, trial: int, outcome: str, failed: int, recovered: int) -> dict[str, Any]:
    return {
        "task_id": task,
        "trial": trial,
        "outcome": outcome,
        "reason": "",
        "variant": "faults:p",
        "conditions": {
            "failed": {"server_error": failed} if failed else {},
            "recovered": {"server_error": recovered} if recovered else {},
            "looped": failed - recovered >= 3,
            "faulted": failed > 0,
        },
    }


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
    conditions = summarize_run(rows, metas, [1])["models"][0]["conditions"]
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
