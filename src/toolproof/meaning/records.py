"""The records a conversation's tool results showed, and how a message refers to one.

A record is a mapping in a tool result: an order, a payment, the card inside it, a slot in a
list of slots. Its identity is the value that names it (`id`; the `payment_method_id` its
parent gives the `payment_method` inside it; `order_id` for an item of `orders`; the field a
lookup was made by), and its kind is the shape of that value (`W` for W11177, `pm_card_` for
pm_card_0193), so that orders compete with orders and cards with cards. Records are linked when
one holds the other, or names its identity (a payment's `order_id`).

A message refers to a record by its identity, or by enough of its values that no other record
of its kind has them all ("your Mastercard ending in 7298", "Dr. Lind on March 12 at 10:00",
"your order from October 11 for $180.00"); a person's name by its last word or its first word
and initial as well as whole.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from toolproof.meaning.clauses import Reading, places
from toolproof.meaning.numbers import MONTHS
from toolproof.meaning.values import tokens

ID_FIELD = re.compile(r"(?:^|_)(?:id|no|num|number|code|ref|key|sku)$|(?-i:[a-z]Id)$", re.I)
"""A field whose value names a record."""

NAME_FIELD = re.compile(r"(?:^|_)(?:name|doctor|driver|agent|contact|owner|provider)$", re.I)
"""A field whose value is a person's or a thing's name."""

MAX_RECORDS = 2000
"""The most records a conversation's results are read into: a search that returns thousands
of rows is kept to its first ones (a message names few of them)."""


@dataclass(frozen=True)
class Record:
    """One mapping of a tool result."""

    key: str | None
    """Its identity, as the result wrote it (None: nothing names it)."""
    kind: str
    """What it is, from the shape of its identity or the key it is under."""
    values: tuple[tuple[str, str], ...]
    """Its own fields' values (field, value as text), nested mappings left out."""
    links: frozenset[str]
    """The identities of records it holds, is held by, or names."""
    tool: str = ""
    collection: str = ""
    """The key it is under in its result, in the singular ("account" for an item of
    "accounts"); empty for a result's own record."""

    def same_kind(self, other: Record) -> bool:
        """Records of one kind: the same kind of identity, in the same collection where both
        are in one (a Salesforce account and a Salesforce contact are not)."""
        return self.kind == other.kind and (
            self.collection == other.collection or not self.collection or not other.collection
        )

    def tokens_of(self, name: str) -> list[list[str]]:
        return [tokens(v) for f, v in self.values if f == name]


@dataclass
class Records:
    """Every record the results showed, in the order shown, each identity once."""

    items: list[Record] = field(default_factory=list)
    by_key: dict[str, Record] = field(default_factory=dict)
    looked_up: list[Record] = field(default_factory=list)
    """The records calls asked for by their identity, in the order asked (the last of a kind
    is the one the agent looked at last: "it")."""

    def add(self, result: Any, arguments: Mapping[str, Any] | None, tool: str) -> None:
        """The records of one successful tool result."""
        given = {str(v) for v in (arguments or {}).values() if isinstance(v, str | int)}
        asked = {normal_id(g) for g in given}
        for record in _walk(result, None, None, given, tool):
            if len(self.items) >= MAX_RECORDS:
                return
            if record.key is not None and normal_id(record.key) in asked:
                self.looked_up.append(record)
            if record.key is not None:
                known = self.by_key.get(normal_id(record.key))
                if known is not None and set(record.values) <= set(known.values):
                    continue
                for alias in aliases(record.key):
                    self.by_key.setdefault(alias, record)
                self.by_key[normal_id(record.key)] = record
            self.items.append(record)

    def kin(self, record: Record) -> list[Record]:
        """The records of the same kind as this one (itself included)."""
        return [r for r in self.items if r.same_kind(record)]

    def named(self, value: Any) -> Record | None:
        """The record a value names (its identity), if any."""
        if isinstance(value, bool) or not isinstance(value, str | int):
            return None
        return self.by_key.get(normal_id(str(value)))

    def linked(self, record: Record) -> list[Record]:
        """The records linked to this one, either way."""
        out = [self.by_key[k] for k in record.links if k in self.by_key]
        if record.key is not None:
            mine = normal_id(record.key)
            out += [r for r in self.items if mine in r.links and r is not record]
        return out


