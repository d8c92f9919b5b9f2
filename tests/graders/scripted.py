"""Trials of a suite's tasks by a scripted agent that plays given turns, graded as any trial
is: what the grader tests run a real suite with."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import yaml

from toolproof.agents.registry import desk, resolve_agent
from toolproof.records.trial import TrialResult
from toolproof.runner.corpus import UserWords
from toolproof.runner.gold import replay_gold
from toolproof.runner.plan import PlannedTrial
from toolproof.runner.trial import Trial, run_trial
from toolproof.spec.task import Task
from toolproof.suite import Suite
from toolproof.transcript import Transcript
from toolproof.users.scripted import ScriptedUsers, User, UserFactory, scripted_user

RETAIL = Path(__file__).parents[2] / "examples" / "retail"


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def steps(*calls: dict[str, Any], say: str) -> list[dict[str, Any]]:
    """An agent's turns: each call in a turn of its own, then its reply."""
    return [*({"tool_calls": [c]} for c in calls), {"text": say}]


def saying(suite: Suite, words: dict[str, Any]) -> UserFactory:
    """The suite's scripted user, saying these words (`turns`, `replies`, as a task's `user`
    gives them) in place of its task's own, as a labelled corpus case replaces them."""
    parsed = UserWords.model_validate(words)
    update = {key: value for key, value in parsed if value is not None}
    users = ScriptedUsers(desk(suite))

    def user(task: Task, transcript: Transcript, seed: int) -> User:
        return users.play(task, task.spec.user.model_copy(update=update), transcript)

    return user


def play(
    suite: Suite,
    task_id: str,
    turns: list[dict[str, Any]],
    tmp_path: Path,
    user: dict[str, Any] | None = None,
) -> TrialResult:
    """One trial of a task by an agent that plays the given turns, graded as any trial is;
    the user says the task's words, or `user`'s where it gives them."""
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
                user=scripted_user if user is None else saying(suite, user),
                expected_changes=gold.changes,
            )
        )

    return asyncio.run(go())


def verdict(result: TrialResult, grader: str) -> tuple[bool, str]:
    [found] = [v for v in result.verdicts if v.grader == grader]
    return found.passed, found.reason
