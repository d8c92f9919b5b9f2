"""A production conversation (an incident) drafted as a task: the user's turns, the calls
the agent made as the starting gold sequence, what the tools returned as notes for the
initial state, and the expectations left as TODOs.

A draft carries a `draft:` key that the task format does not allow, so it cannot load, run
or validate until a person has filled it in and deleted that line."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from toolproof.errors import Problem
from toolproof.suite.loaded import Suite
from toolproof.telemetry import semconv as sc
from toolproof.telemetry.traces import Conversation, transcript_of
from toolproof.transcript import ToolCallEvent, Transcript

DRAFT_MARK = "fill the TODOs and check the gold actions, then delete this line"


@dataclass
class Draft:
    """The task text and what could not be mapped."""

    text: str
    task_id: str
    problems: list[Problem]


def flow(value: Any) -> str:
    """A value as one line of YAML (JSON is YAML's flow style)."""
    return json.dumps(value, ensure_ascii=False, default=str)


def task_id_for(conversation: Conversation) -> str:
    """`incident-` and the task toolproof ran, or the conversation's id, as a task id."""
    base = conversation.attribute(sc.TASK) or conversation.id
    return "incident-" + re.sub(r"[^A-Za-z0-9_.:-]+", "-", str(base)).strip("-")[:60]


def check_tools(
    conversation: Conversation, calls: list[ToolCallEvent], suite: Suite | None
) -> None:
    """Each called tool must be one of the suite's; a call without arguments cannot be gold."""
    spans = {s.attributes.get(sc.TOOL_CALL_ID) or s.span_id: s for s in conversation.spans}
    for call in calls:
        where = spans.get(call.call_id)
        span = f"span {where.span_id}" if where else f"tool call {call.call_id}"
        line = where.line if where else None
        if suite is not None and call.canonical_name not in suite.tools:
            conversation.problems.append(
                Problem(
                    conversation.path,
                    line,
                    f"{span}: tool {call.canonical_name!r} is not one of suite "
                    f"'{suite.name}''s tools",
                )
            )
        if call.canonical_arguments is None:
            conversation.problems.append(
                Problem(
                    conversation.path,
                    line,
                    f"{span}: no {sc.TOOL_ARGUMENTS} (export with content, e.g. "
                    "`run --otel-content`): the gold action's args are a TODO",
                )
            )


def draft_task(conversation: Conversation, suite: Suite | None = None) -> Draft:
    """The draft task of one conversation, as YAML text (a list of one task, the shape of a
    file under a suite's tasks/)."""
    transcript = transcript_of(conversation)
    calls = transcript.tool_calls()
    check_tools(conversation, calls, suite)
    users = [m.content for m in transcript.messages("user")]
    task_id = task_id_for(conversation)
    if not users:
        conversation.problems.append(
            Problem(
                conversation.path,
                None,
                "no user message in the trace (export with content, e.g. `run --otel-content`): "
                "the opening is a TODO",
            )
        )
    lines = [
        f"# Drafted by `toolproof import trace` from conversation {conversation.id}",
        f"# ({conversation.path}). It does not load until the `draft:` line is deleted.",
        f"- id: {task_id}",
        f"  draft: {flow(DRAFT_MARK)}",
        '  story: "TODO: what happened in production, and what the agent should have done"',
        "  tags: [incident]",
        "  user:",
        f"    opening: {flow(users[0] if users else 'TODO: the user opening')}",
    ]
    if users[1:]:
        lines.append("    turns:")
        lines.extend(f"      - {{say: {flow(text)}}}" for text in users[1:])
    lines.extend(state_notes(calls, suite))
    lines.extend(expectations(transcript))
    return Draft("\n".join(lines) + "\n", task_id, conversation.problems)


def state_notes(calls: list[ToolCallEvent], suite: Suite | None) -> list[str]:
    """What each tool returned in production, as comments over an empty initial state."""
    lines = [
        "  # What the tools returned in production. Where the suite's tools are simulators, put",
        "  # the records they read into initial_state (a merge patch on the suite's world):",
    ]
    for call in calls:
        binding = suite.tools.get(call.canonical_name) if suite else None
        kind = "" if binding is None else (" [simulator]" if binding.simulated else " [real]")
        outcome = "failed: " if call.is_error else ""
        lines.append(
            f"  #   {call.canonical_name}({flow(call.canonical_arguments or call.raw_arguments)})"
            f"{kind} -> {outcome}{flow(call.result)}"
        )
    lines.append("  initial_state: {}")
    return lines


def expectations(transcript: Transcript) -> list[str]:
    """The calls that succeeded as gold actions, failed ones noted, the rest TODO."""
    lines = [
        "  expect:",
        "    # The calls production made that succeeded, in order: keep the ones a right",
        "    # answer makes, fix their arguments, add what is missing.",
        "    actions:",
    ]
    for call in transcript.tool_calls():
        args = call.canonical_arguments
        entry = f"{{tool: {call.canonical_name}, args: {flow(args if args is not None else {})}}}"
        if call.is_error:
            lines.append(f"      # failed in production: {entry}")
        else:
            todo = "" if args is not None else "  # TODO: the arguments"
            lines.append(f"      - {entry}{todo}")
    lines.extend(
        [
            '    must_say: ["TODO: a fact the user must be told"]',
            "    # TODO: forbidden_calls, state checks, must_not_say: what the incident got wrong",
        ]
    )
    return lines
