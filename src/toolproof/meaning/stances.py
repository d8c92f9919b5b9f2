"""What the agent held about a fact over the whole conversation.

Clause by clause, in order: a clause that states the fact (not denied, not hedged, not a
"should be delivered" of what has not happened) commits to it. Later, a clause that states a
rival value of the same field about the same record, from no named other source, takes it
back ("Sorry, correction: it is pending"), as does one that denies the fact ("the charge was
$179.00, not $358.00"), a correction that states another amount, time or date in its place
("Sorry, correction: the new total is $179.90"), or one that states another value of the
fact's own shape (a second tracking number). A rival beside the fact in the same message
leaves it undecided, as does a hedge ("it may be shipped", "either the first or the last",
"FedEx (or UPS)") and a rival offered with it as an alternative ("14:00 or 10:30"). A rival
said about another record (named by its id, or by values of its own other than the rival:
"your other order, from October 11, is cancelled"; another appointment of the same patient
is another record) or reported from a named source ("the order page still says processing",
"the website's 'shipped' status") is context, not a stance. A fact said in a message that
names an action ("Shall I refund the $40.00?", "I can book you at 09:00") is taken back by
a later message that reports that action with another value of the fact's kind in its
clause ("Done: $20.00 refunded", "Booked: Thursday at 08:00"), whatever record it names.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from toolproof.meaning.actions import Vocabulary, actions_named
from toolproof.meaning.clauses import Clause, Reading
from toolproof.meaning.records import Record, Records, referred
from toolproof.meaning.values import tokens

_REPORTED = re.compile(
    r"\b(?:says|said|saying|shows|showing|showed|lists|listing|listed|displays|displaying|reads|"
    r"reading|states|mentioned|according to|has it (?:as|at)|still has|reports|reported|"
    r"claims|indicates|website|web ?site|site|storefront|store front|order page|page|portal|"
    r"app|listing)\b",
    re.IGNORECASE,
)
"""A clause that reports what a source (a system, a page, the user) says, or names one."""

_CORRECTION = re.compile(
    r"^\W*(?:sorry|actually|correction|scratch that|my mistake|i misspoke|wait|on second thought)",
    re.IGNORECASE,
)
"""How a message that takes back what was said begins: what it reports is its own stance."""

_RULED_OUT = re.compile(
    r"\b(?:full|booked|taken|unavailable|too \w+|already|off|busy|closed|out of|only|"
    r"instead of|rather than|in place of|replacing|other|previous|old|former|earlier|"
    r"regular|usual|past|also|in case)\b",
    re.IGNORECASE,
)
"""Words by which a clause sets a value aside ("D1 is full", "the smaller vans are too
small", "your old van"): a rival said so is context."""

_UNREAL = frozenset(
    t
    for word in ("will", "would", "should", "once", "until", "when", "if", "ll", "expected",
                 "scheduled", "due")
    for t in (word, *tokens(word))
)  # fmt: skip
"""A word that puts what follows in the future or in a condition ("should be delivered")."""

_BE = frozenset({"be", "been", "get", "got", "being", "is", "s", "it"})


@dataclass(frozen=True)
class Rival:
    """Another value of the fact's field, as tokens, and how a message may name it."""

    shown: str
    forms: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class Said:
    """One agent message: read, whether a source had shown the fact before it, and whether
    it recites most of what the tools showed (a dump of everything seen answers nothing)."""

    reading: Reading
    sourced: bool
    recital: bool = False


@dataclass
class Stance:
    """Where the agent ended on a fact: 'said', 'missing', 'unsourced' (said before any source
    showed it), 'hedged' (said with a rival beside it, or undecided) or 'contradicted' (a
    later message took it back); `rivals` names the rival values involved."""

    status: str = "missing"
    rivals: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Fact:
    """A fact as its stance is read: its forms, its rivals, the records that hold it."""

    forms: Sequence[list[str]]
    rivals: Sequence[Rival]
    owners: Sequence[Record]
    records: Records
    names: bool = False
    """The fact names its record (a person, a product, a van): other records named beside
    it are other things, not other answers; only a message that takes the answer back
    ("Sorry, correction: ...") can give a rival."""
    actions: Vocabulary | None = None
    """The suite's write actions, to follow a value through the action it was said with."""
    others: frozenset[str] = frozenset()
    """The values of the task's other facts, as tokens: never a rival."""


def stance(fact: Fact, messages: Sequence[Said]) -> Stance:
    """The agent's final stance on a fact over the conversation (see the module)."""
    out = Stance()
    acted = Acted()
    for said in messages:
        reading = said.reading
        facts = _positions(reading, fact.forms)
        if facts:
            acted = _acted_with(reading, fact, facts)
        beside = _rivals_in(reading, fact, facts)
        if (
            fact.names
            and not _CORRECTION.match(reading.text)
            and not _enumerated(reading, fact, facts, beside)
        ):
            beside = []
        committed = [p for p in facts if _commits(reading, p, fact.names)]
        if committed and not said.sourced:
            if out.status == "missing":
                out.status = "unsourced"
            continue
        undecided = (
            _undecided(reading, fact)
            or _or_joined(reading, fact, facts)
            or said.recital
            or (bool(committed) and bool(_reshaped(reading, fact)))
        )
        if committed and not beside and not undecided:
            out = Stance("said")
        elif committed or (facts and out.status != "said" and not _denied(reading, facts)):
            out = Stance("hedged", [r.shown for r in beside])
        elif out.status == "said" and (beside or _denied(reading, facts)):
            out = Stance("contradicted", [r.shown for r in beside] or ["a denial of it"])
        elif out.status == "said" and not facts and (other := _taken_back(reading, fact, acted)):
            out = Stance("contradicted", [other])
        elif out.status == "said" and (undecided or _reshaped(reading, fact)):
            out = Stance("hedged", _reshaped(reading, fact))
    return out


def _enumerated(
    reading: Reading, fact: Fact, facts: Sequence[int], beside: Sequence[Rival]
) -> bool:
    """The message names every rival of a name as well as it, none set aside, and says the
    name only as one item of that list: beside a rival in its clause, or in a clause worded
    as a rival's is ("id: T-1; ... id: T-2"). It enumerates the candidates rather than naming
    the answer; "It goes on V114; the vans are V111, ..., V120" names it apart."""
    if not beside or len(beside) != len(fact.rivals):
        return False
    rivals = {
        p
        for rival in beside
        for form in rival.forms
        for start in reading.find(list(form))
        for p in range(start, start + len(form))
    }
    clauses = [c for c in reading.clauses if any(c.start <= p < c.end for p in rivals)]
    patterns = {_pattern(reading, c, rivals) for c in clauses}
    for position in facts:
        clause = reading.clause_at(position)
        if clause in clauses:
            continue
        span = set(range(position, position + max(len(f) for f in fact.forms)))
        if _pattern(reading, clause, span) not in patterns:
            return False
    return True


def _pattern(reading: Reading, clause: Clause, value: set[int]) -> tuple[str, ...]:
    """A clause's words with a value's tokens as one blank."""
    out: list[str] = []
    for p in range(clause.start, clause.end):
        if p not in value:
            out.append(reading.tokens[p])
        elif not out or out[-1] != "_":
            out.append("_")
    return tuple(out)


def _taken_back(reading: Reading, fact: Fact, acted: Acted) -> str | None:
    """Another value put in the fact's place by a correction or by the report of the action
    the fact was said with."""
    return _corrected_to(reading, fact) or _done_otherwise(reading, fact, acted)


def _corrected_to(reading: Reading, fact: Fact) -> str | None:
    """A message that takes back what was said ("Sorry, correction: the new total is
    $179.90") and states another value of the fact's own kind (an amount, a time, a date)
    in its place: that value."""
    if not _CORRECTION.match(reading.text):
        return None
    kinds = {_value_kind(t) for form in fact.forms for t in form} - {None}
    if len(kinds) != 1:
        return None
    own = {t for form in fact.forms for t in form}
    for position, token in enumerate(reading.tokens):
        if _value_kind(token) in kinds and token not in own and _commits(reading, position):
            return token
    return None


@dataclass(frozen=True)
class Acted:
    """The write actions a fact was said with, and whether it was said as money."""

    tools: frozenset[str] = frozenset()
    money: bool = False


def _acted(reading: Reading, fact: Fact) -> dict[str, list[int]]:
    """The write actions a message names where no negation denies them."""
    return actions_named(reading, fact.actions) if fact.actions is not None else {}


def _acted_with(reading: Reading, fact: Fact, facts: Sequence[int]) -> Acted:
    """The actions named in the clause that says the fact ("refund the $40.00"), or asked
    after it with no value of their own ("15:00 is open. Shall I book it?")."""
    kinds = {_value_kind(t) for form in fact.forms for t in form} - {None}
    clauses = {id(reading.clause_at(p)) for p in facts}
    tools = set()
    for tool, places in _acted(reading, fact).items():
        for place in places:
            clause = reading.clause_at(place)
            if _SUPPOSED.search(clause.text):
                continue
            bare = (
                clause.asks
                and place > min(facts)
                and not any(
                    _value_kind(reading.tokens[p]) in kinds for p in range(clause.start, clause.end)
                )
            )
            if id(clause) in clauses or bare:
                tools.add(tool)
    money = any(_money(reading, reading.tokens[p]) for p in facts)
    return Acted(frozenset(tools), money)


def _done_otherwise(reading: Reading, fact: Fact, acted: Acted) -> str | None:
    """A message that reports an action the fact was said with ("Shall I refund the
    $40.00?") with another value of the fact's kind in that action's sentence ("Done: $20.00
    refunded"): that value. Asked, hedged, denied or set aside ("your old slot"), it reports
    nothing."""
    kinds = {_value_kind(t) for form in fact.forms for t in form} - {None}
    money = acted.money and not kinds
    if not acted.tools or not (len(kinds) == 1 or money):
        return None
    own = {t for form in fact.forms for t in form}
    for tool, places in _acted(reading, fact).items():
        if tool not in acted.tools:
            continue
        sentences = {reading.clause_at(p).sentence for p in places}
        for clause in reading.clauses:
            if clause.sentence not in sentences or clause.asks:
                continue
            if _SET_ASIDE.search(_sentence_text(reading, clause)):
                continue
            for position in range(clause.start, clause.end):
                token = reading.tokens[position]
                if token in own or token in fact.others or not _commits(reading, position):
                    continue
                if _value_kind(token) in kinds or (money and _money(reading, token)):
                    return token
    return None


_SUPPOSED = re.compile(r"\b(?:would|could|if|unless|because|since|as)\b", re.IGNORECASE)
"""Words by which a clause supposes an action or gives a reason, rather than proposing or
reporting it: a value said there is not the action's."""

_SET_ASIDE = re.compile(
    r"\b(?:instead of|rather than|in place of|replacing|other|previous|old|former|earlier|"
    r"usual|regular|says|shows|still)\b",
    re.IGNORECASE,
)
"""Words by which a clause speaks of a value that is not the one the action used."""


def _money(reading: Reading, token: str) -> bool:
    """The message writes this number as an amount of money ("$20.00", "20 dollars")."""
    number = re.escape(token)
    return bool(
        re.search(rf"[$€£]\s?{number}(?:[.,]\d\d)?\b", reading.text)
        or re.search(
            rf"\b{number}(?:[.,]\d\d)?\s?(?:dollars|usd|euros?|eur|pounds|gbp)\b",
            reading.text,
            re.IGNORECASE,
        )
    )


def _value_kind(token: str) -> str | None:
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}|--\d{2}-\d{2}", token):
        return "date"
    if re.fullmatch(r"\d{2}:\d{2}(?::\d{2})?", token):
        return "time"
    if re.fullmatch(r"\d+\.\d+", token):
        return "amount"
    return None


