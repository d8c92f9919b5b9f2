"""Communication graders: facts the user must hear, things never to say, the turn budget.

A fact counts only where the agent could have known it: in a message that comes after a
successful tool result showing the fact (any of its forms), unless the task marks the fact as
the user's own words or as needing no source. Facts are matched as whole tokens
(`toolproof.conversation.tokens`), in one message at a time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from toolproof.conversation import contains, tokens
from toolproof.graders.base import Evidence, Verdict
from toolproof.spec.models import Expectations, Fact
from toolproof.transcript import MessageEvent, ToolCallEvent, Transcript


@dataclass
class Record:
    """What the agent said, message by message, and what tool results had shown it by then."""

    shown: list[list[str]] = field(default_factory=list)
    """The values of successful tool results, in order, as tokens."""
    said: list[tuple[list[str], int]] = field(default_factory=list)
    """Each agent message as tokens, with how many of `shown` came before it."""


def record(transcript: Transcript) -> Record:
    """The transcript as fact grading reads it. A value a call returns that only repeats one
    of its own arguments is not evidence: a tool echoing what it was given shows nothing."""
    out = Record()
    for event in transcript.events:
        if isinstance(event, ToolCallEvent) and not event.is_error:
            given = {
                tuple(tokens(v))
                for args in (event.arguments, event.tool_arguments)
                for v in _values(args or {})
            }
            out.shown += [
                t for v in _values(event.result) if (t := tokens(v)) and tuple(t) not in given
            ]
        elif isinstance(event, MessageEvent) and event.role == "assistant":
            out.said.append((tokens(event.content), len(out.shown)))
    return out


def _values(data: Any) -> list[str]:
    """Every text, number and boolean in a JSON value, as JSON writes it (`false`, `12.5`),
    so that a `found_as` form can name one (keys are names, not data)."""
    if isinstance(data, dict):
        return [v for item in data.values() for v in _values(item)]
    if isinstance(data, list):
        return [v for item in data for v in _values(item)]
    if isinstance(data, str):
        return [data]
    if isinstance(data, bool):
        return ["true" if data else "false"]
    if isinstance(data, int | float):
        return [str(data)]
    return []


def fact_status(fact: Fact, seen: Record) -> str:
    """'said', 'unsourced' (said, but no earlier tool result showed it) or 'missing'."""
    forms = [tokens(option) for option in fact.options]
    sources = [tokens(form) for form in fact.sources]
    status = "missing"
    for message, known in seen.said:
        if not any(contains(message, form) for form in forms):
            continue
        if fact.source != "tools" or any(
            contains(value, form) for value in seen.shown[:known] for form in sources
        ):
            return "said"
        status = "unsourced"
    return status


def grade_communication(expect: Expectations, evidence: Evidence) -> list[Verdict]:
    seen = record(evidence.transcript)
    verdicts: list[Verdict] = []
    if expect.must_say:
        missing, unsourced = [], []
        for fact in expect.facts():
            status = fact_status(fact, seen)
            shown = " or ".join(repr(o) for o in fact.options)
            if status == "missing":
                missing.append(shown)
            elif status == "unsourced":
                unsourced.append(shown)
        problems = []
        if missing:
            problems.append(f"not said: {', '.join(missing)}")
        if unsourced:
            problems.append(f"said before any tool result showed it: {', '.join(unsourced)}")
        verdicts.append(
            Verdict(
                grader="must_say",
                passed=not problems,
                reason="; ".join(problems) or "every fact said, each after a source",
            )
        )
    if expect.must_not_say:
        leaked = [
            repr(s)
            for s in expect.must_not_say
            if any(contains(message, tokens(s)) for message, _ in seen.said)
        ]
        verdicts.append(
            Verdict(
                grader="must_not_say",
                passed=not leaked,
                reason=f"said {', '.join(leaked)}" if leaked else "nothing forbidden said",
            )
        )
    if expect.max_turns is not None:
        turns = len(evidence.transcript.messages("assistant"))
        verdicts.append(
            Verdict(
                grader="max_turns",
                passed=turns <= expect.max_turns,
                reason=f"{turns} agent turns (limit {expect.max_turns})",
            )
        )
    return verdicts
