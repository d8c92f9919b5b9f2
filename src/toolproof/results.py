"""A finished trial as stored, and how its outcome is decided."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from toolproof.graders import Evidence, Verdict, grade
from toolproof.models.base import Usage
from toolproof.spec.source import Task
from toolproof.suite.loaded import Suite
from toolproof.transcript import Transcript
from toolproof.world import Change, World

Outcome = Literal["passed", "failed", "infra_error"]
OUTCOMES: tuple[Outcome, ...] = ("passed", "failed", "infra_error")


class TrialResult(BaseModel):
    """Everything about one finished trial; the store keeps it whole."""

    task_id: str
    trial: int
    seed: int
    variant: str = ""
    model: str = ""
    agent: str = ""
    task_hash: str = ""
    outcome: Outcome
    reason: str = ""
    ended: str = ""
    verdicts: list[Verdict] = Field(default_factory=list)
    transcript: Transcript
    world_diff: list[Change] = Field(default_factory=list)
    final_hash: str = ""
    expected_hash: str | None = None
    started_at: str = ""
    duration_s: float = 0.0
    usage: Usage = Field(default_factory=Usage)
    cost_usd: float | None = 0.0
    user_cost_usd: float | None = 0.0
    tool_calls: int = 0
    turns: int = 0
    conditions: dict[str, Any] = Field(
        default_factory=dict, description="Failed and recovered calls, loops, faults."
    )


def judge(
    suite: Suite,
    task: Task,
    transcript: Transcript,
    world: World,
    final_hash: str,
    expected_hash: str | None,
    ended: str,
    failure: str = "",
) -> tuple[Outcome, str, list[Verdict]]:
    """Grade a finished conversation: (outcome, reason, verdicts)."""
    evidence = Evidence(
        transcript=transcript,
        lookup=world.lookup,
        final_hash=final_hash,
        expected_hash=expected_hash,
        write_tools=frozenset(name for name, b in suite.tools.items() if b.write),
        ended=ended,
    )
    verdicts = grade(task.spec.expect, list(suite.file.policy_rules), evidence)
    if failure:
        return "failed", f"{ended}: {failure}", verdicts
    failed = [v for v in verdicts if not v.passed]
    if failed:
        return "failed", f"{failed[0].grader}: {failed[0].reason}", verdicts
    return "passed", "", verdicts