def _positions(reading: Reading, forms: Sequence[list[str]]) -> list[int]:
    return sorted({p for form in forms for p in reading.find(form)})


def _commits(reading: Reading, position: int, name: bool = False) -> bool:
    """The clause states the value: not denied, not hedged, and (unless it is a name, which
    nothing puts in the future: "That would be Dr. Okafor") not said of what has not
    happened."""
    clause = reading.clause_at(position)
    return (
        not _denies(reading, clause, position)
        and not clause.hedged
        and (name or not _unreal(reading, position))
    )


def _denied(reading: Reading, facts: Sequence[int]) -> bool:
    return any(_denies(reading, reading.clause_at(p), p) for p in facts)


def _denies(reading: Reading, clause: Clause, position: int) -> bool:
    """The clause denies the value at this place, not just what is done around it: "we
    don't deliver at weekends" and "policy doesn't let me cancel within 24 hours" deny the
    doing, and the weekend and the 24 hours are its circumstances, said as they are; so is
    "weekend" in "there are no weekend deliveries". "It isn't at 14:00", "it's not shipped"
    and "it hasn't shipped" deny the value."""
    if not clause.denies(position):
        return False
    said = reading.tokens
    at = clause.negated_at
    assert at is not None
    negator = said[at]
    if negator == "no":
        value = said[position]
        return not (
            position == at + 1
            and value.isalpha()
            and position + 1 < clause.end
            and said[position + 1].isalpha()
            and said[position + 1] not in _FUNCTION_WORDS
        )
    copula = negator in _BE_NOT or (negator in ("not", "never") and at > 0 and said[at - 1] in _IS)
    return copula or said[position - 1] not in _CIRCUMSTANCE


