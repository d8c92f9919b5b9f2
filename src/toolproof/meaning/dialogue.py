"""What a message means for the dialogue: a request for confirmation, a yes, a question, and
whether it states a fact.

Scripted users, the oracle agent, the graders and the suite checks all read messages with
these same patterns, so a suite that passes `validate` is judged the way it was proved.
"""

from __future__ import annotations

import re

from toolproof.spec.user import Match, When

_CONFIRM_WORDS = re.compile(
    r"\b(confirm|proceed|go ahead|shall i|should i|do you want me to|would you like me to|"
    r"is that (ok|okay|right|correct))\b",
    re.IGNORECASE,
)
_YES = re.compile(
    r"^\W*(yes|yeah|yep|sure|ok|okay|confirm(ed)?|go ahead|please (do|proceed|go ahead)|"
    r"correct|that'?s (right|correct)|do it|proceed)\b",
    re.IGNORECASE,
)
_HEDGE = re.compile(
    r"\b(no|not|never|nothing|don'?t|wait|actually|instead|hold on|cancel that)\b", re.IGNORECASE
)


def asks_confirmation(text: str) -> bool:
    """The agent asks the user to confirm an action before taking it."""
    return bool(_CONFIRM_WORDS.search(text)) and ("?" in text or "yes/no" in text.lower())


def asks_question(text: str) -> bool:
    """The agent asks the user anything."""
    return "?" in text


def is_affirmative(text: str) -> bool:
    """The user says yes, without taking anything back in the same breath."""
    return bool(_YES.search(text)) and not _HEDGE.search(text)


_DECLINE = re.compile(
    r"\b(?:can ?not|can'?t|could ?n[o']t|unable|not able to|won'?t|will not|not (?:allowed|"
    r"permitted|possible|eligible)|isn'?t (?:allowed|permitted|possible|eligible)|ineligible|"
    r"(?:must|have to|need to) decline|declined?|refuse|no longer|"
    r"(?:am|'m) afraid)\b",
    re.IGNORECASE,
)


def declines(text: str) -> bool:
    """The agent says no: it cannot, may not or will not do what was asked ("I can't cancel
    it", "it is not eligible", "I'm afraid that order isn't on your account")."""
    return bool(_DECLINE.search(text.replace("\u2019", "'")))


def holds(when: When, text: str) -> bool:
    """Whether a scripted user's trigger (`when`) holds for the agent's reply."""
    if when == "always":
        return True
    if when == "asks_confirmation":
        return asks_confirmation(text)
    if when == "asks_question":
        return asks_question(text)
    assert isinstance(when, Match)
    if when.contains is not None:
        lowered = text.lower()
        return any(word.lower() in lowered for word in when.contains)
    assert when.regex is not None
    return re.search(when.regex, text, re.IGNORECASE) is not None
