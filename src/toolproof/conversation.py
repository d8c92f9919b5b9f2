"""What a message means for the dialogue: a request for confirmation, a yes, a question.

Scripted users, the oracle agent and the confirmation policy check all read messages with
these same patterns, so a suite that passes `validate` is judged the way it was proved.
"""

from __future__ import annotations

import re

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


def normalize(text: str) -> str:
    """Lower case, no thousands separators, single spaces: how facts are looked for."""
    text = re.sub(r"(?<=\d),(?=\d{3})", "", text.lower())
    return re.sub(r"\s+", " ", text).strip()


def mentions(text: str, fact: str) -> bool:
    """The fact appears in the text, ignoring case, spacing and thousands separators."""
    return normalize(fact) in normalize(text)
