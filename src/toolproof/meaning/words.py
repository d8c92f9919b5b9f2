"""A word as the graders compare it: one form for its inflections ("shipped", "ships" and
"shipping" are `ship`), its British and American spellings ("colour" and "color") and a
street word's abbreviation ("Ave" and "Avenue").

The stemmer is the inflectional half of the Porter2 (English Snowball) algorithm, its steps
1 and 5: plurals, -ed and -ing, a final -y, -e and -ll. Its derivational steps are left out on
purpose: they would make "refundable" `refund` and "organization" `organ`, and a value that
the agent must say or must not leak is a different value under another suffix. So a
"shipment" is not "shipped", nor a "delivery" "delivered"; only one word's forms meet.
"""

from __future__ import annotations

import re
from functools import lru_cache

STREET_WORDS = {
    "st": "street",
    "ave": "avenue",
    "rd": "road",
    "ln": "lane",
    "blvd": "boulevard",
    "ct": "court",
    "pl": "place",
    "dr": "drive",
}
"""A street word's usual abbreviation, read as the word. "Dr." the title reads as `drive`
too: both sides of a comparison read it so, and a name follows the title where a street
name comes before the word, so "Dr. Lind" is still not "Lind Drive"."""

_NOT_INFLECTED = frozenset(
    {"news", "evening", "hatred", "only", "early", "singly", "gently", "ugly", "likely"}
)
"""Words whose -s, -ing, -ed or -ly is no inflection, where taking it off would meet another
word ("news" and "new", "evening" and "even", "hatred" and "hater", "only" and "on",
"likely" and "like")."""

_DOUBLES = ("bb", "dd", "ff", "gg", "mm", "nn", "pp", "rr", "tt")
"""Consonants an -ed or -ing doubles ("shipped", "planning"); "ll" is step 5's."""
_LONG_VOWEL = ("at", "bl", "iz")
"""Stems that had an -e before their -ed or -ing ("updated", "enabling", "authorized")."""

_BRITISH = [
    (re.compile(r"(?<=[a-z]{2})our(?=$|ful$|it$|abl$)"), "or"),  # colour, favourite
    (re.compile(r"(?<=[a-z]{3})is(?=$|ation$)"), "iz"),  # authorise, authorisation
    (re.compile(r"(?<=[a-z]{3})ys$"), "yz"),  # analyse
    (re.compile(r"(?<=[a-z])([tb])r$"), r"\1er"),  # centre, fibre
    (re.compile(r"(?<=[a-z]{2})logu$"), "log"),  # catalogue, dialogue
]
"""British spellings as American ones, on the stem (the -e and the inflection gone: "centr"
is what "centre", "centres" and "centred" leave), each where no other English word has it."""

_SPELLED_APART = [
    ("cheque", "check"),
    ("grey", "gray"),
    ("programme", "program"),
    ("tyre", "tire"),
    ("jewellery", "jewelry"),
    ("aluminium", "aluminum"),
    ("licence", "license"),
    ("defence", "defense"),
    ("offence", "offense"),
    ("practise", "practice"),
    ("mould", "mold"),
]
"""British spellings that no rule above makes American."""


def word_form(word: str) -> str:
    """The form a word is compared in: lower case, a street abbreviation as its word, then
    its stem in American spelling. A word with a digit or an underscore is an identifier
    (W11177, order_cancelled) and stays as written; so does a word of other letters than
    English ones."""
    lowered = word.lower()
    if not (lowered.isascii() and lowered.isalpha()):
        return lowered
    return _form(lowered)


@lru_cache(maxsize=16384)
def _form(word: str) -> str:
    """`word_form` of a lower-case English word, remembered: a run reads the same few
    thousand words in every message."""
    if word in SIZE_WORDS:
        return SIZE_WORDS[word]
    stem = _american(_stem(STREET_WORDS.get(word, word)))
    return _SPELLED_APART_STEMS.get(stem, stem)


SIZE_WORDS = {"small": "s", "medium": "m", "large": "l"}
"""Garment sizes by their letters: "a medium in navy" is "M / Navy"."""


def _american(stem: str) -> str:
    """The stem as American English spells it."""
    for pattern, replacement in _BRITISH:
        stem = pattern.sub(replacement, stem)
    return stem


