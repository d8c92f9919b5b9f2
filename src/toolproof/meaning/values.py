"""Values as the graders compare them: a text read as tokens (words, numbers by value, dates,
times, phone numbers and email addresses in any of their usual forms), and whether one text
contains another. A word's forms are `words`' business, numbers said in words `numbers`'.

Every rule that matches a value in what was said (facts, leaks, proposals, the scripted user's
triggers) reads text through `tokens`, so a value is the same value wherever it is compared.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date
from decimal import Decimal
from functools import lru_cache

from toolproof.meaning.numbers import MONTH_NAMES, MONTHS, NUMBER_WORDS, write_out
from toolproof.meaning.words import STREET_WORDS, word_form

_MONTHS_THAT_ARE_VERBS = frozenset({"may", "march", "mar"})
"""Month names that are also verbs: written in lower case ("it may 1 day"), they are the verb."""

_ORDINAL = r"(?:st|nd|rd|th)?"
_YEAR = r"(?:,?\s+(?P<{}>\d{{4}})(?!\w|[.,:]\d))?"
_TOKEN = re.compile(
    # What starts with a digit (or a phone's "+" or "(", or a timestamp's "T"); grouped
    # behind one look ahead, so that a word or a space is not tried against each of them.
    r"(?=[\d+(]|(?<=\d)T)(?:"
    # dates: 2026-11-11 (also in 2026-11-11T10:00:00Z), 8 November, the 8th of November,
    # 2026/11/08, 11/8/2026, 11/08, 17/11/2026 (day first), 17.11.2026
    r"(?<!\w)(?P<date>\d{4}-\d{2}-\d{2})(?=T\d|(?![\w-]))"
    rf"|(?<![\w.,])(?P<day2>\d{{1,2}}){_ORDINAL}\s+(?:of\s+)?(?P<month2>{MONTH_NAMES})\b\.?"
    + _YEAR.format("year2")
    + r"|(?<![\w./-])(?P<ymd>\d{4}(?P<ymd_mark>[/.])\d{1,2}(?P=ymd_mark)\d{1,2})(?![\w/]|[.,]\d)"
    r"|(?<![\w./-])(?P<slashed>\d{1,2}/\d{1,2}(?:/(?:\d{4}|\d{2}))?)(?![\w/]|[.,]\d)"
    r"|(?<![\w./-])(?P<dotted>\d{1,2}\.\d{1,2}\.\d{4})(?!\w|[.,]\d)"
    # phone numbers: (503) 555-0142, +1 503 555 0142, 555-2950; 612 555 29 50
    r"|(?<![\w.,+-])(?P<phone>\+?(?:\d{1,3}[ .-]?)?(?:\(\d{3}\) ?|\d{3}[ .-])\d{3}[ .-]?\d{4}"
    r"|\d{3}[ .-]\d{4})(?![\w-]|[.,]\d)"
    r"|(?<![\w.,+$-])(?P<grouped>\d{2,4}(?P<gap>[ .-])\d{2,4}(?:(?P=gap)\d{2,4})+)(?![\w-]|[.,]\d)"
    # times of day: 1:33 PM, 3pm, 12:15 a.m., 12 noon; 9:05, 14:30:00
    r"|(?<![\w:.])(?P<hour>\d{1,2})(?:[:\s]?(?P<minutes>\d{2}))?\s*(?P<half>[ap])\.?\s?m\b\.?"
    r"|(?<!\w)(?P<twelve>12\s*(?:noon|midday|midnight))(?!\w)"
    r"|(?:(?<=\d)T|(?<![\w:.]))(?P<time>\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?)"
    r"(?:Z|(?:(?<=:\d\d:\d\d)|(?<=T\d\d:\d\d)|(?<=\.\d\d\d))[+-]\d{2}:\d{2})?(?!\w|:\d)"
    # numbers: 30, 30.5, 1,200.00, 3rd; 10 percent, 374 dollars and 50 cents, 50 cents
    r"|(?<![\w.,])(?P<number>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)(?P<nth>st|nd|rd|th)?"
    r"(?!\w|[.,]\d)(?:\s+(?:percent|per\s+cent)\b|\s+(?:dollars?|usd|bucks|euros?)\b"
    r"(?:\s+(?:and\s+)?(?P<cents>\d{1,2})\s+cents?\b)?|\s+(?P<cent>cents?)\b)?"
    # what starts with a letter: November 8, 2026, Nov. 8; noon, midnight; a word with a
    # prefix that may stand apart (non-refundable, non refundable, e-mail)
    r")|(?=[a-z])(?:"
    rf"(?<!\w)(?P<month>{MONTH_NAMES})\.?\s+(?P<day>\d{{1,2}}){_ORDINAL}(?!\w|[.,:]\d|-)"
    + _YEAR.format("year")
    + r"|(?<!\w)(?P<noon>noon|midday|midnight)(?!\w)"
    r"|(?<!\w)(?P<prefixed>(?:non|pre|anti|multi|semi)[\s-]+[a-z]+|(?:e|re|co)-[a-z]+)(?!\w)"
    # a word: letters, digits and underscores (W10234, FedEx, order_cancelled)
    r")|(?P<word>\w+)",
    re.IGNORECASE,
)
_SPELLED = NUMBER_WORDS | {"dot"}
"""Words that say a value another text may write in digits or symbols ("thirty", "dot")."""

_MARK = r"(?:\s+dot\s+|\s*[\[(]dot[\])]\s*)"
_PART = r"[a-z0-9][\w+-]*"
_SPOKEN_EMAIL = re.compile(
    rf"(?<![\w.@])(?P<local>{_PART}(?:(?:\.|{_MARK}){_PART})*)"
    rf"(?:\s+at\s+|\s*[\[(]at[\])]\s*)(?P<domain>{_PART}(?:(?:\.|{_MARK}){_PART})+)(?![\w@])",
    re.IGNORECASE,
)
"""An email address said aloud or guarded from harvesters: "grace dot patel at example dot
net", "grace.patel [at] example [dot] net"."""
_SAID_MARK = re.compile(rf"{_MARK}|[\[(]at[\])]", re.IGNORECASE)

