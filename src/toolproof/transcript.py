"""The transcript: the ordered events of one trial. Everything after a trial reads it."""

from __future__ import annotations

import time
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from toolproof.models.base import ToolCall, Usage


class MessageEvent(BaseModel):
    """A message between the user and the agent."""

    type: Literal["message"] = "message"
    t: float
    role: Literal["user", "assistant"]
    content: str


class ModelCallEvent(BaseModel):
    """One model turn of the agent: what it asked for, what it cost, how long it took."""

    type: Literal["model_call"] = "model_call"
    t: float
    model: str
    role: Literal["agent", "user"] = "agent"
    content: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    latency_s: float = 0.0
    cost_usd: float | None = None
    stop_reason: str = ""


class ToolCallEvent(BaseModel):
    """One tool call through the gateway, with its result."""

    type: Literal["tool_call"] = "tool_call"
    t: float
    call_id: str
    name: str
    arguments: dict[str, Any] | None
    raw_arguments: str = ""
    result: Any = None
    is_error: bool = False
    error_kind: str | None = None
    latency_s: float = 0.0
    fault: str | None = Field(None, description="The fault injected into this call, if any.")
    tool: str | None = Field(
        None, description="Under schema drift: the suite's own tool this call reached."
    )
    tool_arguments: dict[str, Any] | None = Field(
        None, description="Under schema drift: the arguments as the suite's tool took them."
    )
    by: Literal["agent", "user"] = Field(
        "agent", description="Who made the call: the agent, or the user with a user tool."
    )

    @property
    def canonical_name(self) -> str:
        """The suite's name of the tool called (the same as `name` without drift)."""
        return self.tool or self.name

    @property
    def canonical_arguments(self) -> dict[str, Any] | None:
        return self.tool_arguments if self.tool is not None else self.arguments


class EndEvent(BaseModel):
    """How the conversation ended."""

    type: Literal["end"] = "end"
    t: float
    reason: str
    detail: str = ""


class CheckEvent(BaseModel):
    """A final-state check run against a real system after the conversation, and its result."""

    type: Literal["check"] = "check"
    t: float
    index: int = Field(description="Position of the check in the task's expect.check.")
    name: str
    passed: bool
    message: str = ""
    errored: bool = Field(
        False,
        description="The check could not decide (it raised, timed out or could not start): "
        "a failure of the grader, not a finding about the state.",
    )
    duration_s: float = 0.0


class NoteEvent(BaseModel):
    """A mark the user side leaves for the metrics: which persona played the user
    (`persona`), which user message was meant to confuse (`confusing_turn`, with `turn` its
    index among the user's messages), how far the conversation was stretched (`stretch`)."""

    type: Literal["note"] = "note"
    t: float
    kind: Literal["persona", "confusing_turn", "stretch"]
    turn: int | None = None
    data: dict[str, Any] = Field(default_factory=dict)


Event = Annotated[
    MessageEvent | ModelCallEvent | ToolCallEvent | EndEvent | CheckEvent | NoteEvent,
    Field(discriminator="type"),
]


class Transcript(BaseModel):
    """All events of a trial, in order, with times in seconds from the trial's start."""

    events: list[Event] = Field(default_factory=list)
    started: float = Field(default_factory=time.perf_counter, exclude=True)

    def now(self) -> float:
        return round(time.perf_counter() - self.started, 6)

    def add(self, event: Event) -> None:
        self.events.append(event)

    def say(self, role: Literal["user", "assistant"], content: str) -> None:
        self.add(MessageEvent(t=self.now(), role=role, content=content))

    def checks(self) -> list[CheckEvent]:
        return [e for e in self.events if isinstance(e, CheckEvent)]

    def notes(self, kind: str | None = None) -> list[NoteEvent]:
        return [e for e in self.events if isinstance(e, NoteEvent) and kind in (None, e.kind)]

    def tool_calls(self, by: Literal["agent", "user"] = "agent") -> list[ToolCallEvent]:
        """The agent's tool calls (or, with by='user', the user's calls of their own tools)."""
        return [e for e in self.events if isinstance(e, ToolCallEvent) and e.by == by]

    def messages(self, role: str | None = None) -> list[MessageEvent]:
        return [e for e in self.events if isinstance(e, MessageEvent) and role in (None, e.role)]

    def model_calls(self, role: Literal["agent", "user"] = "agent") -> list[ModelCallEvent]:
        """The agent's model turns (or, with role='user', the simulated user's)."""
        return [e for e in self.events if isinstance(e, ModelCallEvent) and e.role == role]

    def usage(self, role: Literal["agent", "user"] = "agent") -> Usage:
        total = Usage()
        for call in self.model_calls(role):
            total = total + call.usage
        return total

    def cost_usd(self, role: Literal["agent", "user"] = "agent") -> float | None:
        """USD of the agent's (or the simulated user's) model calls; None if any is unpriced."""
        costs = [c.cost_usd for c in self.model_calls(role)]
        if not costs:
            return 0.0
        if any(c is None for c in costs):
            return None
        return float(sum(c for c in costs if c is not None))
