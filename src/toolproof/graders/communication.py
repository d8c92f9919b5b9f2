"""Communication graders: facts the user must hear, things never to say, the turn budget.

`must_say` reads each fact's stance over the whole conversation (`toolproof.meaning.stances`),
message by message and clause by clause: where the agent ended on it, not whether one message
holds it. A fact is said where a clause states one of its forms (as whole tokens:
`toolproof.meaning.values.tokens`) without denying, hedging or putting it in the future, and
no later message takes it back. A fact counts only once a successful tool result has shown it
(in any of its forms, `found_as` included; a value a call returns that only echoes one of its
arguments shows nothing), unless the task marks it as the user's own words or as needing no
source: said before that, it is 'unsourced'. A fact worked out from values the tools show
(`computed`: a sum, a difference, a product) counts once they have shown every operand.

Its rivals are the other values of the fields it answers (its `field`, else the fields tool
results showed it under and the parameters whose allowed values include it): every value tool
results showed there and every allowed value, less the task's other facts and values that
contain a form of the fact or that a form contains; where the fact is part of a value (the
surname of a doctor's name), the same part of each rival; a name also by its shorter forms. A
rival stated beside the fact leaves it 'hedged', as does an alternative offered ("or maybe
...") or a hedge; one stated in a later message, or a later denial, leaves it 'contradicted',
as does a later report of the action the fact was said with that states another value of
its kind ("Shall I refund the $40.00?", then "Done: $20.00 refunded").
A rival said about another record or reported from a named source ("the order page still says
processing") is context, not a rival; where the fact names its record (a person's or a
product's name, a record's id) other records' names beside it are other things, and only a
correction can give a rival. A message that recites most of what the tools showed (a
`RECITAL_SHARE` of at least `RECITAL_VALUES` values) answers nothing: a fact in it is hedged.

`must_not_say` fails on any agent message that contains a forbidden text as tokens: whole, or
for a person's name by its last name or its first name and initial ("Reyes", "Sofia R." for
"Sofia Reyes"); a date the message writes two ways is read month first (04/07 is April 7).
`max_turns` counts the agent's messages.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from toolproof.graders.base import Alternatives, Evidence, Verdict, by_field
from toolproof.meaning.actions import Vocabulary, vocabulary
from toolproof.meaning.clauses import Reading, read
from toolproof.meaning.records import NAME_FIELD, Records, short_names
from toolproof.meaning.records import Record as MeaningRecord
from toolproof.meaning.stances import Fact as StancedFact
from toolproof.meaning.stances import Rival, Said, stance
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
    readings: list[Reading] = field(default_factory=list)
    """Each agent message, read into clauses (in the order of `said`)."""
    records: Records = field(default_factory=Records)
    """The records the successful tool results showed."""
    written: dict[tuple[str, ...], str] = field(default_factory=dict)
    """How each value of `fields` was first written, to name it in a reason: tokens are
    stems ("pend" for "pending")."""


def record(transcript: Transcript) -> Record:
    """The transcript as fact grading reads it. A value a call returns that only repeats one
    of its own arguments is not evidence: a tool echoing what it was given shows nothing."""
    out = Record()
    heard: list[str] = []
    for event in transcript.events:
        if isinstance(event, ToolCallEvent) and event.by == "agent" and not event.is_error:
            out.records.add(event.result, event.canonical_arguments, event.canonical_name)
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
                field = key.lower()
                values = out.fields.setdefault(field, {}).setdefault(event.canonical_name, [])
                if said not in values:
                    values.append(said)
        elif isinstance(event, MessageEvent) and event.role == "assistant":
            reading = read(event.content)
            out.said.append((list(reading.tokens), len(out.shown)))
            out.readings.append(reading)
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
    "if no tool shows it (policy), mark it {fact: ..., source: none}; if it is worked out "
    "from values tools show, say how (computed: {op: sum, of: [...]}); if a tool "
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
    """The fields a fact answers: its own `field`, else those tool results showed it in (as
    the value, or a part of it: "Ortiz" of "Dr. Rafael Ortiz") and the parameters whose
    allowed values include it."""
    if fact.field is not None:
        return [f.lower() for f in fact.field]
    forms = [tokens(form) for form in fact.sources]
    found = [
        key
        for key, by_tool in seen.fields.items()
        if any(contains(v, f) for values in by_tool.values() for v in values for f in forms)
    ]
    found += [
        key
        for key, allowed in _allowed(alternatives).items()
        if key not in found and any(tokens(a) in forms for a in allowed)
    ]
    return found


def _allowed(alternatives: Alternatives) -> dict[str, tuple[str, ...]]:
    """The allowed values of each field, its name in lower case (`Email` is `email`)."""
    return {name.lower(): values for name, values in by_field(alternatives).items()}


def _rivals(key: str, seen: Record, alternatives: Alternatives) -> list[list[str]]:
    """Every value a field offers against a fact: the values its parameters allow, and every
    value any tool result showed for it."""
    values = [tokens(a) for a in _allowed(alternatives).get(key, ())]
    for shown in seen.fields.get(key, {}).values():
        values += shown
    return values


def _part(value: list[str], forms: list[list[str]], rival: list[str]) -> list[str]:
    """The part of a rival that competes with a fact said as part of a value: the tokens at
    the fact's place in it (the time of a date-time, the surname of a doctor's name)."""
    for form in forms:
        for i in range(len(value) - len(form) + 1):
            if value[i : i + len(form)] == form and len(rival) == len(value):
                return rival[i : i + len(form)]
    return rival


def competitors(
    fact: Fact,
    seen: Record,
    alternatives: Alternatives,
    others: list[list[str]],
) -> list[list[str]]:
    """The values that compete with a fact: every other value of the fields it answers (the
    matching part, where the fact is part of a value), but the task's other facts, and values
    that contain a form of the fact or that a form contains ("not delivered", "delivered")."""
    forms = [tokens(form) for form in fact.sources]
    out: list[list[str]] = []
    for key in fact_fields(fact, seen, alternatives):
        holders = [
            v
            for values in seen.fields.get(key, {}).values()
            for v in values
            if any(contains(v, f) for f in forms)
        ]
        for whole in _rivals(key, seen, alternatives):
            value = _part(holders[0], forms, whole) if holders else whole
            if not value or value in out:
                continue
            if any(contains(value, f) or contains(f, value) for f in forms):
                continue
            if any(contains(other, value) for other in others):
                continue
            out.append(value)
    return out


def _rival_forms(
    fact: Fact, seen: Record, alternatives: Alternatives, others: list[list[str]]
) -> list[Rival]:
    """The competitors as a message may name them: whole, and a name by a shorter form."""
    keys = fact_fields(fact, seen, alternatives)
    named = any(NAME_FIELD.search(k) for k in keys)
    out = []
    for value in competitors(fact, seen, alternatives, others):
        text = _as_written(value, seen, alternatives)
        forms = [tuple(value)]
        if "_" in text and text.replace("_", "").isalpha():
            forms.append(tuple(tokens(text.replace("_", " "))))  # opted_in said "opted in"
        if named:
            forms += [
                tuple(f)
                for f in short_names(text)
                if f and f not in [tokens(o) for o in fact.sources]
            ]
        out.append(Rival(text, tuple(forms)))
    return out


def _is_a_name(fact: Fact, owners: list[MeaningRecord]) -> bool:
    """The fact names its record (a product's own name, a van's id): other records' names
    are other things said beside it, not other answers, so a rival beside it counts only in
    a correction. A plain "Dr. Amara Okafor or Dr. Lind" therefore commits to the name; only
    an alternative set off as a clause of its own ("Dr. Amara Okafor (or Dr. Lind)", ", or
    Dr. Lind") or a hedge ("it may be Dr. Amara Okafor or Dr. Lind") leaves it undecided."""
    forms = [tokens(form) for form in fact.sources]
    if any(r.key is not None and tokens(r.key) in forms for r in owners):
        return True
    held = [
        f for r in owners for f, v in r.values if any(contains(tokens(v), form) for form in forms)
    ]
    return any(OWN_NAME.match(f) for f in held)


OWN_NAME = re.compile(
    r"^(?:(?:first|last|full|given|family|display)_?)?name$|^(?:title|label)$", re.I
)
"""A field that names its own record (a person's first name, a product's name)."""


def _as_written(value: list[str], seen: Record, alternatives: Alternatives) -> str:
    """A competing value as a tool result or a parameter's allowed values wrote it; a part of
    a value (the "Amara Okafor" of "Dr. Amara Okafor") as the words that wrote that part."""
    key = tuple(value)
    allowed = [a for values in by_field(alternatives).values() for a in values]
    whole = seen.written.get(key) or next((a for a in allowed if tuple(tokens(a)) == key), None)
    if whole is not None:
        return whole
    holders = [text for said, text in seen.written.items() if contains(list(said), value)]
    for text in [*holders, *(a for a in allowed if contains(tokens(a), value))]:
        words = text.split()
        for start in range(len(words)):
            for end in range(start + 1, len(words) + 1):
                if tuple(tokens(" ".join(words[start:end]))) == key:
                    return " ".join(words[start:end]).strip(".,;:()")
    return " ".join(value)


_PERSON = re.compile(r"^(?:(?:Dr|Mr|Mrs|Ms)\.? )?[A-Z][a-z'-]+(?: [A-Z][a-z'-]+)+$")
"""A person's name: two or more capitalized words, with a title or not."""


def _said_as(text: str) -> list[list[str]]:
    """The forms a forbidden text may be said in: whole, and a person's name by its last
    name or its first name and initial ("Reyes", "Sofia R." for "Sofia Reyes")."""
    forms = [tokens(text)]
    if _PERSON.match(text.strip()):
        forms += short_names(text)
    return forms


def _owners(fact: Fact, seen: Record) -> list[MeaningRecord]:
    """The records that hold the fact as one of their values (or a part of one)."""
    forms = [tokens(form) for form in fact.sources]
    return [
        r
        for r in seen.records.items
        if any(contains(tokens(v), f) for _, v in r.values for f in forms)
    ]


RECITAL_SHARE = 0.8
"""A message that states at least this share of the values tool results showed (of at least
`RECITAL_VALUES` of them) recites everything it saw: no fact in it is an answer."""
RECITAL_VALUES = 8


def recites(reading: Reading, seen: Record) -> bool:
    """Whether the message is a recital of what the tools showed rather than an answer."""
    values = {
        tuple(tokens(v))
        for r in seen.records.items
        for _, v in r.values
        if v not in ("true", "false") and 0 < len(tokens(v)) <= 8
    }
    if len(values) < RECITAL_VALUES:
        return False
    stated = sum(1 for v in values if reading.find(list(v)))
    return stated >= RECITAL_SHARE * len(values)


def sourced(fact: Fact, sources: list[list[str]], shown: list[list[str]]) -> bool:
    """Whether the values tool results have shown ground the fact: one of its forms, or
    for a computed fact every one of its operands (each compared as a number)."""
    if fact.source != "tools":
        return True
    if any(contains(value, form) for value in shown for form in sources):
        return True
    if fact.computed is None:
        return False
    operands = [tokens(o) for o in fact.computed.of]
    return all(any(contains(value, o) for value in shown) for o in operands)


def fact_status(
    fact: Fact,
    seen: Record,
    alternatives: Alternatives | None = None,
    others: list[list[str]] | None = None,
    actions: Vocabulary | None = None,
) -> Status:
    """The agent's stance on a fact over the whole conversation
    (`toolproof.meaning.stances`): said after a source and never taken back."""
    forms = [tokens(option) for option in fact.options]
    sources = [tokens(form) for form in fact.sources]
    messages = [
        Said(reading, sourced(fact, sources, seen.shown[:known]), recites(reading, seen))
        for reading, (_, known) in zip(seen.readings, seen.said, strict=True)
    ]
    owners = _owners(fact, seen)
    rivals = _rival_forms(fact, seen, alternatives or {}, others or [])
    names = _is_a_name(fact, owners)
    taken = frozenset(t for other in others or [] for t in other)
    fact_read = StancedFact(forms, rivals, owners, seen.records, names, actions, taken)
    found = stance(fact_read, messages)
    return Status(found.status, tuple(found.rivals))


def grade_communication(expect: Expectations, evidence: Evidence) -> list[Verdict]:
    seen = record(evidence.transcript)
    verdicts: list[Verdict] = []
    if expect.must_say:
        words = vocabulary(evidence.write_tools, evidence.read_tools, evidence.descriptions)
        verdicts.append(_must_say(expect, seen, evidence.alternatives, words))
    if expect.must_not_say:
        leaked = [
            repr(s)
            for s in expect.must_not_say
            if any(
                contains([t.split("|")[0] for t in message], form)  # 04/07: as written, July 4
                for message, _ in seen.said
                for form in _said_as(s)
            )
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


def _must_say(
    expect: Expectations, seen: Record, alternatives: Alternatives, words: Vocabulary
) -> Verdict:
    facts = expect.facts()
    missing, unsourced, hedged, taken = [], [], [], []
    for fact in facts:
        others = [tokens(o) for f in facts if f is not fact for o in f.options]
        result = fact_status(fact, seen, alternatives, others, words)
        shown = " or ".join(repr(o) for o in fact.options)
        if result.status == "missing":
            missing.append(shown)
        elif result.status == "unsourced":
            unsourced.append(shown)
        elif result.status == "hedged" and result.competing:
            rivals = ", ".join(repr(r) for r in result.competing)
            hedged.append(f"{fact.options[0]!r} beside {rivals}")
        elif result.status == "hedged":
            hedged.append(f"{fact.options[0]!r} left undecided")
        elif result.status == "contradicted":
            rivals = ", ".join(repr(r) for r in result.competing)
            taken.append(f"{fact.options[0]!r}, then {rivals}")
    problems = []
    if missing:
        problems.append(f"not said: {', '.join(missing)}")
    if unsourced:
        problems.append(f"{UNSOURCED}: {', '.join(unsourced)}")
    if hedged:
        problems.append(f"not committed to (competing values said with it): {'; '.join(hedged)}")
    if taken:
        problems.append(f"taken back later (a competing value said after it): {'; '.join(taken)}")
    return Verdict(
        grader="must_say",
        passed=not problems,
        reason="; ".join(problems) or "every fact said, each after a source",
    )