PHONE_DIGITS = 7
"""A phone number is compared by its last seven digits: "+16125552950", "(612) 555-2950",
"612.555.2950" and "555-2950" are one number. So is any other run of 7 to 15 digits."""


def tokens(text: str) -> list[str]:
    """The text as facts are matched in it: words in one form for their inflections and
    spellings (`word_form`), numbers by value whether in digits or in words (`1,200.00`,
    `1200` and "twelve hundred" are the same token, `30` and `30.5` are not; digits with a
    leading zero stay as they are; `%`, a currency and its word are dropped), times of day
    on the 24-hour clock, dates in any of the usual formats as one ISO token (`2026-11-08`,
    or `--11-08` without a year), phone numbers and other runs of 7 to 15 digits by their
    last seven digits (`#5552950`), an email address said aloud as written; punctuation
    and spacing dropped."""
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
    """The text's tokens; where it says a value in words ("thirty", "at example dot com"),
    those of the text with the value written as usual, read again."""
    text = _SIZES.sub(lambda m: "X" + m.group(1)[0].upper(), _said_time(text))
    out, spelled = _read(text)
    if spelled:
        written = _said_time(write_out(_SPOKEN_EMAIL.sub(_written_email, text)))
        written = _SAID_PHONE.sub(r"\1-\2-\3", written)
        if written != text:
            out, _ = _read(written)
    return tuple(_street_numbers(_ranges(out)))


def _said_time(text: str) -> str:
    """Times said the way people say them, written as clocks do: "two o'clock" is 2:00, "half
    past two" 2:30, "a quarter to three" 2:45, and "in the afternoon" (or evening, or
    "tomorrow afternoon") after an hour makes it PM."""
    text = _OCLOCK.sub(r"\1:00", text)
    text = _PAST.sub(lambda m: f"{m.group(2)}:{_QUARTERS[m.group(1).lower()]:02d}", text)
    text = _TO.sub(lambda m: f"{(int(m.group(1)) - 2) % 12 + 1}:45", text)
    return _PART_OF_DAY.sub(_part_of_day, text)


