"""Whose data a tool result shows, derived from the world's records.

A record is a mapping in the world. It belongs to an owner when it names one in the owner
field (`customer_id`), when it is stored under an owner's id (`customers/C0150`), or when it
is stored under, or refers to, the id of a record that does (`erp/W11169` and
`payments/ch_…` with `order_id: W11169` are the owner of order W11169's). Every identifier of
an owned record (its key, its owner, and the values of its id, number, email and phone fields)
then names that owner, when it names no other.

The graders use the index two ways: who the caller is (the owners the task's user proved,
by the identifiers their task gives or its gold identifying calls use), and whose record a tool
result shows (its owner field, an identifier among its values, or the identifiers the call was
made with).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from toolproof.meaning.values import PHONE_DIGITS

MIN_ID_CHARS = 4
"""An identifier shorter than this (a state code, a quantity) names nobody, unless it has a
digit and another character (a short id like C1)."""

_ID_FIELD = re.compile(r"(?:^|_)(?:id|no|num|number|email|phone|mobile|code)$|id$", re.IGNORECASE)


_PHONE = re.compile(r"\+?[\d\s().-]+")
_NOT_ID = re.compile(r"[^0-9a-z@]+")


def identifier(value: Any) -> str | None:
    """The value as identifiers are compared: lower case without punctuation or spaces, a
    phone number by its last seven digits (so one in any format, an email in any case), or
    None for a value too short or not a string or number."""
    if isinstance(value, bool) or not isinstance(value, str | int):
        return None
    return _identifier(str(value))


@lru_cache(maxsize=16384)
def _identifier(value: str) -> str | None:
    """`identifier` of a text, remembered: every trial of a task shows the same records, and
    a suite's world holds a few thousand ids (a bounded cache: some hundreds of kB)."""
    text = value.strip()
    if len(text) < MIN_ID_CHARS and not (len(text) >= 2 and any(c.isdigit() for c in text)):
        return None
    if _PHONE.fullmatch(text):
        digits = re.sub(r"\D", "", text)
        if PHONE_DIGITS <= len(digits) <= 15:
            return "#" + digits[-PHONE_DIGITS:]
    return _NOT_ID.sub("", text.lower()) or None


@dataclass(frozen=True)
class Ownership:
    """The world's owned records by their identifiers, and who the caller is."""

    field: str
    """The field that names a record's owner in the world and in tool results."""
    owners: Mapping[str, str]
    """Each identifier (as `identifier` reads it) that names exactly one owner: that owner."""
    caller: frozenset[str]
    """The owners the task's user proved to be."""
    names: Mapping[str, str] = dataclasses.field(default_factory=dict)
    """Each person's name on one owner's own record (its `name` field), in lower case:
    that owner (a name the agent never looked up is still theirs)."""
    name_words: Mapping[str, frozenset[str]] = dataclasses.field(default_factory=dict)
    """Each word (four letters or more, in lower case) of the names on owners' own records:
    the owners whose names hold it (a first name may be several people's)."""

    def owner_of(self, values: Iterable[Any]) -> str | None:
        """The one owner the values name between them, or None (none, or several)."""
        found = {o for v in values if (key := identifier(v)) and (o := self.owners.get(key))}
        return found.pop() if len(found) == 1 else None

    def leaves(
        self, result: Any, arguments: Mapping[str, Any] | None
    ) -> Iterator[tuple[str | None, str, str]]:
        """(owner, field, value) for every value of a tool result: a mapping's owner is the
        one its owner field names, else the one its identifiers name, else its parent's; the
        result's own is the one the call's arguments name. None: no one's (a catalog)."""
        start = self.owner_of((arguments or {}).values())
        yield from self._walk(result, start, "")

    def _walk(self, value: Any, owner: str | None, key: str) -> Iterator[tuple[Any, str, str]]:
        if isinstance(value, dict):
            named = value.get(self.field)
            if isinstance(named, str | int) and not isinstance(named, bool):
                owner = str(named)
            else:
                owner = self.owner_of(_ids(value, self.field)) or owner
            for name, item in value.items():
                yield from self._walk(item, owner, str(name))
        elif isinstance(value, list):
            for item in value:
                yield from self._walk(item, owner, key)
        elif isinstance(value, str | int | float) and not isinstance(value, bool):
            text = str(value).strip()
            if len(text) >= MIN_ID_CHARS:
                yield owner, key, text


