"""Values as the graders compare them: a text read as tokens (words, numbers by value, dates,
times and phone numbers in any of their usual forms), and whether one text contains another.

Every rule that matches a value in what was said (facts, leaks, proposals, the scripted user's
triggers) reads text through `tokens`, so a value is the same value wherever it is compared.
"""

from __future__ import annotations

import re
from datetime import date
from decimal import Decimal
from functools import lru_cache

# A date (2026-11-11, also inside 2026-11-11T10:00:00Z; November 8, 2026; Nov. 8; 8 November;
# 11/8/2026; 11/08), a phone number ((503) 555-0142, +1 503 555 0142, 555-2950), a time of day
# (9:05, 14:30:00), a number (30, 30.5, 1,200.00), or a word (letters, digits and underscores:
# W10234, FedEx).
_MONTHS = (
    "january|february|march|april|may|june|july|august|september|october|november|december|"
    "jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec"
)
_MONTH_NUMBER = {
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
_ORDINAL = r"(?:st|nd|rd|th)?"
_YEAR = r"(?:,?\s+(?P<{}>\d{{4}})(?!\w|[.,:]\d))?"
_TOKEN = re.compile(
    r"(?<!\w)(?P<date>\d{4}-\d{2}-\d{2})(?=T\d|(?![\w-]))"
    rf"|(?<!\w)(?P<month>{_MONTHS})\.?\s+(?P<day>\d{{1,2}}){_ORDINAL}(?!\w|[.,:]\d|-)"
    + _YEAR.format("year")
    + rf"|(?<![\w.,])(?P<day2>\d{{1,2}}){_ORDINAL}\s+(?:of\s+)?(?P<month2>{_MONTHS})\b\.?"
    + _YEAR.format("year2")
    + r"|(?<![\w./-])(?P<slashed>\d{1,2}/\d{1,2}(?:/(?:\d{4}|\d{2}))?)(?![\w/]|[.,]\d)"
    r"|(?<![\w.,+-])(?P<phone>\+?(?:\d{1,3}[ .-]?)?(?:\(\d{3}\) ?|\d{3}[ .-])\d{3}[ .-]?\d{4}"
    r"|\d{3}[ .-]\d{4})(?![\w-]|[.,]\d)"
    r"|(?:(?<=\d)T|(?<![\w:.]))(?P<time>\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?)"
    r"(?:Z|[+-]\d{2}:\d{2})?(?!\w|:\d)"
    r"|(?<![\w.,])(?P<number>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)(?!\w|[.,]\d)"
    r"|(?P<word>\w+)",
    re.IGNORECASE,
)

_KIND = {"day": "month", "year": "month", "year2": "month2"}
"""A spoken date's last group, by the alternative it belongs to."""

PHONE_DIGITS = 7
"""A phone number is compared by its last seven digits: "+16125552950", "(612) 555-2950",
"612.555.2950" and "555-2950" are one number. So is any other run of 7 to 15 digits."""


def tokens(text: str) -> list[str]:
    """The text as facts are matched in it: words in lower case, numbers by value (`1,200.00`
    and `1200` are the same token, `30` and `30.5` are not; digits with a leading zero stay
    as they are), times of day whole, dates in any of the usual formats as one ISO token
    (`2026-11-08`, or `--11-08` without a year), phone numbers and other runs of 7 to 15
    digits by their last seven digits (`#5552950`); punctuation and spacing dropped."""
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
    out: list[str] = []
    for match in _TOKEN.finditer(text):
        kind = _KIND.get(match.lastgroup or "word", match.lastgroup)
        value = match.group(kind or "word")
        if kind == "time":
            hours, minutes, *rest = value.split(":")
            seconds = f":{rest[0]}" if rest and float(rest[0]) else ""
            out.append(f"{int(hours):02d}:{minutes}{seconds}")
        elif kind == "date":
            out.append(value)
        elif kind in ("month", "month2", "slashed"):
            out += _spoken_date(match, kind)
        elif kind == "phone":
            out.append(_phone(value))
        elif kind == "number" or value.isdigit():
            out.append(_number(value))
        else:
            out.append(value.lower())
    return tuple(out)


def _spoken_date(match: re.Match[str], kind: str) -> list[str]:
    """A date written in words or with slashes as its ISO token; a day that no month has
    stays as the words and numbers it was."""
    if kind == "slashed":
        month, day, *rest = match.group("slashed").split("/")
        year = rest[0] if rest else None
        if year is not None and len(year) == 2:
            year = f"20{year}"
    else:
        two = "2" if kind == "month2" else ""
        month = str(_MONTH_NUMBER[match.group(f"month{two}").lower()])
        day, year = match.group(f"day{two}"), match.group(f"year{two}")
    token = _iso(int(month), int(day), int(year) if year else None)
    if token is None:
        return list(_tokenize(match.group(0).replace("/", " ")))
    return [token]


def _iso(month: int, day: int, year: int | None) -> str | None:
    try:
        date(year or 2000, month, day)  # 2000: a leap year, so February 29 is a day
    except ValueError:
        return None
    return f"{year:04d}-{month:02d}-{day:02d}" if year else f"--{month:02d}-{day:02d}"


def _phone(text: str) -> str:
    return "#" + re.sub(r"\D", "", text)[-PHONE_DIGITS:]


def _number(digits: str) -> str:
    plain = digits.replace(",", "")
    if plain.isdigit() and len(plain) == 8 and digits == plain:
        compact = _iso(int(plain[4:6]), int(plain[6:]), int(plain[:4]))
        if compact is not None and plain[:2] in ("19", "20"):
            return compact  # a date as YYYYMMDD, as legacy systems write it
    if plain.isdigit() and PHONE_DIGITS <= len(plain) <= 15 and digits == plain:
        return _phone(plain)
    if len(plain) > 1 and plain[0] == "0" and plain[1] != ".":
        return plain  # an identifier (a card's last four, "0193"), not a quantity
    return format(Decimal(plain).normalize(), "f")


def same_token(a: str, b: str) -> bool:
    """Two tokens say the same thing: equal, or a date with a year and the same date
    without one (`2026-11-08` and `--11-08`)."""
    if a == b:
        return True
    return "-" in a and "-" in b and a[-5:] == b[-5:] and (a[:2] == "--" or b[:2] == "--")


def contains(haystack: list[str], needle: list[str]) -> bool:
    """The tokens of `needle` appear in `haystack` together and in order (a date with a year
    and the same date without one count as the same token)."""
    if not needle:
        return False
    if any("-" in token for token in needle):
        return _contains_dates(haystack, needle)
    if needle[0] not in haystack:  # most values and messages: one scan in C
        return False
    width = len(needle)
    if width == 1:
        return True
    first = needle[0]
    return any(
        haystack[i] == first and haystack[i : i + width] == needle
        for i in range(len(haystack) - width + 1)
    )


def _contains_dates(haystack: list[str], needle: list[str]) -> bool:
    width = len(needle)
    return any(
        all(same_token(needle[j], haystack[i + j]) for j in range(width))
        for i in range(len(haystack) - width + 1)
    )


def mentions(text: str, fact: str) -> bool:
    """The fact is in the text as whole tokens: case, spacing, punctuation and thousands
    separators ignored, numbers compared as numbers ("30" is not in "130" or "30.5")."""
    return contains(tokens(text), tokens(fact))
