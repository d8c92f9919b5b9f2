"""Communication graders: facts the user must hear, things never to say, the turn budget.

A fact counts only where the agent could have known it and committed to it: in a message that
comes after a successful tool result showing the fact (any of its forms), unless the task
marks the fact as the user's own words or as needing no source; and a message that does not
also state a competing value of the field the fact answers (another value tool results showed
for it, or another value its parameters allow), so that hedging over every value seen is no
answer. Facts are matched as whole tokens (`toolproof.meaning.values.tokens`), in one message
at a time.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from toolproof.graders.base import Alternatives, Evidence, Verdict, by_field
from toolproof.meaning.values import contains, tokens
from toolproof.spec.expectations import Expectations, Fact
from toolproof.transcript import MessageEvent, ToolCallEvent, Transcript


@dataclass
class Record:
    """What the agent said, message by message, and what tool results had shown it by then."""

    shown: list[list[str]] = field(default_factory=list)
    """The values of successful tool results, in order, as tokens."""
    said: list[tuple[list[str], int]] = field(default_factory=list)
    """Each agent message as tokens, with how many of `shown` came before it."""
    fields: dict[str, dict[str, list[list[str]]]] = field(default_factory=dict)
    """Each field of the successful tool results, by the tool that showed it, with every
    value it showed there, as tokens."""
    heard: list[str] = field(default_factory=list)
    """Everything the user said, as tokens."""
    written: dict[tuple[str, ...], str] = field(default_factory=dict)
    """How each value of `fields` was first written, to name it in a reason: tokens are
    stems ("pend" for "pending")."""


def record(transcript: Transcript) -> Record:
    """The transcript as fact grading reads it. A value a call returns that only repeats one
    of its own arguments is not evidence: a tool echoing what it was given shows nothing."""
    out = Record()
    heard: list[str] = []
    for event in transcript.events:
        if isinstance(event, ToolCallEvent) and not event.is_error:
            given = {
                tuple(tokens(v))
                for args in (event.arguments, event.tool_arguments)
                for v in _values(args or {})
            }
            for key, value in fielded(event.result, ""):
                said = tokens(value)
                if not said or tuple(said) in given:
                    continue
                out.shown.append(said)
                out.written.setdefault(tuple(said), value)
                values = out.fields.setdefault(key, {}).setdefault(event.canonical_name, [])
                if said not in values:
                    values.append(said)
        elif isinstance(event, MessageEvent) and event.role == "assistant":
            out.said.append((tokens(event.content), len(out.shown)))
        elif isinstance(event, MessageEvent):
            heard.append(event.content)
    out.heard = tokens(" ".join(heard))
    return out


def fielded(data: Any, key: str) -> Iterator[tuple[str, str]]:
    """Every text, number and boolean in a JSON value, with the key it is under (keys are
    names, not data; a value in a list is under the list's key)."""
    if isinstance(data, dict):
        for name, item in data.items():
            yield from fielded(item, str(name))
    elif isinstance(data, list):
        for item in data:
            yield from fielded(item, key)
    elif isinstance(data, str):
        yield key, data
    elif isinstance(data, bool):
        yield key, "true" if data else "false"
    elif isinstance(data, int | float):
        yield key, str(data)


def _values(data: Any) -> list[str]:
    """Every text, number and boolean in a JSON value, as JSON writes it (`false`, `12.5`),
    so that a `found_as` form can name one (keys are names, not data)."""
    return [value for _, value in fielded(data, "")]


UNSOURCED = "said before any tool result showed it"
HINT = (
    "if no tool shows it (policy, arithmetic), mark it {fact: ..., source: none}; if a tool "
    "shows it in another form (a code, a date format), list that form under found_as"
)
"""How a suite fixes a fact the oracle says before any tool result shows it as written."""


@dataclass(frozen=True)
class Status:
    """How a fact fared: 'said', 'hedged' (said, with `competing` values beside it),
    'unsourced' (said, but no earlier tool result showed it) or 'missing'."""

    status: str
    competing: tuple[str, ...] = ()


def fact_fields(fact: Fact, seen: Record, alternatives: Alternatives) -> list[str]:
    """The fields a fact answers: its own `field`, else those tool results showed it under
    and the parameters whose allowed values include it."""
    if fact.field is not None:
        return list(fact.field)
    forms = [tokens(form) for form in fact.sources]
    found = [
        key
        for key, by_tool in seen.fields.items()
        if any(v in forms for values in by_tool.values() for v in values)
    ]
    found += [
        key
        for key, allowed in by_field(alternatives).items()
        if key not in found and any(tokens(a) in forms for a in allowed)
    ]
    return found


def _rivals(
    key: str, forms: list[list[str]], seen: Record, alternatives: Alternatives
) -> list[list[str]]:
    """The values a field offers against a fact: the values its parameters allow, and those
    tool results showed for it, from a tool that showed the fact there or that takes the
    field as a parameter with allowed values (a payment's `status` does not compete with an
    order's)."""
    values = [tokens(a) for a in by_field(alternatives).get(key, ())]
    for tool, shown in seen.fields.get(key, {}).items():
        if key in alternatives.get(tool, {}) or any(v in forms for v in shown):
            values += shown
    return values


def competitors(
    fact: Fact,
    seen: Record,
    alternatives: Alternatives,
    others: list[list[str]],
) -> list[list[str]]:
    """The values that compete with a fact: every other value of the fields it answers, but
    the task's other facts, and values that contain a form of the fact or that a form
    contains ("not delivered", "delivered")."""
    forms = [tokens(form) for form in fact.sources]
    out: list[list[str]] = []
    for key in fact_fields(fact, seen, alternatives):
        for value in _rivals(key, forms, seen, alternatives):
            if not value or value in out:
                continue
            if any(contains(value, f) or contains(f, value) for f in forms):
                continue
            if any(contains(other, value) for other in others):
                continue
            out.append(value)
    return out


CONTRAST = frozenset(
    {"but", "however", "although", "though", "actually", "instead", "rather", "not", "no", "says"}
)
"""Words by which a message sets a value apart from its answer: a competing value the user
said ("the site still says shipped") may be named beside the answer in such a message."""


def fact_status(
    fact: Fact,
    seen: Record,
    alternatives: Alternatives | None = None,
    others: list[list[str]] | None = None,
) -> Status:
    """Whether a fact was said after a source, in a message that commits to it."""
    forms = [tokens(option) for option in fact.options]
    sources = [tokens(form) for form in fact.sources]
    rivals: list[list[str]] | None = None
    status = Status("missing")
    for message, known in seen.said:
        if not any(contains(message, form) for form in forms):
            continue
        if fact.source == "tools" and not any(
            contains(value, form) for value in seen.shown[:known] for form in sources
        ):
            if status.status == "missing":
                status = Status("unsourced")
            continue
        if rivals is None:
            rivals = competitors(fact, seen, alternatives or {}, others or [])
        contrasted = any(word in message for word in CONTRAST)
        beside = tuple(
            _as_written(r, seen, alternatives or {})
            for r in rivals
            if contains(message, r) and not (contrasted and contains(seen.heard, r))
        )
        if not beside:
            return Status("said")
        status = Status("hedged", beside)
    return status


def _as_written(value: list[str], seen: Record, alternatives: Alternatives) -> str:
    """A competing value as a tool result or a parameter's allowed values wrote it."""
    key = tuple(value)
    allowed = (a for values in by_field(alternatives).values() for a in values)
    return seen.written.get(key) or next(
        (a for a in allowed if tuple(tokens(a)) == key), " ".join(value)
    )


def grade_communication(expect: Expectations, evidence: Evidence) -> list[Verdict]:
    seen = record(evidence.transcript)
    verdicts: list[Verdict] = []
    if expect.must_say:
        verdicts.append(_must_say(expect, seen, evidence.alternatives))
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


def _must_say(expect: Expectations, seen: Record, alternatives: Alternatives) -> Verdict:
    facts = expect.facts()
    missing, unsourced, hedged = [], [], []
    for fact in facts:
        others = [tokens(o) for f in facts if f is not fact for o in f.options]
        result = fact_status(fact, seen, alternatives, others)
        shown = " or ".join(repr(o) for o in fact.options)
        if result.status == "missing":
            missing.append(shown)
        elif result.status == "unsourced":
            unsourced.append(shown)
        elif result.status == "hedged":
            rivals = ", ".join(repr(r) for r in result.competing)
            hedged.append(f"{fact.options[0]!r} beside {rivals}")
    problems = []
    if missing:
        problems.append(f"not said: {', '.join(missing)}")
    if unsourced:
        problems.append(f"{UNSOURCED}: {', '.join(unsourced)}")
    if hedged:
        problems.append(f"not committed to (competing values said with it): {'; '.join(hedged)}")
    return Verdict(
        grader="must_say",
        passed=not problems,
        reason="; ".join(problems) or "every fact said, each after a source",
    )