def _part_of_day(match: re.Match[str]) -> str:
    clock = match.group("clock")
    half = "am" if match.group("part").lower() == "morning" else "pm"
    return f"{clock if ':' in clock else clock + ':00'} {half}{match.group('rest')}"


_QUARTERS = {"half": 30, "quarter": 15}
_PAST = re.compile(r"\b(?:a\s+)?(half|quarter)\s+past\s+(\d{1,2})\b(?!:)", re.IGNORECASE)
_TO = re.compile(r"\b(?:a\s+)?quarter\s+to\s+(\d{1,2})\b(?!:)", re.IGNORECASE)
_PART_OF_DAY = re.compile(
    r"(?<![\w:.])(?P<clock>\d{1,2}(?::\d{2})?)(?!\s*[ap]\.?\s?m\b)(?P<rest>\s+(?:(?:today|"
    r"tomorrow|tonight|this|that|on\s+\w+day)\s+)?(?:in\s+the\s+)?(?P<part>morning|afternoon|"
    r"evening))\b",
    re.IGNORECASE,
)
"""An hour with the part of the day it falls in ("2:30 in the afternoon", "8 tomorrow
morning"); said after the hour, it says whether the hour is AM or PM."""


_RANGE_WORDS = frozenset({"to", "through", "thru", "till", "until"})
_RANGE_ENDS = re.compile(
    r"\d{2}:\d{2}|(?:mon|tue|wed|thu|fri|sat|sun)(?:day|sday|nesday|rsday|urday)?", re.IGNORECASE
)


_STREETS = frozenset({*STREET_WORDS.values(), "way", "highway", "parkway", "terrace", "drive"})


def _street_numbers(said: list[str]) -> list[str]:
    """A house number said as a digit and a pair before a street name is one number: "six
    forty-four Hillcrest Drive" is 644 Hillcrest Drive (as "6 44" it would be a time)."""
    out: list[str] = []
    i = 0
    while i < len(said):
        token = said[i]
        if (
            len(token) == 1
            and token.isdigit()
            and i + 3 < len(said)
            and len(said[i + 1]) == 2
            and said[i + 1].isdigit()
            and said[i + 2].isalpha()
            and said[i + 3] in _STREETS
        ):
            out.append(token + said[i + 1])
            i += 2
            continue
        out.append(token)
        i += 1
    return out


def _ranges(said: list[str]) -> list[str]:
    """A range said in words is the range written with a dash: "Monday to Friday" reads as
    "Monday-Friday", "10:00 until 18:00" as "10:00-18:00"; of two, "the most recent" is "the
    more recent"."""
    said = [
        "more" if t == "most" and 0 < i < len(said) - 1 and said[i - 1] == "the" else t
        for i, t in enumerate(said)
    ]
    return [
        token
        for i, token in enumerate(said)
        if not (
            token in _RANGE_WORDS
            and 0 < i < len(said) - 1
            and _RANGE_ENDS.fullmatch(said[i - 1])
            and _RANGE_ENDS.fullmatch(said[i + 1])
        )
    ]


_SAID_PHONE = re.compile(r"\b(\d{3}),?\s+(\d{3}),?\s+(\d{4})\b")
"""A phone number said digit by digit in its three groups ("six one two, five five five, two
nine five zero")."""

_SIZES = re.compile(r"\bextra[- ]?(large|small)\b", re.IGNORECASE)
"""Extra large and extra small are XL and XS."""

_OCLOCK = re.compile(r"\b(\d{1,2})\s*o['\u2019]?\s?clock\b", re.IGNORECASE)
"""An hour said "o'clock" ("eight o'clock" is 08:00)."""

