"""Hand-made transcripts for the grader tests: events in the order a trial records them."""

from __future__ import annotations

from typing import Any

from toolproof.transcript import MessageEvent, ToolCallEvent, Transcript


def transcript(*events: Any) -> Transcript:
    out = Transcript()
    for event in events:
        out.add(event)
    return out


def say(role: str, text: str) -> MessageEvent:
    return MessageEvent(t=0, role=role, content=text)  # type: ignore[arg-type]


def call(
    name: str, result: Any = None, error: str | None = None, fault: str | None = None, **args: Any
) -> ToolCallEvent:
    """A tool call and its result; with `error` (its kind), the result is that error."""
    return ToolCallEvent(
        t=0,
        call_id="c",
        name=name,
        arguments=args,
        result={"error": result} if error else result,
        is_error=error is not None,
        error_kind=error,
        fault=fault,
    )
