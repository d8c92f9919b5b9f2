"""One definition of declining, and of giving a reason, for every rule that needs them.

A clause declines an action when it says the action cannot, may not or will not be done: a
negated ability or permission before the action's verb or a verb standing for it ("I can't
cancel it", "I'm unable to process that", "it can no longer be changed"), or the action said to
be no option ("that cancel isn't an option", "that's not something I'm able to do", "it is
non-refundable", "I have to say no to that one"). "I can't wait for you to enjoy it" declines
nothing: waiting is not the action.

A reason is a fact: the decline's message states (not denies) a value that makes the answer
no, such as the order's status or the window that closed.
"""

from __future__ import annotations

import re
from collections.abc import Container, Iterable, Sequence

from toolproof.meaning.actions import named_at
from toolproof.meaning.clauses import Clause, Reading
from toolproof.meaning.values import tokens

_MODAL_NOT = re.compile(
    r"\b(?:(?:won'?t|will not|wouldn'?t|would not) be able to|can ?not|can'?t|could ?not|"
    r"couldn'?t|won'?t|will not|wouldn'?t|would not|may not|"
    r"must not|mustn'?t|shouldn'?t|should not|unable to|not able to|no longer able to|"
    r"not allowed to|not permitted to|not in a position to|have no way to|no way (?:for me )?to|"
    r"(?:do|does|did)(?:n'?t| not) (?:allow|permit|let)(?: \w+)?(?: to)?|can no longer|"
    r"cannot any longer|not going to)\b",
    re.IGNORECASE,
)
"""A negated ability, permission or intention, before the verb it governs."""

_NO_OPTION = re.compile(
    r"\b(?:not (?:possible|allowed|permitted|eligible|available|an option|something (?:i|we)|"
    r"doable|feasible|within)|isn'?t (?:possible|allowed|permitted|eligible|available|an option|"
    r"something|\w+able)|aren'?t (?:possible|allowed|eligible|available|an option|\w+able)|"
    r"ineligible|"
    r"no longer (?:possible|eligible|available|an option|allowed)|non-?\w+able|not \w+able|"
    r"(?:have|need|got) to (?:say no|decline|refuse|turn (?:it|that|this) down)|"
    r"(?:must|will|'ll) (?:decline|refuse)|say no to|i wish i could|"
    r"(?:outside|past|beyond) (?:of )?(?:our |the |its )?(?:[\w-]+ ){0,3}(?:window|period|limit)|"
    r"there(?:'s| is| are) no (?:[\w-]+ ){0,3}(?:i|we) can|"
    r"nothing (?:more |else )?(?:to|i can|we can)|"
    r"can only be \w+ once|(?:against|outside) (?:our |the )?"
    r"(?:policy|rules)|policy (?:doesn'?t|does not|won'?t) (?:allow|permit|let))\b",
    re.IGNORECASE,
)
"""The action said to be no option, in words that carry the denial themselves."""

_FILLER = frozenset(
    {"be", "been", "really", "currently", "actually", "just", "go", "ahead", "and", "to",
     "me", "you", "us", "we", "i", "further", "possibly", "simply", "unfortunately", "still",
     "legally", "personally", "myself", "any", "longer", "the", "a", "an", "get", "have",
     "able", "another", "again", "more"}
)  # fmt: skip
"""Words between a negated modal and its verb ("can't really go ahead and cancel")."""

PRO_VERBS = (
    "do", "process", "make", "complete", "approve", "allow", "help", "honor", "honour",
    "accept", "proceed", "offer", "perform", "handle", "arrange", "authorize", "authorise",
    "grant", "provide", "share", "disclose", "reveal", "discuss", "give", "action", "fulfil",
    "issue", "send", "add", "offer",
    "fulfill", "execute", "apply", "change", "modify", "that", "this", "it", "one",
)  # fmt: skip
"""Verbs and words that stand for the action asked for ("I can't do that")."""

_PRO = tuple((t,) for v in PRO_VERBS for t in tokens(v))
_LIGHT_PRO = frozenset(tokens("do help"))
_ANAPHORS = frozenset(tokens("that this it so these those with"))
"""A light verb declines an action only with a word pointing at it ("I can't do that")."""

_CAUSE = re.compile(
    r"\b(?:because|since|as|due to|given that|owing to|so|which means|per|under|according to|"
    r"the reason)\b",
    re.IGNORECASE,
)
"""A word that introduces a cause."""


def declining_clauses(reading: Reading, action: Sequence[tuple[str, ...]] = ()) -> list[Clause]:
    """The clauses of a message that decline the action (named by `action`'s word
    sequences, or by a word that stands for it)."""
    out: list[Clause] = []
    for clause in reading.clauses:
        if clause.asks:
            continue
        text = clause.text.replace("\u2019", "'")
        modal = _MODAL_NOT.search(text)
        if (modal is not None and _governs(clause, text, modal.end(), action)) or (
            _NO_OPTION.search(text) and _in_clause(reading, clause, [*action, *_PRO])
        ):
            out.append(clause)
    return out


def _governs(clause: Clause, text: str, after: int, action: Sequence[tuple[str, ...]]) -> bool:
    """The negated modal governs the action's verb, or one standing for it, or nothing at all
    (a bare "I can't.")."""
    rest = tuple(t for t in tokens(text[after:]) if t not in _FILLER)
    if not rest:
        return True
    head = Reading(" ".join(rest), rest, (clause,))
    if rest[0] in _LIGHT_PRO and not (set(rest[1:3]) & _ANAPHORS):
        return False  # "couldn't do more": no action declined
    if 0 in named_at(head, [*action, *_PRO]):
        return True
    near = Reading(" ".join(rest[:4]), rest[:4], (clause,))
    return bool(action) and bool(named_at(near, action))


def _in_clause(reading: Reading, clause: Clause, forms: Sequence[tuple[str, ...]]) -> bool:
    return any(clause.start <= p < clause.end for p in named_at(reading, forms))


def declines(reading: Reading, action: Sequence[tuple[str, ...]] = ()) -> bool:
    """Whether the message declines the action (see `declining_clauses`)."""
    return bool(declining_clauses(reading, action))


def states(
    reading: Reading, values: Iterable[str], within: Container[int] | None = None
) -> list[str]:
    """The values the message states (in `within`, where given) where no negation denies them
    and nothing hedges them."""
    out: list[str] = []
    for value in values:
        for position in reading.find(tokens(value)):
            if within is not None and position not in within:
                continue
            clause = reading.clause_at(position)
            if not clause.denies(position) and not clause.hedged:
                out.append(value)
                break
    return out


_EXPLAINED = re.compile(r"[:\u2014\u2013]\s*(?:\S+\s+){2,}\S+|\s-\s(?:\S+\s+){2,}\S+")
"""A statement after a colon or a dash: "I can't refund it: refunds only go to the card"."""


def gives_cause(reading: Reading) -> bool:
    """The message gives a cause in words: "because ...", "since ...", "as ...", "due to"
    followed by at least two words, or an explanation after a colon or a dash."""
    for found in _CAUSE.finditer(reading.text):
        if len(tokens(reading.text[found.end() :])) >= 2:
            return True
    return _EXPLAINED.search(reading.text) is not None