_BE_NOT = frozenset({"isn", "aren", "wasn", "weren", "nothing", "none", "nor", "neither"})
_IS = frozenset({"is", "are", "was", "were", "s", "be", "been", "am", "m", "re"})
_CIRCUMSTANCE = frozenset(
    {"within", "at", "on", "in", "during", "before", "after", "until", "till", "by", "under",
     "over", "between", "from"}
)  # fmt: skip
"""Prepositions that give the time, place or limit of what is done."""
_FUNCTION_WORDS = frozenset(
    {"of", "to", "in", "at", "on", "for", "and", "or", "but", "is", "are", "was", "were", "the",
     "a", "an", "yet", "by", "with", "from", "s", "left", "more", "longer", "one"}
)  # fmt: skip


def _unreal(reading: Reading, position: int) -> bool:
    """A word said of what has not happened: "should be delivered", "once it's shipped"."""
    said = reading.tokens
    if any(c.isdigit() for c in said[position]):
        return False
    before = said[max(0, position - 4) : position]
    return bool(before) and before[-1] in _BE and any(t in _UNREAL for t in before)


def _rivals_in(reading: Reading, fact: Fact, facts: Sequence[int]) -> list[Rival]:
    """The rivals the message states about the fact's record, from no other source."""
    out: list[Rival] = []
    named = {
        p + i
        for rival in fact.rivals
        for form in rival.forms
        for p in reading.find(list(form))
        for i in range(len(form))
    }
    for rival in fact.rivals:
        for form in rival.forms:
            if any(
                _counts_against(reading, fact, p, named, facts) for p in reading.find(list(form))
            ):
                out.append(rival)
                break
    return out


