"""What a message does in the dialogue: asks, asks for approval, answers yes or no, declines.

Scripted users, the oracle, the graders and the suite checks read messages through these same
functions, so a suite that passes `validate` is judged the way it was proved. They read
clauses (`toolproof.meaning.clauses`): a "not" counts where it denies, a yes is the answer's
first word of assent, not any "ok" anywhere.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from toolproof.meaning.clauses import Clause, Reading, read
from toolproof.spec.user import Match, When

_LEAD = re.compile(
    r"^(?:\W+|(?:then|but|well|oh|um+|uh+|hmm+|ah|so|and|i mean|in that case|if so|"
    r"if that'?s (?:the case|the only option|what it takes|all)|honestly)\b)*",
    re.IGNORECASE,
)
"""What may come before an answer's first word ("If that's the only option, then yes")."""

_YES = re.compile(
    r"^(?:(?:yes|yeah|yea|yep|yup|ya|sure|ok|okay|k|alright|all right|fine|absolutely|definitely|"
    r"certainly|of course|correct|right|confirm(?:ed)?|affirmative|agreed|perfect|great|"
    r"sounds (?:good|great|fine|right)|that works|works for me|go ahead|go for it|proceed|"
    r"please(?: do| proceed| go ahead)?(?=\W*$|\s*[,.!;])|do it|do that|let'?s do (?:it|that)|"
    r"that(?:'?s| is| would be) (?:fine|great|good|perfect|helpful|lovely|right|correct|"
    r"ok(?:ay)?)|i'?d like that|"
    r"approved|i agree|i approve|i confirm|that'?s what i want|\U0001f44d|"
    r"(?:\w+ )?works(?: for me| fine| great)?|(?:\w+ )?(?:it )?is fine)\b|\w+ it is(?: then)?\W*$)",
    re.IGNORECASE,
)
"""How a yes begins."""

_NO = re.compile(
    r"^(?:no|nope|nah|don'?t|do not|not (?:yet|now|that)|wait|hold on|hold off|stop|never ?mind|"
    r"cancel that|forget (?:it|that)|leave it|rather not|i'?d rather|actually|on second thought|"
    r"i'?ve changed my mind|i changed my mind|scratch that|instead|please don'?t)\b",
    re.IGNORECASE,
)
"""How a no, or a taking back, begins."""


@dataclass(frozen=True)
class Answer:
    """A user's answer to a proposal."""

    yes: bool
    """It assents, and takes nothing back."""
    no: bool = False
    """It refuses, or takes back a yes."""
    except_for: tuple[Clause, ...] = ()
    """Clauses of a yes that refuse part of it ("yes, but don't send the text"): writes they
    name are not agreed to."""


def answer(text: str) -> Answer:
    """The answer a message gives: the first clause that assents or refuses decides it, and a
    later clause that takes it back ("actually", "wait", "no") undoes a yes."""
    reading = read(text)
    verdict: bool | None = None
    excluded: list[Clause] = []
    opening = True
    for clause in reading.clauses:
        said = _LEAD.sub("", clause.text.lower().replace("\u2019", "'"), count=1)
        first, opening = opening and bool(said.strip()), opening and not said.strip()
        if _NO.match(said):
            if verdict:
                if clause.negated_at is not None and _names_something(clause, reading):
                    excluded.append(clause)
                    continue
                return Answer(False, True)
            if verdict is None:
                return Answer(False, True)
        elif verdict is None and (_YES.match(said) or (first and _INSTRUCTS.match(said))):
            verdict = True
    return Answer(bool(verdict), False, tuple(excluded))


_INSTRUCTS = re.compile(
    r"^(?:please |ok(?:ay)?,? |then )?(?:go ahead and |just )?(?:move|cancel|book|send|refund|"
    r"text|email|put|assign|merge|update|delete|change|reschedule|apply|exchange|notify|"
    r"create|issue|make|do|let \w+ know|roll|fold|combine|keep|use|take|switch|ship|return)\b",
    re.IGNORECASE,
)
"""An instruction that takes up what was proposed ("Move it to Thursday then")."""


def _names_something(clause: Clause, reading: Reading) -> bool:
    """A refusal of part of a yes names what it refuses ("but don't send the text")."""
    return clause.end - (clause.negated_at or clause.start) >= 3


def is_affirmative(text: str) -> bool:
    """The user says yes, without taking it back in the same breath."""
    return answer(text).yes


_SOLICITS = re.compile(
    r"\b(?:confirm|proceed|go ahead|shall i|should i|do you want|would you like|want me to|"
    r"is that (?:ok|okay|alright|all right|right|correct|fine)|let me know|say the word|"
    r"(?:sound|look)s? (?:good|ok|okay|right)|ok(?:ay)? to|alright to|all right to|approve|"
    r"your (?:ok|okay|go-ahead|approval|permission)|yes/no|(?:reply|say|answer) yes|"
    r"ready when you are)\b",
    re.IGNORECASE,
)
"""Words that ask for a decision, with or without a question mark."""


_WH = re.compile(r"^\W*(?:what|which|who|whom|whose|when|where|why|how)\b", re.IGNORECASE)
"""How a question that asks for information, not a decision, begins."""


_ASKS_FOR = re.compile(
    r"\b(?:could|can|would|will) you (?:please )?(?:give|tell|send|share|provide|spell|read|"
    r"let me have)\b|\b(?:what(?:'s| is)|which is) your\b",
    re.IGNORECASE,
)
"""A question that asks the user for something ("Could you give me your phone number?")."""


def solicits(text: str) -> bool:
    """The message asks the user to decide: a yes-or-no question, or a request to confirm
    ("Please confirm if you would like to proceed", "just say the word"). "What is the email
    on your account?" or "Could you give me your phone number?" asks for information, not a
    decision."""
    if _ASKS_FOR.search(text) and not _SOLICITS.search(text):
        return False
    if _SOLICITS.search(text):
        return True
    first: dict[int, str] = {}
    for clause in read(text).clauses:
        if clause.asks:
            first.setdefault(clause.sentence, clause.text)
    return bool(first) and not all(_WH.match(t) for t in first.values())


def asks_question(text: str) -> bool:
    """The agent asks the user anything."""
    return any(clause.asks for clause in read(text).clauses) or "?" in text


_OFFER = re.compile(
    r"\b(?:confirm|proceed|go ahead|shall i|should i|do you want me to|would you like me to|"
    r"want me to|is that (?:ok|okay|right|correct|alright))\b",
    re.IGNORECASE,
)


def asks_confirmation(text: str) -> bool:
    """By its words alone (where the conversation's tools are not known): the agent asks the
    user to confirm an action of its own before taking it."""
    return bool(_OFFER.search(text)) and ("?" in text or "yes/no" in text.lower())


def holds(when: When, text: str, proposes: bool | None = None) -> bool:
    """Whether a scripted user's trigger (`when`) holds for the agent's reply. `proposes`:
    whether the reply proposes a change the user's task is waiting for (the caller reads
    that from the conversation); None: judged from the words alone."""
    if when == "always":
        return True
    if when == "asks_confirmation":
        return proposes if proposes is not None else asks_confirmation(text)
    if when == "asks_question":
        return asks_question(text)
    assert isinstance(when, Match)
    if when.contains is not None:
        lowered = text.lower()
        return any(word.lower() in lowered for word in when.contains)
    assert when.regex is not None
    return re.search(when.regex, text, re.IGNORECASE) is not None
