"""One definition of declining, and of giving a reason, for every rule that needs them.

A clause declines an action when it says the action cannot, may not or will not be done: a
negated ability or permission before the action's verb or a verb standing for it ("I can't
cancel it", "I'm unable to process that", "it can no longer be changed", "that's too late to
cancel", "the $30 can't be returned"), or the action said to be no option ("that cancel isn't
an option", "that's not something I'm able to do", "it is non-refundable", "I have to say no
to that one", "so that's off the table", "there's nothing left to refund"). "I can't wait for
you to enjoy it" declines nothing: waiting is not the action.

A reason is a fact: the decline's message states (not denies, hedges, asks or foretells) a
value that makes the answer no, such as the order's status or the window that closed; or,
where no fact is known, a cause in words ("because ...", ", so ...", "as it ...", a statement
after a colon or a dash; not "so sorry", not "under any circumstances", not "14:00 with Dr.
Lind", and not the decline itself after a dash).

Where a reason is looked for (`explained`), for every rule: the message that declines; or,
where it gives none, the agent's next message when that one is the one that explains: it
begins by pointing back at the decline or with a cause ("Because it shipped.", "It was
delivered on November 8."), or nothing was written in between (a booking made in between
moves the conversation on). A reason said later than that is none.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Container, Iterable, Sequence

from toolproof.meaning.actions import named_at
from toolproof.meaning.clauses import Clause, Reading
from toolproof.meaning.values import tokens

_MODAL_NOT = re.compile(
    r"\b(?:(?:won'?t|will not|wouldn'?t|would not) be able to|can ?not|can'?t|could ?not|"
    r"couldn'?t|won'?t|will not|wouldn'?t|would not|may not|"
    r"must not|mustn'?t|shouldn'?t|should not|unable to|not able to|no longer able to|"
    r"not allowed to|not permitted to|not in a position to|have no way to|no way (?:for me )?to|"
    r"(?:do|does|did)(?:n'?t| not) (?:allow|permit|let)(?: \w+)?(?: to)?|can no longer|"
    r"cannot any longer|not going to|too late to)\b",
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
    r"nothing (?:more |else |left )?(?:to|i can|we can)|off the table|out of the question|"
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
    "issue", "send", "add", "offer", "tell", "return", "copy", "overwrite",
    "fulfill", "execute", "apply", "change", "modify", "that", "this", "it", "one",
)  # fmt: skip
"""Verbs and words that stand for the action asked for ("I can't do that")."""

_PRO = tuple((t,) for v in PRO_VERBS for t in tokens(v))
_LIGHT_PRO = frozenset(tokens("do help"))
_TELL_HOW = tuple(tokens("tell how"))
_ANAPHORS = frozenset(tokens("that this it so these those with"))
"""A light verb declines an action only with a word pointing at it ("I can't do that")."""

_CAUSE = re.compile(
    r"\b(?:because|since|due to|given that|owing to|which means|according to|the reason|"
    r"(?:that|which|this)(?:'s| is) why|"
    r"as (?=(?:it|it's|the|this|that|there|your|we|i|you|he|he's|she|she's|they|its|our|his|"
    r"her|their|a|an|each|every|only|no)\b)|"
    r"per (?=(?:the|our|its|this|that|their|\w+'s)\b)|"
    r"under (?=(?:the|our|its|this|that|these|those|their|\w+'s)\b))|"
    r"(?:^|(?<=[,;:.!?])\s*|(?<=\s[-\u2013\u2014])\s*|\band\s+)so\b"
    r"(?!\s+(?:sorry|much|many|glad|happy|far|long|good|kind|that\b))",
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
        # "couldn't do more": no action declined; "can't do the booking" declines it
        object_ = Reading(" ".join(rest[1:3]), rest[1:3], (clause,))
        return bool(action) and bool(named_at(object_, action))
    if rest[:2] == _TELL_HOW:
        return False  # "I can't tell you how glad I am"
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
    reading: Reading,
    values: Iterable[str],
    within: Container[int] | None = None,
    declining: Sequence[Clause] = (),
) -> list[str]:
    """The values the message states as facts (in `within`, where given): not in a question,
    not denied by a negation, not hedged, and not foretold ("it should arrive at 11:54" says
    what will happen, which is no reason for what cannot be done now). In a clause that
    declines, the negation is the decline's: what follows it is the case it declines ("Policy
    doesn't let me delete an account with an open deal"), unless a negation of its own
    denies it."""
    out: list[str] = []
    for value in values:
        for position in reading.find(tokens(value)):
            if within is not None and position not in within:
                continue
            clause = reading.clause_at(position)
            if clause.asks or clause.hedged or _foretold(clause, position):
                continue
            if clause.denies(position) and not (
                clause in declining and not _denied_again(clause, position)
            ):
                continue
            out.append(value)
            break
    return out


_NEGATION = re.compile(r"\b(?:not|never|no|nothing|none|nor|neither|without|\w+n't|cannot)\b")


def _denied_again(clause: Clause, position: int) -> bool:
    """A second negation in the clause comes before the position."""
    text = clause.text.replace("\u2019", "'").lower()
    starts = [clause.start + len(tokens(text[: m.start()])) for m in _NEGATION.finditer(text)]
    return len([s for s in starts if s < position]) >= 2


_FORECAST = re.compile(
    r"\b(?:will|shall|should|'ll|expected|going to|due (?:at|by|on|to arrive))\b", re.IGNORECASE
)
"""A word after which a clause tells what is to happen, not what is."""


def _foretold(clause: Clause, position: int) -> bool:
    found = _FORECAST.search(clause.text.replace("\u2019", "'"))
    if found is None:
        return False
    return position >= clause.start + len(tokens(clause.text[: found.start()]))


_EXPLAINED = re.compile(
    r"(?<!\d):\s+(?=(?:\S+\s+){2,}\S)|\s[-\u2013\u2014]+\s+(?=(?:\S+\s+){2,}\S)|"
    r"[\u2013\u2014](?=(?:\S+\s+){2,}\S)"
)
"""Where a statement follows a colon or a dash: "I can't refund it: refunds only go to the
card" (not the colon of a time, "14:00")."""