def _counts_against(
    reading: Reading, fact: Fact, position: int, named: set[int], facts: Sequence[int]
) -> bool:
    if position in facts:
        return False
    clause = reading.clause_at(position)
    if clause.denies(position) or clause.asks or _unreal(reading, position):
        return False
    if clause.negated_at is not None or _RULED_OUT.search(_sentence_text(reading, clause)):
        return False  # said to be ruled out, not offered as the answer
    if _CORRECTION.match(reading.text):
        return True  # "Sorry, correction: it's the one on March 18": the answer, taken back
    if _REPORTED.search(_sentence_text(reading, clause)):
        return False
    return not _about_another(reading, clause, sorted(named), fact, position)


def _about_another(
    reading: Reading, clause: Clause, skip: Sequence[int], fact: Fact, at: int | None = None
) -> bool:
    """The clause (else its sentence) names a record that is neither the fact's nor linked
    to it, by values other than the rivals themselves; in a sentence that names several, the
    one named nearest before the place `at` (else nearest after it) is the one meant."""
    if not fact.owners:
        return False
    mine = {id(o) for o in fact.owners} | {
        id(r) for o in fact.owners for r in fact.records.linked(o)
    }
    keys = {o.key for o in fact.owners if o.key is not None}
    for scope in (_clause_span(clause), _sentence_span(reading, clause)):
        about = [
            (r, places)
            for r in fact.records.items
            if (places := referred(reading, r, fact.records, skip=skip, positions=scope))
        ]
        if not about:
            continue

        def theirs(record: Record) -> bool:
            if any(record is o for o in fact.owners) or (
                record.key is not None and record.key in keys
            ):
                return False
            if any(record.same_kind(o) for o in fact.owners):
                return True  # another appointment of the same patient is another thing
            return id(record) not in mine

        if at is None or len({id(r) for r, _ in about}) == 1:
            return all(theirs(r) for r, _ in about)
        nearest = min(about, key=lambda item: min(_distance(p, at) for p in item[1]))
        return theirs(nearest[0])
    return False


def _distance(place: int, at: int) -> int:
    """How far a reference is from a value: one before it is nearer than one after."""
    return at - place if place <= at else 1000 + place - at