def aliases(key: str) -> list[str]:
    """The other ways a call may give an identity: the id part of a reference
    ("3067332940" of "hs:3067332940")."""
    parts = [p for p in re.split(r"[:/|]", key) if p]
    last = parts[-1] if len(parts) > 1 else ""
    return [normal_id(last)] if len(last) >= 5 and re.search(r"\d", last) else []


def normal_id(value: str) -> str:
    """An identity as compared: lower case, without spaces or punctuation."""
    return re.sub(r"[^0-9a-z]", "", value.lower())


def kind_of(key: str, under: str | None) -> str:
    """A record's kind: its identity's leading letters (`w` of W11177, `pm_card_` of
    pm_card_0193); for an identity that starts with a digit, its length and whether it has
    letters (a 15-character Salesforce id is not a 10-digit HubSpot one); for a word, the
    field or key it is under."""
    lead = re.match(r"[A-Za-z_]+(?=[^A-Za-z_]|$)", key)
    if lead and len(lead.group()) < len(key):
        return lead.group().lower()
    if key[:1].isdigit() and key.isalnum():
        return f"#{len(key)}{'a' if re.search('[A-Za-z]', key) else '9'}"
    return (under or "").lower()


def _singular(name: str) -> str:
    return name[:-3] + "y" if name.endswith("ies") else name[:-1] if name.endswith("s") else name


def _identity(
    data: Mapping[str, Any], under: str | None, parent: Mapping[str, Any] | None, given: set[str]
) -> tuple[str | None, str | None]:
    """A mapping's identity and the field it is in (None for one its parent names)."""
    if isinstance(data.get("id"), str | int) and not isinstance(data.get("id"), bool):
        return str(data["id"]), "id"
    if under and parent is not None:
        named = parent.get(f"{under}_id")
        if isinstance(named, str | int) and not isinstance(named, bool):
            return str(named), None
    for name in (f"{_singular(under)}_id" if under else "", f"{under}_id" if under else ""):
        value = data.get(name) if name else None
        if isinstance(value, str | int) and not isinstance(value, bool):
            return str(value), name
    ids = [(k, v) for k, v in data.items() if ID_FIELD.search(k) and isinstance(v, str | int)]
    for name, value in ids:
        if parent is None and str(value) in given:
            return str(value), name
    if ids:
        return str(ids[0][1]), ids[0][0]
    return None, None


def _walk(
    data: Any,
    under: str | None,
    parent: Mapping[str, Any] | None,
    given: set[str],
    tool: str,
    above: str | None = None,
) -> Iterator[Record]:
    if isinstance(data, list):
        for item in data:  # the call's arguments filter a list; they do not name its items
            yield from _walk(item, under, parent, set() if parent is None else given, tool, above)
        return
    if not isinstance(data, Mapping):
        return
    key, key_field = _identity(data, under, parent, given)
    values: list[tuple[str, str]] = []
    links: set[str] = set()
    children: list[tuple[str, Any]] = []
    fields = list(data.items())
    while fields:
        name, value = fields.pop(0)
        name = str(name)
        if isinstance(value, Mapping) and _identity(value, name, data, given)[0] is None:
            fields[:0] = list(value.items())  # a part of this record ("properties", "billing")
            continue
        for leaf in value if isinstance(value, list) else [value]:
            if isinstance(leaf, Mapping):
                children.append((name, leaf))
            elif isinstance(leaf, bool):
                values.append((name, "true" if leaf else "false"))
            elif isinstance(leaf, str | int | float) and str(leaf).strip():
                values.append((name, str(leaf)))
                if name != key_field and ID_FIELD.search(name) and not isinstance(leaf, float):
                    links.add(normal_id(str(leaf)))
    if above is not None:
        links.add(above)
    mine = normal_id(key) if key is not None else None
    for name, child in children:
        child_key, _ = _identity(child, name, data, given)
        if child_key is not None:
            links.add(normal_id(child_key))
        yield from _walk(child, name, data, given, tool, mine)
    links.discard(mine or "")
    kind = kind_of(key, key_field or under) if key is not None else (under or tool).lower()
    yield Record(key, kind, tuple(values), frozenset(links), tool, _singular(under or "").lower())