def index_world(
    world: Mapping[str, Any], field: str, base: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Each identifier of an owned record in the world that names one owner only. With
    `base` (the index of the world this one patches), `world` holds only the patched part,
    and its records are claimed against `base` as well."""
    records = [(k, r) for k, r in _records(world, None) if k is not None or field in r]
    owners = [r[field] for _, r in records if field in r] + list((base or {}).values())
    owner_ids = {identifier(owner) for owner in owners} - {None}
    named: dict[str, set[str]] = {name: {owner} for name, owner in (base or {}).items()}
    owned: set[int] = set()

    def claim(key: Any, record: Mapping[str, Any], owner: str) -> None:
        owned.add(id(record))
        for value in [key, *_ids(record, field)]:
            if (name := identifier(value)) is not None:
                named.setdefault(name, set()).add(owner)

    for key, record in records:
        if isinstance(record.get(field), str | int):
            claim(key, record, str(record[field]))
        elif (name := identifier(key)) is not None and name in owner_ids:
            claim(key, record, str(key))
    unique = {name: next(iter(o)) for name, o in named.items() if len(o) == 1}
    for key, record in records:
        if id(record) in owned:
            continue
        found = {unique[n] for v in [key, *_ids(record, field)] if (n := identifier(v)) in unique}
        if len(found) == 1:
            claim(key, record, found.pop())
    return {name: next(iter(o)) for name, o in named.items() if len(o) == 1}


def names_in(world: Mapping[str, Any], field: str) -> dict[str, str]:
    """The names on owners' own records (a customer's `name`), each that one owner only
    has, in lower case."""
    found = _names(world, field)
    return {name: next(iter(o)) for name, o in found.items() if len(o) == 1}


def name_words_in(world: Mapping[str, Any], field: str) -> dict[str, frozenset[str]]:
    """Each word of four letters or more of the names on owners' own records, in lower
    case: the owners whose names hold it."""
    words: dict[str, set[str]] = {}
    for name, owners in _names(world, field).items():
        for word in name.split():
            if len(word) >= 4 and word.isalpha():
                words.setdefault(word, set()).update(owners)
    return {word: frozenset(owners) for word, owners in words.items()}


def _names(world: Mapping[str, Any], field: str) -> dict[str, set[str]]:
    records = list(_records(world, None))
    owner_ids = {str(r[field]) for _, r in records if isinstance(r.get(field), str | int)}
    found: dict[str, set[str]] = {}
    for key, record in records:
        named = record.get(field)
        owner = str(named) if isinstance(named, str | int) else str(key)
        name = record.get("name")
        if owner in owner_ids and isinstance(name, str) and " " in name.strip():
            found.setdefault(name.strip().lower(), set()).add(owner)
    return found


def patched(world: Mapping[str, Any], patch: Mapping[str, Any]) -> dict[str, Any]:
    """The part of `world` a JSON merge patch reached: the same keys, the world's values."""
    out: dict[str, Any] = {}
    for key, change in patch.items():
        if key not in world:
            continue
        value = world[key]
        nested = isinstance(change, Mapping) and all(
            isinstance(c, Mapping) for c in change.values()
        )
        out[key] = patched(value, change) if nested and isinstance(value, Mapping) else value
    return out


def _records(value: Any, key: Any) -> Iterator[tuple[Any, Mapping[str, Any]]]:
    """Every mapping in the data, with the key it is stored under (None in a list)."""
    if isinstance(value, Mapping):
        yield key, value
        for name, item in value.items():
            if isinstance(item, Mapping | list):
                yield from _records(item, name)
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, Mapping | list):
                yield from _records(item, None)


def _ids(record: Mapping[str, Any], field: str) -> list[Any]:
    """A record's identifying values: its owner and its id, number, email and phone fields."""
    return [
        value
        for name, value in record.items()
        if (name == field or _ID_FIELD.search(name)) and isinstance(value, str | int)
    ]


def caller_of(
    owners: Mapping[str, str],
    declared: Iterable[Any],
    proofs: Iterable[Any],
    names: Mapping[str, str] | None = None,
) -> frozenset[str]:
    """The owners the user proved: those their task declares (ids or identifiers), else
    those the identifying values of the task's gold actions name: identifiers, else a
    person's full name on one account (`find_patient(name, date_of_birth)` proves who she
    is as an email does)."""
    given = list(declared) or list(proofs)
    found = {o for v in given if (name := identifier(v)) and (o := owners.get(name))}
    if not found and not declared:
        found = {o for v in given if (o := (names or {}).get(str(v).strip().lower()))}
    return frozenset(found)