def _sentence_text(reading: Reading, clause: Clause) -> str:
    return " ".join(c.text for c in reading.clauses if c.sentence == clause.sentence)


def _clause_span(clause: Clause) -> list[int]:
    return list(range(clause.start, clause.end))


def _sentence_span(reading: Reading, clause: Clause) -> list[int]:
    return [
        p for c in reading.clauses if c.sentence == clause.sentence for p in range(c.start, c.end)
    ]


_ALTERNATIVE = re.compile(r"^or\b(?=.*(?:\d|\b[A-Z]))")
"""A clause that adds an alternative value: "or UPS", "or November 1"."""


def _undecided(reading: Reading, fact: Fact) -> bool:
    """The message leaves an answer open: a hedged statement offering alternatives ("it's
    either the first or the last option", "or maybe to your Mastercard"), or an alternative
    value tacked on ("FedEx (or UPS, or USPS)", "unsubscribed - or opted in ... so treat it
    as unclear"), about no other record."""
    hedged = {c.sentence for c in reading.clauses if c.hedged and not c.asks}
    for clause in reading.clauses:
        text = clause.text.strip()
        offers = (
            (clause.hedged and re.search(r"\bor\b", text, re.I))
            or _ALTERNATIVE.match(text)
            or (clause.sentence in hedged and re.match(r"or\b", text, re.I))
        )
        if clause.asks or not offers:
            continue
        if not _about_another(reading, clause, (), fact):
            return True
    return False


OR_REACH = 8
"""The most words between an "or" and the alternative it offers ("15:00 - or it may have
gone in at 08:00")."""


def _or_joined(reading: Reading, fact: Fact, facts: Sequence[int]) -> bool:
    """The fact and a rival are offered as alternatives, "X or Y", in one sentence: "his
    email is lukas.dubois@... or ldubois@...", "Analytics Lead or Senior Analyst", "08:30 - or
    is it the 15:00 one?". Said so, neither is the answer, whoever else they belong to. The
    last two of a list ("A, B or C") are items of it, not alternatives."""
    said = reading.tokens
    rivals = sorted(
        {p for rival in fact.rivals for form in rival.forms for p in reading.find(list(form))}
    )
    width = max((len(f) for f in fact.forms), default=1)
    for start in facts:
        sentence = reading.clause_at(start).sentence
        for r in rivals:
            if reading.clause_at(r).sentence != sentence or reading.clause_at(r).denies(r):
                continue
            first, second = (start + width, r) if start < r else (r + 1, start)
            between = said[first:second]
            if "or" not in between or len(between) > OR_REACH + 1:
                continue
            items = [p for p in (*rivals, *facts) if reading.clause_at(p).sentence == sentence]
            if any(p < second and p not in (start, r) for p in items):
                continue  # one of a list ("the Tent, the Headlamp or the Sleeping Bag")
            return True
    return False


def _reshaped(reading: Reading, fact: Fact) -> list[str]:
    """Another value of the fact's own shape (an identifier of the same letters and digits
    pattern: "1Z7R52W60381740622" against "1Z7R52W60381740266", "GA-12B2DD82" against
    "GA-12B2DD28"), stated as a fact about no other record."""
    out: list[str] = []
    said = reading.tokens
    for form in fact.forms:
        if not any(_identifier(t) for t in form):
            continue
        shape = [_shape(t) if _identifier(t) else t for t in form]
        width = len(form)
        for i in range(len(said) - width + 1):
            window = list(said[i : i + width])
            if window == form or [_shape(t) if _identifier(t) else t for t in window] != shape:
                continue
            if fact.records.named("".join(window)) is not None:
                continue  # another record's own identity: another thing, not another answer
            clause = reading.clause_at(i)
            if clause.denies(i) or _about_another(reading, clause, (), fact):
                continue
            out.append(" ".join(window))
    return out


def _identifier(token: str) -> bool:
    """A token that names one thing: digits with letters (W11177, 1Z7R52...), or a phone
    number; not a date, a time or an amount."""
    letters = any(c.isalpha() for c in token)
    return len(token) >= 6 and any(c.isdigit() for c in token) and (letters or token[0] == "#")


def _shape(token: str) -> tuple[int, bool, bool]:
    """What an identifier looks like, coarsely: its length, and whether it has letters and
    digits ("0ACD9264" is the shape of "ACB2F8A2")."""
    return len(token), any(c.isalpha() for c in token), any(c.isdigit() for c in token)