def _stem(word: str) -> str:
    """The word without its inflection (Porter2's steps 1 and 5)."""
    if len(word) <= 2 or word in _NOT_INFLECTED:
        return word
    vowels = _vowels(word)
    r1 = _region(vowels, 0)
    r2 = _region(vowels, r1)
    word = _plural(word, vowels)
    word = _past_or_progressive(word, vowels, r1)
    if word.endswith("y") and len(word) > 2 and not vowels[len(word) - 2]:
        word = word[:-1] + "i"  # "carry" as "carries" leaves it: one form for both
    if word.endswith("li") and len(word) - 2 >= max(r1, 3) and word[-3] in _LI_ENDINGS:
        word = word[:-2]  # "recently" as "recent", "weekly" as "week" (Porter2's step 2)
    return _final_e_or_l(word, vowels, r1, r2)


_LI_ENDINGS = frozenset("cdeghkmnrt")
"""The letters after which Porter2 takes an adverb's "-ly" off ("recent-ly", not "app-ly")."""


def _vowels(word: str) -> list[bool]:
    """Which letters are vowels: a, e, i, o, u, and y after a consonant."""
    marks: list[bool] = []
    for i, letter in enumerate(word):
        marks.append(letter in "aeiou" or (letter == "y" and i > 0 and not marks[i - 1]))
    return marks


def _region(vowels: list[bool], start: int) -> int:
    """Where the part of the word after the first consonant that follows a vowel (from
    `start`) begins: Porter's R1 from 0, R2 from R1."""
    for i in range(start + 1, len(vowels)):
        if vowels[i - 1] and not vowels[i]:
            return i + 1
    return len(vowels)


def _short_syllable_ends(word: str, vowels: list[bool]) -> bool:
    """The word ends in a short syllable: a consonant (not w, x or y) after a vowel after a
    consonant ("hop", "not"), or a vowel and a consonant that are the whole word ("at")."""
    end = len(word)
    if end == 2:
        return vowels[0] and not vowels[1]
    return (
        end > 2
        and not vowels[end - 1]
        and word[-1] not in "wxy"
        and vowels[end - 2]
        and not vowels[end - 3]
    )


def _plural(word: str, vowels: list[bool]) -> str:
    """-s and -es off ("days", "addresses", "policies", and "applied" as "applies"), but
    not off "us", "ss", a word whose only vowel is just before the s ("this", "gas") or one
    of three letters ("UPS" the carrier is not "up", nor "its" "it")."""
    if len(word) <= 3:
        return word
    if word.endswith("sses"):
        return word[:-2]
    if word.endswith(("ied", "ies")):
        return word[:-2] if len(word) > 4 else word[:-1]
    if word.endswith(("us", "ss")) or not word.endswith("s"):
        return word
    return word[:-1] if any(vowels[: len(word) - 2]) else word


def _past_or_progressive(word: str, vowels: list[bool], r1: int) -> str:
    """-ed and -ing off, where what is left has a vowel; the -e the suffix replaced comes
    back ("noted" is `note`), and a consonant it doubled goes ("shipped" is `ship`)."""
    if word.endswith("eed"):
        return word[:-1] if len(word) - 3 >= r1 else word
    for suffix in ("ed", "ing"):
        base = word[: -len(suffix)]
        if word.endswith(suffix) and any(vowels[: len(base)]):
            if base.endswith(_LONG_VOWEL):
                return base + "e"
            if base.endswith(_DOUBLES):
                return base[:-1]
            if r1 >= len(base) and _short_syllable_ends(base, vowels):
                return base + "e"
            return base
    return word


def _final_e_or_l(word: str, vowels: list[bool], r1: int, r2: int) -> str:
    """A final -e off where it is silent ("change" is `chang`, as "changed" is), kept after
    a short syllable ("note", "rate"); -ll as -l ("cancelled" is `cancel`)."""
    last = len(word) - 1
    if word.endswith("e") and (
        last >= r2 or (last >= r1 and not _short_syllable_ends(word[:-1], vowels))
    ):
        return word[:-1]
    if word.endswith("ll") and last >= r2:
        return word[:-1]
    return word


_SPELLED_APART_STEMS = {
    _american(_stem(british)): _american(_stem(american)) for british, american in _SPELLED_APART
}
