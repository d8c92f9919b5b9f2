"""What a message means for the dialogue: a request for confirmation, a yes, a question, and
whether it states a fact.

Scripted users, the oracle agent, the graders and the suite checks all read messages with
these same patterns, so a suite that passes `validate` is judged the way it was proved.
"""

from __future__ import annotations

import re
from decimal import Decimal
from functools import lru_cache

from toolproof.spec.models import Match, When

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


def holds(when: When, text: str) -> bool:
    """Whether a scripted user's condition holds for the agent's reply."""
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


# A date (2026-11-11, also inside 2026-11-11T10:00:00Z), a time of day (9:05, 14:30:00), a
# number (30, 30.5, 1,200.00), or a word (letters, digits and underscores: W10234, FedEx).
_TOKEN = re.compile(
    r"(?<!\w)(?P<date>\d{4}-\d{2}-\d{2})(?=T\d|(?![\w-]))"
    r"|(?:(?<=\d)T|(?<![\w:.]))(?P<time>\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?)"
    r"(?:Z|[+-]\d{2}:\d{2})?(?!\w|:\d)"
    r"|(?<![\w.,])(?P<number>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)(?!\w|[.,]\d)"
    r"|(?P<word>\w+)"
)


def tokens(text: str) -> list[str]:
    """The text as facts are matched in it: words in lower case, numbers by value (`1,200.00`
    and `1200` are the same token, `30` and `30.5` are not; digits with a leading zero stay
    as they are), dates and times of day whole; punctuation and spacing dropped."""
    if len(text) > CACHED_TEXT:
        return list(_tokenize(text))
    return list(_remembered(text))


CACHED_TEXT = 4096
"""The longest text whose tokens are remembered: the cache holds at most 1,024 of them,
so it stays a few tens of MB however long a run goes and however large its tool results."""


@lru_cache(maxsize=1024)
def _remembered(text: str) -> tuple[str, ...]:
    """`tokens`, remembered: the graders read the same tool results and replies in every
    trial of a task, and tokenizing them again was a tenth of a trial's harness time."""
    return _tokenize(text)


def _tokenize(text: str) -> tuple[str, ...]:
    out = []
    for match in _TOKEN.finditer(text):
        kind = match.lastgroup
        value = match.group(kind or "word")
        if kind == "time":
            hours, minutes, *rest = value.split(":")
            seconds = f":{rest[0]}" if rest and float(rest[0]) else ""
            out.append(f"{int(hours):02d}:{minutes}{seconds}")
        elif kind == "date":
            out.append(value)
        elif kind == "number" or value.isdigit():
            out.append(_number(value.replace(",", "")))
        else:
            out.append(value.lower())
    return tuple(out)


def _number(digits: str) -> str:
    if len(digits) > 1 and digits[0] == "0" and digits[1] != ".":
        return digits  # an identifier (a card's last four, "0193"), not a quantity
    return format(Decimal(digits).normalize(), "f")


def contains(haystack: list[str], needle: list[str]) -> bool:
    """The tokens of `needle` appear in `haystack` together and in order."""
    if not needle or needle[0] not in haystack:  # most values and messages: one scan in C
        return False
    width = len(needle)
    if width == 1:
        return True
    first = needle[0]
    return any(
        haystack[i] == first and haystack[i : i + width] == needle
        for i in range(len(haystack) - width + 1)
    )


def mentions(text: str, fact: str) -> bool:
    """The fact is in the text as whole tokens: case, spacing, punctuation and thousands
    separators ignored, numbers compared as numbers ("30" is not in "130" or "30.5")."""
    return contains(tokens(text), tokens(fact))
