"""A message as clauses: which of its tokens each holds, whether it asks, and which of its
tokens are denied or left undecided.

Every rule that asks what a message *means* (did it commit to a value, propose a write,
decline an action, say yes) reads it clause by clause, because meaning lives there: "it is
pending, not delivered" states `pending` and denies `delivered`; "I will not cancel anything.
Shall I double-check?" proposes no cancellation. The grammar is shallow on purpose (sentences,
then clauses at commas, colons, dashes, brackets and words of contrast) and the same for every
rule. A value is found in the whole message's tokens (so "Thursday, March 12, 2026" stays one
date) and belongs to the clause it starts in.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from functools import lru_cache

from toolproof.meaning.values import same_token, tokens

_BREAK = re.compile(r"[.!?;]+(?=\s|$)|\n+")
"""A candidate end of a sentence: . ! ? or ; before a space, or a line break."""

_NOT_AN_END = re.compile(
    r"(?:\b[A-Z]|\b(?:Dr|Mr|Ms|Mrs|St|No|vs|Jr|Sr|Ave|Rd|Ln|Blvd|e\.g|i\.e|a\.m|p\.m|etc))$"
)
"""What comes before a point that does not end a sentence: an initial, a title or an
abbreviation ("Dr. Lind", "3 p.m. tomorrow")."""

_WEEKDAYS = r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|mon|tue|wed|thu|fri|sat|sun"

_CLAUSE_BREAK = re.compile(
    r",\s+(?!\d)"
    r"|:\s+|\s+[-\u2013\u2014]+\s+|[\u2013\u2014]|\s*\(|\)"
    r"|\s+(?=(?:but|however|although|though|whereas|instead of|rather than|unless|because|"
    r"since|so|which|while|once|until)\b|as (?:it|the|this|that|there|your|we|i|you|he|she|they|"
    r"its|our)\b)",
    re.IGNORECASE,
)
"""Where a clause ends inside a sentence: a comma before a word, a colon, a dash or a bracket,
and before a word of contrast."""

_WEEKDAY_BEFORE = re.compile(rf"\b(?:{_WEEKDAYS})$", re.IGNORECASE)
"""A weekday before a comma belongs with the date after it ("Thursday, March 12")."""

_NEGATOR = re.compile(
    r"\b(?:not|never|no|nothing|none|nor|neither|without|cannot|instead of|rather than|"
    r"unable|\w+n't)\b",
    re.IGNORECASE,
)
"""A word that denies what follows it, to the end of its clause."""

_HEDGE = re.compile(
    r"\bmay\b(?!\s+\d)|\b(?:might|maybe|perhaps|possibly|probably|could be|either|unsure|"
    r"not sure|not certain|uncertain|i think|i believe|i guess|seems?|appears?|likely|"
    r"unclear|or so|or (?:else|otherwise))\b",
    re.IGNORECASE,
)
"""A word that leaves what follows undecided ("it may be shipped", "either the first or the
last"); "May 5" is a date, not a hedge."""

_ASKS = re.compile(
    r"^\W*(?:shall|should|would|will|could|can|may|do|does|did|is|are|was|were|have|has|"
    r"want|what|which|when|where|who|how|any|anything|ok|okay|alright|all right|sound|"
    r"right|correct)\b",
    re.IGNORECASE,
)
"""How a clause that asks begins."""


@dataclass(frozen=True)
class Clause:
    """One clause of a message: its tokens are `Reading.tokens[start:end]`."""

    text: str
    start: int
    end: int
    sentence: int
    """Which sentence of the message it is in (clauses of one sentence share it)."""
    asks: bool
    """It asks: its sentence ends in "?" and it is that sentence's asking part."""
    negated_at: int | None
    """The message token from which the clause is denied, to its end; None: nothing is."""
    hedged: bool
    """Something in it leaves what it says undecided ("may", "either", "not sure")."""

    def denies(self, position: int) -> bool:
        """Whether the message token at this position is under the clause's negation (a
        value that starts with the negation itself, "not on your account", carries it)."""
        return self.negated_at is not None and position > self.negated_at


@dataclass(frozen=True)
class Reading:
    """A message read: its tokens, and its clauses over them."""

    text: str
    tokens: tuple[str, ...]
    clauses: tuple[Clause, ...]

    def clause_at(self, position: int) -> Clause:
        """The clause a token belongs to."""
        starts = [c.start for c in self.clauses]
        return self.clauses[max(0, bisect_right(starts, position) - 1)]

    def find(self, value: list[str]) -> list[int]:
        """Where a value's tokens start in the message, each place once."""
        return places(self.tokens, value)


def read(text: str) -> Reading:
    """The message as tokens and clauses."""
    return _read(text.replace("\u2019", "'"))


@lru_cache(maxsize=2048)
def _read(text: str) -> Reading:
    said = tuple(tokens(text))
    found: list[Clause] = []
    for number, (begin, sentence) in enumerate(_sentences(text)):
        question = sentence.rstrip().endswith("?")
        parts = _parts(sentence)
        asking = _asking_part([p for _, p in parts]) if question else 0
        for i, (at, part) in enumerate(parts):
            start = len(tokens(text[: begin + at]))
            end = start + len(tokens(part))
            negation = _NEGATOR.search(part)
            negated_at = None
            if negation is not None:
                negated_at = start + len(tokens(part[: negation.start()]))
            found.append(
                Clause(
                    text=part.strip(),
                    start=start,
                    end=end,
                    sentence=number,
                    asks=question and i >= asking,
                    negated_at=negated_at,
                    hedged=_HEDGE.search(part) is not None,
                )
            )
    if not found:
        found.append(Clause(text, 0, len(said), 0, False, None, False))
    return Reading(text, said, tuple(found))


def _sentences(text: str) -> list[tuple[int, str]]:
    """Each sentence with where it starts."""
    out: list[tuple[int, str]] = []
    start = 0
    for found in _BREAK.finditer(text):
        before = text[start : found.start()]
        if found.group() == "." and _NOT_AN_END.search(before):
            continue
        out.append((start, text[start : found.end()]))
        start = found.end()
    out.append((start, text[start:]))
    return [(at, s) for at, s in out if s.strip()]


def _parts(sentence: str) -> list[tuple[int, str]]:
    """A sentence's clauses, each with where it starts in the sentence."""
    out: list[tuple[int, str]] = []
    start = 0
    for found in _CLAUSE_BREAK.finditer(sentence):
        if found.group().startswith(",") and _WEEKDAY_BEFORE.search(sentence[: found.start()]):
            continue
        out.append((start, sentence[start : found.start()]))
        start = found.end()
    out.append((start, sentence[start:]))
    return [(at, p) for at, p in out if re.search(r"\w", p)] or [(0, sentence)]


def _asking_part(parts: list[str]) -> int:
    """The first clause of a question's sentence that asks: the last clause that begins as a
    question does ("Your order shipped, is there anything else?"), else the whole sentence."""
    for i in range(len(parts) - 1, -1, -1):
        if _ASKS.match(parts[i]):
            return i
    return 0


def places(haystack: tuple[str, ...] | list[str], needle: list[str]) -> list[int]:
    """Where the needle's tokens start in the haystack, together and in order (a date with a
    year and the same date without one count as one token)."""
    if not needle:
        return []
    width = len(needle)
    first = needle[0]
    dated = any("-" in t for t in needle)
    return [
        i
        for i in range(len(haystack) - width + 1)
        if (haystack[i] == first or (dated and same_token(first, haystack[i])))
        and all(same_token(needle[j], haystack[i + j]) for j in range(1, width))
    ]
