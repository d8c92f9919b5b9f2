"""What the agent held about a fact over the whole conversation.

Clause by clause, in order: a clause that states the fact (not denied, not hedged) commits to
it; a later clause that states a rival value of the same field, about the same record and
from no named other source, takes it back ("Sorry, correction: it is pending"); a rival beside
the fact in the same message leaves it undecided, as does a hedge ("it may be shipped", "either
the first or the last"). A rival said about another record (named by its id, or by values of
its own other than the rival: "your other order, from October 11, is cancelled") or reported
from a named source ("the order page still says processing") is context, not a stance.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from toolproof.meaning.clauses import Clause, Reading
from toolproof.meaning.records import Record, Records, referred

_REPORTED = re.compile(
    r"\b(?:says?|said|shows?|showed|shown|lists?|listed|displays?|reads|states|mentioned|"
    r"according to|has it (?:as|at)|still has|reports?|reported|claims?|indicates?)\b",
    re.IGNORECASE,
)
"""A clause that reports what a source (a system, a page, the user) says."""


@dataclass(frozen=True)
class Rival:
    """Another value of the fact's field, as tokens, and how a message may name it."""

    shown: str
    forms: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class Said:
    """One agent message: read, and whether a source had shown the fact before it."""

    reading: Reading
    sourced: bool


@dataclass
class Stance:
    """Where the agent ended on a fact: 'said', 'missing', 'unsourced' (said before any source
    showed it), 'hedged' (said with a rival beside it, or undecided) or 'contradicted' (a
    later message gave a rival); `rivals` names the rival values involved."""

    status: str = "missing"
    rivals: list[str] = field(default_factory=list)


def stance(
    forms: Sequence[list[str]],
    messages: Sequence[Said],
    rivals: Sequence[Rival],
    owners: Sequence[Record],
    records: Records,
) -> Stance:
    """The agent's final stance on a fact, given the records that hold it (`owners`)."""
    out = Stance()
    for said in messages:
        reading = said.reading
        facts = _positions(reading, forms)
        beside = _rivals_in(reading, rivals, facts, owners, records)
        committed = [p for p in facts if _commits(reading, p)]
        if committed and not said.sourced:
            if out.status == "missing":
                out.status = "unsourced"
            continue
        if committed and not beside:
            out = Stance("said")
        elif committed or (facts and out.status != "said"):
            out = Stance("hedged", [r.shown for r in beside])
        elif beside and out.status == "said":
            out = Stance("contradicted", [r.shown for r in beside])
        elif out.status == "said" and _undecided(reading, owners, records):
            out = Stance("hedged", [])
    return out


def _positions(reading: Reading, forms: Sequence[list[str]]) -> list[int]:
    return sorted({p for form in forms for p in reading.find(form)})


def _commits(reading: Reading, position: int) -> bool:
    clause = reading.clause_at(position)
    return not clause.denies(position) and not clause.hedged


def _rivals_in(
    reading: Reading,
    rivals: Sequence[Rival],
    facts: Sequence[int],
    owners: Sequence[Record],
    records: Records,
) -> list[Rival]:
    """The rivals the message states about the fact's record, from no other source."""
    out: list[Rival] = []
    named = {
        p + i
        for rival in rivals
        for form in rival.forms
        for p in reading.find(list(form))
        for i in range(len(form))
    }
    for rival in rivals:
        for form in rival.forms:
            for position in reading.find(list(form)):
                if position in facts:
                    continue
                clause = reading.clause_at(position)
                if clause.denies(position) or clause.asks:
                    continue
                skip = sorted(named)
                if _reported(clause) or _about_another(reading, clause, skip, owners, records):
                    continue
                out.append(rival)
                break
            if rival in out:
                break
    return out


def _reported(clause: Clause) -> bool:
    return _REPORTED.search(clause.text) is not None


def _about_another(
    reading: Reading,
    clause: Clause,
    skip: Sequence[int],
    owners: Sequence[Record],
    records: Records,
) -> bool:
    """The clause (else its sentence) names a record that is not the fact's, and not the
    fact's own, by values other than the rival itself."""
    if not owners:
        return False
    kinds = {o.kind for o in owners}
    keys = {o.key for o in owners}
    for scope in (_clause_span(clause), _sentence_span(reading, clause)):
        about = [
            r
            for r in records.items
            if r.kind in kinds and referred(reading, r, records, skip=skip, positions=scope)
        ]
        if about:
            return all(r.key not in keys for r in about)
    return False


def _clause_span(clause: Clause) -> list[int]:
    return list(range(clause.start, clause.end))


def _sentence_span(reading: Reading, clause: Clause) -> list[int]:
    return [
        p for c in reading.clauses if c.sentence == clause.sentence for p in range(c.start, c.end)
    ]


def _undecided(reading: Reading, owners: Sequence[Record], records: Records) -> bool:
    """A later message that leaves the answer open ("it's either the first or the last
    option"): a hedged statement offering alternatives, about no other record."""
    for clause in reading.clauses:
        if clause.asks or not clause.hedged or " or " not in f" {clause.text.lower()} ":
            continue
        if not _about_another(reading, clause, (), owners, records):
            return True
    return False