def records_of(calls: Iterable[tuple[Any, Mapping[str, Any] | None, str]]) -> Records:
    """The records of successful tool results: (result, arguments, tool) in order."""
    out = Records()
    for result, arguments, tool in calls:
        out.add(result, arguments, tool)
    return out


# ---------------------------------------------------------------- how a message refers to one


def short_names(value: str) -> list[list[str]]:
    """A name's shorter forms: its last word, and its first word with the last's initial
    ("Lind", "Henrik L" of "Dr. Henrik Lind")."""
    words = [w for w in re.findall(r"[A-Za-z][\w'-]*", value) if w.lower() not in _TITLES]
    if len(words) < 2:
        return []
    last, first = words[-1], words[0]
    forms = [tokens(last)] if len(last) > 2 and last.lower() not in _SUFFIXES else []
    forms += [tokens(" ".join(words[:n])) for n in range(2, len(words))]
    return [*forms, tokens(f"{first} {last[0]}")]


_TITLES = frozenset({"dr", "mr", "mrs", "ms", "prof", "doctor"})
_SUFFIXES = frozenset({"inc", "llc", "ltd", "corp", "co", "gmbh", "plc", "jr", "sr", "ii", "iii"})
"""The last words of a name that name nobody ("LLC")."""


def mentions_value(reading: Reading, name: str, value: str) -> list[int]:
    """Where a message states a field's value: whole, the date of a date and time, or a name
    by a shorter form."""
    said = tokens(value)
    found = reading.find(said)
    if not found and len(said) > 1 and said[0][:1].isdigit() and "-" in said[0]:
        found = reading.find(said[:1])
    if found or not NAME_FIELD.search(name):
        return found
    return sorted({p for form in short_names(value) for p in reading.find(form)})


def _informative(value: str) -> bool:
    """A value that can tell records apart in a message: not a bare yes/no or a one-letter
    code, not a code that is also a little word of every sentence (the state "OR", "IN" or
    "ME" is "or", "in" and "me" in a message), and not a text of more than eight words (a
    description is not said whole)."""
    said = tokens(value)
    return (
        bool(said)
        and len(said) <= 8
        and value not in ("true", "false")
        and len(value) > 1
        and value.lower() not in _LITTLE_WORDS
    )


_LITTLE_WORDS = frozenset(
    {"or", "in", "me", "on", "at", "to", "of", "by", "an", "as", "is", "it", "be", "do", "go",
     "hi", "ok", "no", "so", "up", "us", "we", "he", "if", "my", "oh", "am"}
)  # fmt: skip
"""Two-letter words a message says anyway (state codes among them: "OR", "IN", "ME")."""


def referred(
    reading: Reading,
    record: Record,
    records: Records,
    skip: Sequence[int] = (),
    positions: Sequence[int] | None = None,
) -> list[int]:
    """Where a message refers to a record: its identity, or values of it (at least one, and
    together no other record of its kind's) said in the message. `skip`: places that may not
    count (the value whose owner is in question); `positions`: the only places that may."""

    def allowed(places_: list[int]) -> list[int]:
        return [p for p in places_ if p not in skip and (positions is None or p in positions)]

    if record.key is not None:
        by_key = allowed(reading.find(tokens(record.key)))
        if by_key:
            return by_key
    said: dict[tuple[str, str], list[int]] = {}
    kin = records.kin(record)
    for name, value in record.values:
        if _informative(value):
            at = allowed(mentions_value(reading, name, value))
            month = _month_of(value)
            if (
                not at
                and month
                and all(_month_of(v) != month for r in kin if r is not record for f, v in r.values)
            ):
                at = allowed(find_all(reading, month))  # "the one from December 2024"
            if at:
                said[(name, value)] = at
    if not said:
        return []
    for other in kin:
        if other is not record and other.key != record.key and set(said) <= set(other.values):
            return []
    return sorted({p for at in said.values() for p in at})


