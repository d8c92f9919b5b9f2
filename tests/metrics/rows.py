"""Stored trial rows for the metrics tests: what `summarize_run` reads of a trial."""

from __future__ import annotations

from typing import Any


def trial(
    task: str,
    variant: str,
    index: int,
    passed: bool,
    failed: int = 0,
    recovered: int = 0,
    looped: bool = False,
) -> dict[str, Any]:
    """Trial `index` of a task in a variant; `failed` of its calls carried a server_error
    fault, `recovered` of them were recovered."""
    return {
        "task_id": task,
        "trial": index,
        "outcome": "passed" if passed else "failed",
        "reason": "" if passed else "state",
        "variant": variant,
        # what a load level's stats read besides the outcome
        "started_at": f"2026-01-01T00:00:{index:02d}",
        "duration_s": 1.0,
        "tool_calls": failed + 1,
        "tool_errors": failed,
        "conditions": {
            "failed": {"server_error": failed} if failed else {},
            "recovered": {"server_error": recovered} if recovered else {},
            "looped": looped,
            "faulted": failed > 0,
        },
    }


def trials(task: str, variant: str, outcomes: str) -> list[dict[str, Any]]:
    """One row per character of `outcomes`: P passed, F failed."""
    return [trial(task, variant, i, o == "P") for i, o in enumerate(outcomes)]
