"""Proving a suite sound before any model is blamed.

For every task: its gold actions replay without error, the oracle agent passes it, and the
null agent fails it. A task the null agent passes cannot tell a good agent from a bad one.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from toolproof.agents.baselines import NullAgent, OracleAgent
from toolproof.runner.gold import replay_gold
from toolproof.runner.plan import TrialSpec, derive_seed
from toolproof.runner.trial import run_trial
from toolproof.spec.suite import Suite, Task


@dataclass
class TaskCheck:
    """The validation of one task."""

    task: Task
    gold_actions: int
    oracle: str
    null: str
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


async def check_task(suite: Suite, task: Task) -> TaskCheck:
    replay = await replay_gold(suite, task)
    spec = TrialSpec(task.id, 0, derive_seed(suite.file.defaults.seed, "", task.id, 0))
    steps = suite.file.defaults.max_steps
    oracle = await run_trial(spec, suite, OracleAgent, replay.hash, steps, "oracle")
    null = await run_trial(spec, suite, NullAgent, replay.hash, steps, "null")
    problems = list(replay.errors)
    if oracle.outcome != "passed":
        problems.append(f"the oracle agent fails it ({oracle.reason})")
    if null.outcome == "passed":
        problems.append(
            "the null agent passes it: its expectations cannot tell a good agent from one "
            "that does nothing"
        )
    return TaskCheck(
        task=task,
        gold_actions=len(task.spec.expect.actions or []),
        oracle=oracle.outcome if oracle.outcome == "passed" else f"failed: {oracle.reason}",
        null=null.outcome if null.outcome == "passed" else f"failed: {null.reason}",
        problems=problems,
    )


async def validate_suite(suite: Suite, tasks: list[Task] | None = None) -> list[TaskCheck]:
    """Check every task (in order); the suite is sound when every check is ok."""
    return [await check_task(suite, task) for task in tasks or suite.tasks]