_ISO_DATE = re.compile(r"^(\d{4})-(\d{2})-\d{2}(?:$|[T ])")


def _month_of(value: str) -> list[list[str]]:
    """A date's month and year as a message says them ("December 2024", "Dec 2024"); empty
    for a value that is no date."""
    found = _ISO_DATE.match(value)
    if not found:
        return []
    year, month = found.group(1), int(found.group(2))
    names = [n for n, number in MONTHS.items() if number == month]
    return [tokens(f"{name} {year}") for name in names]


def described_together(reading: Reading, record: Record, records: Records) -> list[Record]:
    """The records of this one's kind that share the values the message states of it ("the
    two Diego Rossi contacts"): those the message names as a group."""
    said = {
        (name, value)
        for name, value in record.values
        if _informative(value) and mentions_value(reading, name, value)
    }
    if not said:
        return []
    return [r for r in records.kin(record) if said <= set(r.values)]


def refers_by_id(reading: Reading, record: Record) -> bool:
    return record.key is not None and bool(reading.find(tokens(record.key)))


def digits_of_key(key: str) -> list[list[str]]:
    """The parts of an identity that carry digits, as a message may name it ('0193' of
    pm_card_0193)."""
    return [tokens(p) for p in re.split(r"[_\W]+", key) if p and re.search(r"\d", p)]


def find_all(reading: Reading, forms: Iterable[list[str]]) -> list[int]:
    return sorted({p for form in forms for p in places(reading.tokens, form)})


ROLE_REACH = 4
"""How many words before "as <role>" the record it names may be."""


def role_holder(reading: Reading, role: int) -> range:
    """Where the record given a role word is: before "as" ("X (the newer) as master", "X as
    the survivor"), before "the" when the clause names a record there ("make HubSpot's Bob
    record the survivor"), else just after it ("master X", "the duplicate X")."""
    said = reading.tokens
    at = role - 1 if role > 0 and said[role - 1] in ("the", "a") else role
    if at > 0 and said[at - 1] == "as":
        return range(max(0, at - 1 - ROLE_REACH), at - 1)
    start = reading.clause_at(role).start
    if at < role and at - start >= 2 and said[at - 1] not in _VERB_BEFORE_ROLE:
        return range(max(start, at - ROLE_REACH), at)
    return range(role + 1, role + 3)


_VERB_BEFORE_ROLE = frozenset({"merge", "merg", "into", "is", "be", "keep", "make", "of", "to"})
"""Words right before "the master" after which the record follows the role ("merge the
duplicate X", "keep the master X")."""


def systems_of(
    systems: Mapping[str, tuple[str, ...]], record: Record, others: Sequence[Record]
) -> dict[Record, tuple[str, ...]]:
    """The call's records by the system names of the tools that showed them, where the
    record's own system is not another's ("Salesforce" and "CUSTDB"; two Salesforce
    records are not told apart by it)."""
    own = systems.get(record.tool, ())
    if not own:
        return {}
    out = {record: own}
    for other in others:
        names = systems.get(other.tool, ())
        if names and not set(names) & set(own):
            out.setdefault(other, names)
    return out if len(out) > 1 else {}


def system_at(reading: Reading, role: int, names: tuple[str, ...]) -> bool:
    """The role word is given to a system by name: "CUSTDB's billing", "the title from
    Salesforce"."""
    said = reading.tokens
    before = role >= 2 and said[role - 1] == "s" and said[role - 2] in names
    after = role + 2 < len(said) and said[role + 1] == "from" and said[role + 2] in names
    return before or after
