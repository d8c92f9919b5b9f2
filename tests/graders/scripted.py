"""Trials of a suite's tasks by a scripted agent that plays given turns, graded as any trial
is: what the grader tests run a real suite with."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import yaml

from toolproof.agents.registry import resolve_agent
from toolproof.records.trial import TrialResult
from toolproof.runner.gold import replay_gold
from toolproof.runner.plan import PlannedTrial
from toolproof.runner.trial import Trial, run_trial
from toolproof.suite import Suite

RETAIL = Path(__file__).parents[2] / "examples" / "retail"


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def steps(*calls: dict[str, Any], say: str) -> list[dict[str, Any]]:
    """An agent's turns: each call in a turn of its own, then its reply."""
    return [*({"tool_calls": [c]} for c in calls), {"text": say}]


def play(suite: Suite, task_id: str, turns: list[dict[str, Any]], tmp_path: Path) -> TrialResult:
    """One trial of a task by an agent that plays the given turns, graded as any trial is."""
    script = tmp_path / f"{task_id}.yaml"
    script.write_text(yaml.safe_dump({"tasks": {task_id: turns}}))
    agent = resolve_agent(f"scripted:{script}")
    task = suite.task(task_id)

    async def go() -> TrialResult:
        gold = await replay_gold(suite, task)
        spec = PlannedTrial(task_id, 0, 11)
        return await run_trial(
            Trial(
                spec,
                suite,
                agent.factory,
                "adversary",
                gold.hash,
                30,
                expected_changes=gold.changes,
            )
        )

    return asyncio.run(go())


def verdict(result: TrialResult, grader: str) -> tuple[bool, str]:
    [found] = [v for v in result.verdicts if v.grader == grader]
    return found.passed, found.reason