def gives_cause(
    reading: Reading, within: Container[int] | None = None, declining: Sequence[Clause] = ()
) -> bool:
    """The message gives a cause in words (in `within`, where given): "because ...", "since
    ...", "as it ...", "due to", ", so ..." followed by at least two words, or a statement
    after a colon or a dash. Neither a question nor the decline itself explains anything
    ("Sorry, that didn't work - I can't apply it."); "so sorry" and "under any
    circumstances" give no cause."""
    text = reading.text.replace("\u2019", "'")
    for found in _CAUSE.finditer(text):
        if len(tokens(text[found.end() :])) >= 2 and _explains(reading, text, found, within):
            return True
    for found in _EXPLAINED.finditer(text):
        if _explains(reading, text, found, within, declining):
            return True
    return False


def _explains(
    reading: Reading,
    text: str,
    found: re.Match[str],
    within: Container[int] | None,
    declining: Sequence[Clause] = (),
) -> bool:
    """What follows the word or mark is a statement of the message's (in `within`): not a
    question, not one of the declining clauses."""
    position = len(tokens(text[: found.end()]))
    if position >= len(reading.tokens):
        return False
    if within is not None and position not in within:
        return False
    clause = reading.clause_at(position)
    return not clause.asks and clause not in declining


_POINTS_BACK = re.compile(
    r"^\W*(?:it|it's|its|that|that's|this|these|those|they|they're|he|he's|she|she's|there|"
    r"there's|so|because|since|as|which|hence|therefore|thus|otherwise|the reason|anyway)\b",
    re.IGNORECASE,
)
"""How a sentence begins that goes on about what the one before it said."""

_OPENS_BACK = re.compile(
    r"^\W*(?:(?:sorry|unfortunately|well|yes|sure|okay|ok|right|of course|good question)"
    r"\b[\s,.!-]*)*(?:(?:it|it's|its|that|that's|this|these|those|they|they're|he|he's|she|"
    r"she's|there|there's|because|since|as|which|hence|therefore|thus|the reason|why|"
    r"the rule|our policy|policy)\b)",
    re.IGNORECASE,
)
"""How a message begins that explains what the agent's message before it said."""