COMPOUND_HEADS = frozenset(
    {"address", "addresses", "fee", "fees", "cost", "costs", "charge", "charges", "label",
     "labels", "method", "methods", "option", "options", "policy", "time", "times", "rate",
     "rates", "speed", "partner", "carrier", "company", "details", "info", "information",
     "status", "window", "estimate", "zone", "instructions", "list", "account", "code",
     "number", "box", "department", "team", "center", "centre", "dock", "area", "hours",
     "schedule", "period", "limit", "amount", "bag", "cart", "page", "system", "room"}
)  # fmt: skip
"""Nouns a word in -ing may name the kind of ("shipping address", "processing fee"): such a
word is a name, not the state its verb would say ("shipped")."""


def _read(text: str) -> tuple[list[str], bool]:
    """The text's tokens, and whether it says a value in words."""
    out: list[str] = []
    raw: list[str] = []
    spelled = False
    for match in _TOKEN.finditer(text):
        kind = match.lastgroup or "word"
        if kind != "word":
            found = _READERS[kind](match)
            out += found
            raw += [""] * len(found)
            continue
        word = match.group(kind)
        lowered = word.lower()
        if lowered in _SPELLED or (lowered == "at" and _bracketed(text, match.start())):
            spelled = True
        weekday = _WEEKDAY_SHORT.get(lowered) if word[0].isupper() or lowered in _PLAIN else None
        out.append(_number(word) if word.isdecimal() else weekday or word_form(word))
        raw.append(lowered)
    for i in range(len(raw) - 1):
        if raw[i].endswith("ing") and raw[i + 1] in COMPOUND_HEADS:
            out[i] = raw[i]
    return out, spelled


_WEEKDAY_SHORT = {
    "mon": "monday", "tue": "tuesday", "tues": "tuesday", "wed": "wednesday",
    "thu": "thursday", "thur": "thursday", "thurs": "thursday", "fri": "friday",
    "sat": "saturday", "sun": "sunday",
}  # fmt: skip
"""A weekday written short ("Mon", "Tues", "Thurs") is the weekday."""
_PLAIN = frozenset({"mon", "tue", "tues", "thu", "thur", "thurs", "fri"})
"""Short weekdays that are no other word in lower case too ("sat", "sun" and "wed" are)."""


def _bracketed(text: str, start: int) -> bool:
    return start > 0 and text[start - 1] in "[("


def _time(match: re.Match[str]) -> list[str]:
    hours, minutes, *rest = match.group("time").split(":")
    seconds = f":{rest[0]}" if rest and float(rest[0]) else ""
    return [f"{int(hours):02d}:{minutes}{seconds}"]


def _twelve_hour(match: re.Match[str]) -> list[str]:
    """A time on the 12-hour clock on the 24-hour one: 1:33 PM is 13:33, 12:15 AM 00:15."""
    hour = int(match.group("hour"))
    if 1 <= hour <= 12:
        hour = hour % 12 + (12 if match.group("half").lower() == "p" else 0)
    return [f"{hour:02d}:{match.group('minutes') or '00'}"]


def _noon(match: re.Match[str]) -> list[str]:
    return ["00:00" if match.group(0).lower().endswith("midnight") else "12:00"]


def _amount(match: re.Match[str]) -> list[str]:
    """A number, an ordinal as its number ("3rd" is 3), cents as a part of a dollar."""
    value = match.group("number")
    if match.group("cents"):
        cents = Decimal(match.group("cents")) / 100
        return [_number(str(Decimal(value.replace(",", "")) + cents))]
    if match.group("cent"):
        return [_number(str(Decimal(value.replace(",", "")) / 100))]
    return [_number(value)]


def _grouped(match: re.Match[str]) -> list[str]:
    """Digits in groups of two to four: a phone number where they are 7 to 15 digits with
    a group of three or a leading zero ("612 555 29 50", "06 12 34 56 78"), else each group
    a number ("10 20 30 40", "2024 2025", and "12 500 000" grouped by thousands)."""
    groups = re.split(r"[ .-]", match.group("grouped"))
    digits = "".join(groups)
    thousands = all(len(group) == 3 for group in groups[1:])
    if (
        PHONE_DIGITS <= len(digits) <= 15
        and (digits[0] == "0" or any(len(group) == 3 for group in groups))
        and not thousands
    ):
        return [_phone(digits)]
    if len(digits) > 15 and len(groups) >= 4:
        return [digits]  # a long number read out in groups (a tracking number)
    return [_number(group) for group in groups]


