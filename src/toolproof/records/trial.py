"""A finished trial as the store keeps it (how it is graded: `toolproof.runner.grading`)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from toolproof.graders import Blame, Verdict
from toolproof.graders.rubric import JudgeRecord
from toolproof.models.base import Usage
from toolproof.transcript import Transcript
from toolproof.world import Change

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
    blame: Blame | None = Field(
        None,
        description="Who a failed trial is to blame on, by which rule (none for a passed "
        "trial, an infra error, or a result stored before blame was assigned).",
    )
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
    judge: JudgeRecord | None = Field(
        None, description="The judge model's rubric verdicts, prompts, answers and cost."
    )
