"""Numbers said in words, written in digits, so that they are read as the numbers they are:
"thirty days" is "30 days", "three hundred seventy-four" is 374, "sixteen forty-four
Hillcrest" is "1644 Hillcrest", "five five five two nine five zero" is 5552950, "third"
is "3rd".

A text is written out only where it has a number word (`NUMBER_WORDS`); the reader in
`values` asks for it then, and reads the written text in place of the said one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_SMALL = {
    word: value
    for value, word in enumerate(
        [
            "zero",
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
            "thirteen",
            "fourteen",
            "fifteen",
            "sixteen",
            "seventeen",
            "eighteen",
            "nineteen",
        ]
    )
}
_TENS = {
    word: 10 * value
    for value, word in enumerate(
        ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"], 2
    )
}
_SCALES = {"hundred": 100, "thousand": 1000, "million": 1_000_000}
_ORDINALS = {
    "first": 1,
    "second": 2,
    "third": 3,
    "fifth": 5,
    "eighth": 8,
    "ninth": 9,
    "twelfth": 12,
    **{f"{word}th": value for word, value in _SMALL.items() if value in (4, 6, 7, 10, 11)},
    **{f"{word}th": value for word, value in _SMALL.items() if 13 <= value <= 19},
    **{word[:-1] + "ieth": value for word, value in _TENS.items()},
    **{f"{word}th": value for word, value in _SCALES.items()},
}
_VALUES = {**_SMALL, **_TENS, **_SCALES, **_ORDINALS}

NUMBER_WORDS = frozenset(_VALUES)
"""The words a number is said in; a text with none of them is read as it is written."""

_CARDINAL = "|".join(sorted([*_SMALL, *_TENS, *_SCALES, "oh"], key=len, reverse=True))
_ORDINAL = "|".join(sorted(set(_ORDINALS) - {"first", "second"}, key=len, reverse=True))
_JOIN = r"(?:-|\s+|\s+and\s+)"
_INITIALS = "".join(sorted({word[0] for word in _VALUES}))
"""The letters a number word begins with: where no other word can start a run, the search
moves on at once (a tenth of the time on a long tool result)."""
_SAID = re.compile(
    rf"(?<!\w)(?:(?P<letters>(?-i:[A-Z]{{1,3}}))\s+)?(?=[{_INITIALS}])(?P<said>"
    rf"(?:{_CARDINAL})(?:{_JOIN}(?:{_CARDINAL}))*(?:{_JOIN}(?:{_ORDINAL})|-(?:first|second))?"
    rf"|{_ORDINAL}|first|second)(?!\w)",
    re.IGNORECASE,
)
"""A run of number words ("three hundred and seventy-four", "five five five two nine",
"twenty-first"), with the one to three capital letters an identifier may begin with ("W one
one seven"). An ordinal ends a run; "first" and "second" join one only with a hyphen, since
"thirty second" is as often a length of time."""

MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sept", "sep"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}
"""A month's number by its name or abbreviation."""
MONTH_NAMES = "|".join(sorted(MONTHS, key=len, reverse=True))
_MONTH = rf"(?:{MONTH_NAMES})\.?"
_BEFORE_A_DAY = re.compile(rf"\b{_MONTH}\s+$", re.IGNORECASE)
_AFTER_A_DAY = re.compile(rf"\s+of\s+{_MONTH}\b", re.IGNORECASE)
_COUNTED = re.compile(
    r"\s+(?!(?:of|or|and|another|more|less|than|is|was|are|were|be|has|had|have|that|which"
    r"|who|you|i|we|they|it|he|she|to|for|at|in|on|by|as|with|without|from|into|about|the|a"
    r"|an|will|would|can|could|should|may|might|here|there|now|too|also|instead|but|so|if)\b)"
    r"[a-z]",
    re.IGNORECASE,
)
_POINTED = re.compile(
    r"\b(?:no|the|this|that|which|each|every|any|some|another|other|same|a|an|my|your|our"
    r"|their|its|his|her)\s+$",
    re.IGNORECASE,
)
_ALONE_AS_WORDS = {"first": "day", "second": "day", "one": "count"}
"""Number words that are as often a word as a number: "first" and "second" are a number
only as a day of a month ("March first", "the second of May"), and "one" alone only before
what it counts and after no word that points at one ("one day", "in one call"; not "the
blue one", "one of them", "the one with", "no one")."""


@dataclass
class _Number:
    """A number read from words: its value, whether it was one digit word ("five"), two
    digits' worth ("sixteen", "forty-four") or more, and whether it was an ordinal."""

    value: int
    size: str
    ordinal: bool = False


def write_out(text: str) -> str:
    """The text with its number words written in digits."""
    return _SAID.sub(_written, text)


def _written(match: re.Match[str]) -> str:
    """A run of number words in digits, or as it was where its words are no number."""
    said = match.group("said")
    words = re.findall(r"[a-z]+", said.lower())
    if len(words) == 1 and not _counts(words[0], match):
        return match.group(0)
    pieces = _digits(_numbers(words))
    if pieces == words:
        return match.group(0)
    letters = match.group("letters")
    if letters and len(pieces) == 1 and pieces[0].isdigit() and letters not in ("A", "I"):
        return letters + pieces[0]  # an identifier spelled out: "W one one seven" is W117
    before = f"{letters} " if letters else ""
    return before + " ".join(pieces)


def _counts(word: str, match: re.Match[str]) -> bool:
    """A word that is as often a word as a number stands alone here as a number."""
    kind = _ALONE_AS_WORDS.get(word)
    text, start, end = match.string, match.start("said"), match.end()
    if kind == "day":
        return bool(
            _BEFORE_A_DAY.search(text, max(0, start - 16), start) or _AFTER_A_DAY.match(text, end)
        )
    if kind == "count":
        return bool(_COUNTED.match(text, end)) and not _POINTED.search(
            text, max(0, start - 9), start
        )
    return word != "oh"


def _numbers(words: list[str]) -> list[_Number | str]:
    """The run as numbers, read as far as each goes ("three hundred seventy four" is one,
    "five five" two), with the words that are not numbers on their own ("and", "oh")."""
    out: list[_Number | str] = []
    i = 0
    while i < len(words):
        if words[i] in ("and", "oh"):
            out.append(words[i])
            i += 1
            continue
        number, i = _number(words, i)
        out.append(number)
    return out


def _number(words: list[str], i: int) -> tuple[_Number, int]:
    """The number that starts at `words[i]`, and where the next one starts."""
    total = group = scale = 0
    last = ""  # what the number ended in so far: "", "small", "tens", "hundred", "scale"
    start = i
    while i < len(words):
        word = words[i]
        value = _VALUES.get(word)
        if word == "and":  # inside a number only after a hundred or a thousand
            following = _VALUES.get(words[i + 1], 100) if i + 1 < len(words) else 100
            if last not in ("hundred", "scale") or following >= 100:
                break
            i += 1
            continue
        if value is None:
            break
        if value < 100:
            if not (last in ("", "hundred", "scale") or (last == "tens" and 0 < value < 10)):
                break
            group += value
            last = "tens" if word in _TENS else "small"
        elif value == 100:
            if last not in ("", "small", "tens") or group >= 100:
                break
            group = (group or 1) * 100
            last = "hundred"
        else:
            if last == "scale" or (scale and value >= scale):
                break
            total += (group or 1) * value
            group, scale, last = 0, value, "scale"
        i += 1
        if word in _ORDINALS:
            break
    value = total + group
    size = "digit" if i - start == 1 and value < 10 else "other"
    if 10 <= value < 100 and last in ("small", "tens"):
        size = "pair"
    return _Number(value, size, words[i - 1] in _ORDINALS), i


def _digits(numbers: list[_Number | str]) -> list[str]:
    """The numbers as digits: three or more digit words in a row as one string of digits
    ("five five five two" is 5552), two two-digit numbers in a row as four digits, as a
    street number or a year is said ("sixteen forty-four", "nineteen oh five")."""
    out: list[str] = []
    i = 0
    while i < len(numbers):
        run = _digit_run(numbers, i)
        if len(run) >= 3:
            out.append("".join(run))
            i += len(run)
            continue
        first = numbers[i]
        if isinstance(first, str):
            out.append(first)
            i += 1
            continue
        pair = _second_half(numbers, i + 1) if first.size == "pair" and not first.ordinal else None
        if pair is not None:
            digits, taken = pair
            out.append(f"{first.value}{digits}")
            i += 1 + taken
            continue
        out.append(_written_number(first))
        i += 1
    return out


def _digit_run(numbers: list[_Number | str], i: int) -> list[str]:
    """The digits said one by one from `numbers[i]` on ("oh" as 0); none unless the first
    is a digit word."""
    run: list[str] = []
    for number in numbers[i:]:
        if number == "oh" and run:
            run.append("0")
        elif isinstance(number, _Number) and number.size == "digit" and not number.ordinal:
            run.append(str(number.value))
        else:
            break
    return run


def _second_half(numbers: list[_Number | str], i: int) -> tuple[str, int] | None:
    """The last two digits of a four-digit number said in pairs, if `numbers[i]` starts
    them ("forty-four", "oh five"), and how many numbers they took."""
    if i >= len(numbers):
        return None
    second = numbers[i]
    if isinstance(second, _Number) and second.size == "pair":
        return _written_number(second), 1
    after = numbers[i + 1] if i + 1 < len(numbers) else None
    if second == "oh" and isinstance(after, _Number) and after.size == "digit":
        return f"0{after.value}", 2
    return None


def _written_number(number: _Number) -> str:
    """The number in digits, an ordinal with its suffix ("3rd", "21st", "12th")."""
    if not number.ordinal:
        return str(number.value)
    last = number.value % 10 if number.value % 100 not in (11, 12, 13) else 0
    return f"{number.value}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(last, 'th') }"