def _prefixed(match: re.Match[str]) -> list[str]:
    return [word_form(re.sub(r"[\s-]+", "", match.group("prefixed")))]


def _month_first(match: re.Match[str]) -> list[str]:
    return _spoken_date(match, "month", "day", "year")


def _day_first(match: re.Match[str]) -> list[str]:
    return _spoken_date(match, "month2", "day2", "year2")


def _spoken_date(match: re.Match[str], month: str, day: str, year: str) -> list[str]:
    """A date written with its month's name as its ISO token; "may" in lower case is the
    verb, and a day that no month has stays as the words and numbers it was."""
    name = match.group(month)
    found = match.group(year)
    token = None
    if name not in _MONTHS_THAT_ARE_VERBS:
        token = _iso(MONTHS[name.lower()], int(match.group(day)), int(found) if found else None)
    return [token] if token else _pieces(match)


def _numeric_date(match: re.Match[str]) -> list[str]:
    """A date in numbers as its ISO token: year first (2026/11/17), month first with
    slashes (11/17/2026, 11/08) unless the first number is no month (17/11/2026), day first
    with dots (17.11.2026) unless the second is no month."""
    kind = match.lastgroup or ""
    numbers = [int(n) for n in re.split(r"[/.]", match.group(kind))]
    if kind == "ymd":
        year, month, day = numbers
    else:
        first, second, *rest = numbers
        year = (2000 + rest[0] if rest[0] < 100 else rest[0]) if rest else 0
        day_first = second <= 12 if kind == "dotted" else first > 12
        day, month = (first, second) if day_first else (second, first)
        other = _iso(day, month, year or None) if first <= 12 and second <= 12 else None
        token = _iso(month, day, year or None)
        if token and other and other != token:
            return [f"{token}|{other}"]  # 12/03/2026: December 3, or 12 March day-first
    token = _iso(month, day, year or None)
    return [token] if token else _pieces(match)


def _pieces(match: re.Match[str]) -> list[str]:
    """What is no date after all, read a word or number at a time."""
    return [token for piece in re.findall(r"\w+", match.group(0)) for token in _read(piece)[0]]


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


def _written_email(match: re.Match[str]) -> str:
    """A spoken or guarded email address as it is written, so that it reads as the same
    words; an "at" between words with no spoken "dot" or brackets is left as English."""
    if not _SAID_MARK.search(match.group(0)):
        return match.group(0)
    local, domain = (_SAID_MARK.sub(".", match.group(part)) for part in ("local", "domain"))
    return f"{local}@{domain}"


_READERS: dict[str, Callable[[re.Match[str]], list[str]]] = {
    "date": lambda match: [match.group("date")],
    "day": _month_first,
    "year": _month_first,
    "month2": _day_first,
    "year2": _day_first,
    "ymd": _numeric_date,
    "slashed": _numeric_date,
    "dotted": _numeric_date,
    "phone": lambda match: [_phone(match.group("phone"))],
    "grouped": _grouped,
    "half": _twelve_hour,
    "noon": _noon,
    "twelve": _noon,
    "time": _time,
    "number": _amount,
    "nth": _amount,
    "cents": _amount,
    "cent": _amount,
    "prefixed": _prefixed,
}
"""How each kind of token is read, by the group its match ended in."""


def same_token(a: str, b: str) -> bool:
    """Two tokens say the same thing: equal, or a date with a year and the same date
    without one (`2026-11-08` and `--11-08`); a date that reads two ways (12/03/2026) is
    either."""
    if a == b:
        return True
    if "|" in a or "|" in b:
        return any(_same_date(x, y) for x in a.split("|") for y in b.split("|"))
    return _same_date(a, b)


def _same_date(a: str, b: str) -> bool:
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