_MENTIONS = re.compile(r"\b(?:it|its|that|this|these|those|them|one)\b", re.IGNORECASE)
"""A word by which a sentence points at something said before it ("I can't cancel it")."""

_PLAIN = frozenset(
    tokens(
        "the and but for with your you our from that this have has had was were are is been "
        "able sorry unfortunately afraid just also only here there what when which would could "
        "should will can cannot can't not any some more than then them they their about into "
        "please thanks thank let know need want like"
    )
)
"""Words too common to show two sentences are about the same thing."""


def reason_scope(reading: Reading, declining: Sequence[Clause]) -> frozenset[int]:
    """Where a decline's reason may be within its message: the sentences that decline and,
    next to each, the sentence before or after it that goes on about the same thing (it
    begins by pointing back or with a word of cause, the declining sentence points back at
    it, or the two share a word that names something)."""
    declined = {c.sentence for c in declining}
    near = set(declined)
    for sentence in declined:
        if _linked(reading, sentence - 1, sentence, back=True):
            near.add(sentence - 1)
        if _linked(reading, sentence, sentence + 1):
            near.add(sentence + 1)
    return frozenset(
        p for c in reading.clauses if c.sentence in near for p in range(c.start, c.end)
    )


def _linked(reading: Reading, earlier: int, later: int, back: bool = False) -> bool:
    first = [c for c in reading.clauses if c.sentence == earlier]
    second = [c for c in reading.clauses if c.sentence == later]
    if not first or not second:
        return False
    text = " ".join(c.text for c in second).replace("\u2019", "'")
    if _POINTS_BACK.match(text) or (back and _MENTIONS.search(text)):
        return True
    said = [{t for c in part for t in reading.tokens[c.start : c.end]} for part in (first, second)]
    return any(len(t) >= 4 and not t.isdigit() for t in (said[0] & said[1]) - _PLAIN)


def takes_back(reading: Reading, after: int = 0) -> bool:
    """The message, from token `after` on, offers to do what was declined after all: an
    exception offered ("I can bring it down to $187.61 as a one-off"), not denied."""
    text = reading.text.replace("\u2019", "'")
    for found in _EXCEPTION.finditer(text):
        position = len(tokens(text[: found.start()]))
        if position < after:
            continue
        clause = reading.clause_at(min(position, len(reading.tokens) - 1))
        if not clause.denies(position):
            return True
    return False


_EXCEPTION = re.compile(
    r"\b(?:as an? (?:one-off|exception)|(?:make|making) an exception|just this once|"
    r"this one time)\b",
    re.IGNORECASE,
)
"""Words that offer an exception to the rule a decline rests on."""


Gives = Callable[[Reading, Sequence[Clause] | None], bool]
"""A test of whether a message gives a reason: given the message and its declining clauses,
or None for the agent's next message, which explains as a whole."""


def explained(
    reading: Reading,
    declining: Sequence[Clause],
    following: Reading | None,
    gives: Gives,
    moved_on: bool = False,
) -> bool:
    """Whether a decline is explained, where every rule looks for its reason: in the message
    that declines; or, where that message gives none, in the agent's next message when that
    message is the one that explains: it begins by pointing back at the decline or with a
    word of cause ("Because it shipped on Monday.", "It was delivered on November 8."), or
    nothing was done between the two (`moved_on`: a write made in between moves the
    conversation on, and "Booked: Friday at 15:30." reports it). A reason given later than
    that, or only in a question (`states`), is none."""
    if gives(reading, declining):
        return True
    if following is None or (moved_on and not explains(following)):
        return False
    return gives(following, None)


def explains(reading: Reading) -> bool:
    """The message begins by pointing back at what was said before it, or with a cause."""
    return bool(_OPENS_BACK.match(reading.text.replace("\u2019", "'")))


def stating(values: Sequence[str]) -> Gives:
    """The test of a reason that is one of these values, stated anywhere in the message
    (`states`)."""

    def gives(reading: Reading, declining: Sequence[Clause] | None) -> bool:
        return bool(states(reading, values, None, declining or ()))

    return gives


def giving_cause(reading: Reading, declining: Sequence[Clause] | None) -> bool:
    """The test of a reason that is a cause in words (`gives_cause`), anywhere in the
    message but in its declining clauses."""
    return gives_cause(reading, None, declining or ())
