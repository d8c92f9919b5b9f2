"""Whether a message proposed a write: its action, its objects and every argument that matters,
compared as values.

A user's yes is consent to what they were told, so a write is licensed by a proposal only when
the proposal stated it: the action (named by the tool's words or everyday ones, where no
negation denies it; or, where the message names no action at all, by the values alone), the
record it writes (by id, by its values - "your Mastercard ending in 7298" - or as the one
record of its kind the conversation is about, or that a record it names holds), and every
argument with consequences (an amount, a slot, a date, an address, a payment method) as the
same value: stated, said by the user, or, where the message states none of its kind, the
value the named record already holds (a full refund to the card that paid). A message that
states another value of an argument's kind proposed that other value.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from toolproof.meaning.actions import Vocabulary, actions_named, name_words, named_at, reads_named
from toolproof.meaning.clauses import Clause, Reading
from toolproof.meaning.records import (
    ID_FIELD,
    NAME_FIELD,
    Record,
    Records,
    described_together,
    digits_of_key,
    find_all,
    kind_of,
    normal_id,
    referred,
    role_holder,
    system_at,
    systems_of,
)
from toolproof.meaning.values import contains, tokens


@dataclass(frozen=True)
class Scene:
    """What a conversation had shown by a point: the records of its tool results, what the
    user said, and the messages so far (for what it is about)."""

    records: Records
    heard: tuple[str, ...] = ()
    """Everything the user said so far, as tokens."""
    said: Sequence[Reading] = ()
    """Every message so far (the user's and the agent's), read."""


@dataclass(frozen=True)
class Binding:
    """Whether a message proposed a call, and if not, why not."""

    proposed: bool
    why: str = ""
    explicit: int = 0
    """How many of the call's values the message stated itself."""
    unnamed: bool = False
    """It failed only for records it never named (an amendment may leave them as they were)."""


WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


@dataclass
class _Check:
    reading: Reading
    scene: Scene
    schema: Mapping[str, Any]
    call: Mapping[str, Any]
    explicit: int = 0
    problems: list[str] = field(default_factory=list)
    named: list[Record] = field(default_factory=list)
    """The records the message refers to."""
    context: list[Record] = field(default_factory=list)
    """Those, the records the conversation is about, and the call's own records."""
    acting: set[int] = field(default_factory=set)
    """The places of the sentences that name a write's action (where its values are)."""
    actions: set[str] = field(default_factory=set)
    """The words of the names of the write tools whose action the message names."""
    systems: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Tool -> the names of the system its description gives."""
    unnamed: int = 0
    """How many of the problems are records never named."""


def binds(
    reading: Reading,
    tool: str,
    arguments: Mapping[str, Any],
    parameters: Mapping[str, Any],
    scene: Scene,
    vocabulary: Vocabulary,
) -> Binding:
    """Whether the message proposed this call (see the module's docstring)."""
    named = actions_named(reading, vocabulary)
    denied = actions_named(reading, vocabulary, asserted=False).get(tool, [])
    if not named and denied and not _proposed_instead(reading, arguments, scene, denied):
        return Binding(False, f"it says {tool}'s action will not be done")
    if not named and reads_named(reading, vocabulary):
        return Binding(False, "it proposed looking something up, not a change")
    check = _Check(reading, scene, parameters, arguments, systems=vocabulary.systems)
    check.actions = {w for t in named for w in tokens(" ".join(name_words(t)))}
    sentences = {reading.clause_at(p).sentence for places in named.values() for p in places}
    check.acting = {
        p for c in reading.clauses if c.sentence in sentences for p in range(c.start, c.end)
    }
    verbs = {p for places in actions_named(reading, vocabulary, False).values() for p in places}
    check.named = [r for r in scene.records.items if _refers(check, r, sorted(verbs))]
    check.context = [*check.named, *focus(scene)]
    check.context += [
        r
        for _, value, _ in _leaves(arguments, parameters)
        if (r := scene.records.named(value)) is not None
    ]
    # The records the user's request is about (the shipment, the customer) are every
    # action's object and tell no action apart; a van or a slot the agent brought in does.
    heard = Reading(
        " ".join(scene.heard),
        scene.heard,
        (Clause("", 0, len(scene.heard), 0, False, None, False),),
    )
    about = {r.key for r in focus(scene) if referred(heard, r, scene.records)}
    others = sorted({p for t, places in named.items() if t != tool for p in places})
    distinctive = 0
    for path, value, schema in _leaves(arguments, parameters):
        before = check.explicit
        _argument(check, path, value, schema)
        record = scene.records.named(value) or _part_named(scene.records, value)
        if check.explicit == before:
            continue
        if record is None:
            distinctive += 1  # an amount, a date, a text: no other action's object
        elif record.key not in about and not _claimed(check, record, others):
            distinctive += 1
    if named and tool not in named and distinctive == 0:
        return Binding(False, f"it proposed {', '.join(sorted(named))}, not {tool}")
    check.problems += _swapped_roles(check) + _left_out(check)
    if check.problems:
        unnamed = check.unnamed == len(check.problems)
        return Binding(False, "; ".join(check.problems), check.explicit, unnamed)
    if not named and check.explicit == 0:
        return Binding(False, "it names neither the action nor any of its values")
    return Binding(True, "", check.explicit)


def _proposed_instead(
    reading: Reading, arguments: Mapping[str, Any], scene: Scene, denied: Sequence[int]
) -> bool:
    """After denying the action for one thing, the message proposes it for another: "I
    can't assign Lena: ... The plan instead: box truck V136 with Sara Moreau". A record the
    call names is referred to in a sentence after the denial, with no negation."""
    last = max(reading.clause_at(p).sentence for p in denied)
    later = [
        p
        for c in reading.clauses
        if c.sentence > last and c.negated_at is None
        for p in range(c.start, c.end)
    ]
    held = [r for v in arguments.values() if (r := scene.records.named(v)) is not None]
    return any(referred(reading, r, scene.records, positions=later) for r in held)


def _refers(check: _Check, record: Record, skip: Sequence[int] = ()) -> bool:
    """The message refers to the record by what it says, not by an action's verb ("Shall I
    cancel H2003?" does not name the one appointment whose status is `cancelled`)."""
    positions = [p for p in range(len(check.reading.tokens)) if not _denied(check.reading, p)]
    return bool(referred(check.reading, record, check.scene.records, skip, positions))


def _denied(reading: Reading, position: int) -> bool:
    return reading.clause_at(position).denies(position)


def _left_out(check: _Check) -> list[str]:
    """Records the proposal gave a parameter that the call leaves out: "assign V106 with Ana
    Ramirez" proposes her as the driver, and a call without a driver takes the van's
    regular one. A record counts when its own id field is that parameter, the sentence that
    names the action names it by its id or name, not denied, and no record the call holds
    has it (the van's own regular driver comes with the van)."""
    properties = check.schema.get("properties")
    if not isinstance(properties, Mapping):
        return []
    given = {str(v) for _, v, _ in _leaves(check.call, check.schema)}
    held = [r for v in given if (r := check.scene.records.named(v)) is not None]
    by_key = check.scene.records.by_key
    out = []
    for name in properties:
        if check.call.get(name) not in (None, ""):
            continue
        # what a held record shows in the parameter's own field may be a write's result
        implied = {str(v) for r in held for f, v in r.values if f != name} | {
            str(by_key[k].key)
            for h in held
            for k in h.links
            if k in by_key and (name, by_key[k].key) not in h.values
        }
        for record in check.named:
            if (
                record.key is None
                or record.key in given | implied
                or (name, record.key) not in record.values
            ):
                continue
            called = [record.key] + [v for f, v in record.values if NAME_FIELD.search(f)]
            places = [p for c in called for p in check.reading.find(tokens(c))]
            if any(p in check.acting and not _denied(check.reading, p) for p in places):
                out.append(f"{name}: it proposed {record.key!r}, which the call leaves out")
                break
    return out


def _leaves(
    value: Any, schema: Mapping[str, Any], path: str = ""
) -> Iterator[tuple[str, Any, Mapping[str, Any]]]:
    """Each scalar of a call's arguments with its schema; keys the schema does not declare
    are left out (the tool ignores them)."""
    if isinstance(value, Mapping):
        properties = schema.get("properties")
        for key, item in value.items():
            inner = properties.get(key) if isinstance(properties, Mapping) else {}
            if isinstance(properties, Mapping) and inner is None:
                continue
            yield from _leaves(item, inner or {}, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        items = schema.get("items")
        for item in value:
            yield from _leaves(item, items if isinstance(items, Mapping) else {}, path)
    elif value is not None and value != "":
        yield path, value, schema


def _argument(check: _Check, path: str, value: Any, schema: Mapping[str, Any]) -> None:
    """Whether the message stated one argument's value, and records a problem if not."""
    reading, scene = check.reading, check.scene
    record = scene.records.named(value) or _part_named(scene.records, value)
    if record is not None:
        _record_argument(check, path, record)
        return
    if isinstance(value, bool) or "enum" in schema:
        default = schema.get("default")
        rivals = [str(v) for v in schema.get("enum", []) if str(v) != str(value)]
        own = set(tokens(str(value).replace("_", " ")))
        said = [
            r
            for r in rivals
            if _stated(reading, tokens(r))
            or (
                _choice_stated(reading, r)
                and not any(
                    reading.find([w]) or w in check.actions
                    for w in own - set(tokens(r.replace("_", " ")))
                )
            )
        ]
        if _choice_stated(reading, str(value)):
            check.explicit += 1
        elif said:
            check.problems.append(f"{path}: it proposed {said[0]!r}, not {value!r}")
        elif default is not None and str(default) != str(value) and "enum" in schema:
            check.problems.append(f"{path}: {value!r} was never stated (unsaid, it is {default!r})")
        return
    said = tokens(str(value))
    if _stated_alone(check, said) or _weekday_of(reading, said) or _per_unit(reading, said):
        check.explicit += 1
        choice = _offered_with(reading, said)
        if choice:
            check.problems.append(f"{path}: it offered {choice!r} as well as {value!r}")
        return
    if isinstance(value, str) and (longer := _longer_stated(check, said)):
        check.problems.append(f"{path}: it proposed {longer!r}, not {value!r}")
        return
    if isinstance(value, str) and _kind(said) == "text" and _stated_apart(reading, said):
        check.explicit += 1
        return
    if isinstance(value, str) and ID_FIELD.search(path.rsplit(".", 1)[-1]):
        _identifier_argument(check, path, value)
        return
    if contains(list(scene.heard), said) or DESCRIPTIVE.search(path.rsplit(".", 1)[-1]):
        return  # the user's own words, or a reason or a note: words, not a consequence
    kind = _kind(said)
    others = _others_of_kind(check, kind, said, path.rsplit(".", 1)[-1])
    if others:
        check.problems.append(f"{path}: it proposed {' '.join(others[0])!r}, not {value!r}")
        return
    if any(said in r.tokens_of(name) for r in check.context for name, _ in r.values):
        return
    check.problems.append(f"{path}: {value!r} was never stated")


def _record_argument(check: _Check, path: str, record: Record) -> None:
    """An argument that names a record: the message refers to it, or to a record linked to
    it as the only one of its kind, or the conversation is about it alone; and the message
    refers to no other record of its kind that the call's other records do not hold."""
    records = check.scene.records
    if record in check.named or any(
        find_all(check.reading, [d]) for d in digits_of_key(record.key or "")
    ):
        check.explicit += 1
        places = referred(check.reading, record, records)
        choice = next(
            (c for p in places if (c := _offered_with(check.reading, [check.reading.tokens[p]]))),
            None,
        )
        if choice:
            check.problems.append(f"{path}: it offered {choice!r} as well as {record.key!r}")
        return
    own = {r.key for r in _own_records(check)}
    rivals = [
        r
        for r in check.named
        if r.same_kind(record) and r.key not in own and not _held_by_call(check, r)
    ]
    unknown = [
        t
        for p, t in enumerate(check.reading.tokens)
        if kind_of(t, None) == record.kind
        and "-" not in t
        and normal_id(t) != normal_id(record.key or "")
        and records.named(t) is None
        and not _denied(check.reading, p)
    ]
    if rivals or unknown:
        other = rivals[0].key if rivals else unknown[0]
        check.problems.append(f"{path}: it proposed {other!r}, not {record.key!r}")
        return
    if record in focus(check.scene) or _one_of_the_pair(check, record):
        return
    if _last_looked_up(check, record):
        return
    for near in check.context:
        kin = [r for r in records.linked(near) if r.same_kind(record)]
        if near is not record and kin and all(r.key == record.key for r in kin):
            return
    check.problems.append(f"{path}: {record.key!r} was never named")
    check.unnamed += 1


def _last_looked_up(check: _Check, record: Record) -> bool:
    """The message names no record of the kind and points back at one ("Shall I bin it?"):
    the one of that kind the agent asked for by its identity last."""
    if not {"it", "this", "that"} & set(check.reading.tokens):
        return False
    if any(r.same_kind(record) for r in check.named):
        return False
    kin = [r for r in check.scene.records.looked_up if r.same_kind(record)]
    return bool(kin) and kin[-1].key == record.key


def _identifier_argument(check: _Check, path: str, value: str) -> None:
    """An identifier no result showed a record for: stated, or said by the user with no other
    identifier of its shape in the message."""
    kind = kind_of(value, None)
    others = [
        t
        for p, t in enumerate(check.reading.tokens)
        if kind
        and any(c.isdigit() for c in t)
        and kind_of(t, None) == kind
        and normal_id(t) != normal_id(value)
        and not _denied(check.reading, p)
    ]
    if others:
        check.problems.append(f"{path}: it proposed {others[0]!r}, not {value!r}")
    elif not contains(list(check.scene.heard), tokens(value)) and not _held_by_proposed(
        check, value
    ):
        check.problems.append(f"{path}: {value!r} was never named")


def _held_by_proposed(check: _Check, value: str) -> bool:
    """A record the message or the conversation is about holds the identifier as one of its
    own values (an order's charge and payment method: "refund the poles to your PayPal")."""
    holders = [*check.named, *focus(check.scene)]
    return any(shown == value for r in holders for _, shown in r.values)


def _one_of_the_pair(check: _Check, record: Record) -> bool:
    """The call takes several records of one kind, and the message names those records and
    no others of the kind, together or one by one ("merge the two, keeping A as master")."""
    own = [r for r in _own_records(check) if r.same_kind(record)]
    if len(own) < 2:
        return False
    keys = {r.key for r in own}
    named = {r.key for r in check.named if r.same_kind(record)}
    for reading in [check.reading, *check.scene.said]:
        for other in own:
            named |= {r.key for r in described_together(reading, other, check.scene.records)}
    return keys <= named and not (named - keys - {None})


def _held_by_call(check: _Check, other: Record) -> bool:
    """The record is held by one of the call's own records (an appointment's current slot
    beside the new one), so naming it is context, not another proposal."""
    for _, value, _ in _leaves(check.call, check.schema):
        mine = check.scene.records.named(value)
        if mine is not None and other in check.scene.records.linked(mine):
            return True
    return False


def focus(scene: Scene) -> list[Record]:
    """The records the conversation is about: of each kind, the one record the messages so
    far referred to, where they referred to only one."""
    records = scene.records
    found: dict[tuple[str, str], set[str | None]] = {}
    first: dict[str | None, Record] = {}
    for reading in scene.said:
        for record in records.items:
            kind = (record.kind, record.collection)
            if kind in found and record.key in found[kind]:
                continue
            if referred(reading, record, records):
                found.setdefault(kind, set()).add(record.key)
                first.setdefault(record.key, record)
    return [first[next(iter(keys))] for keys in found.values() if len(keys) == 1]


def _longer_stated(check: _Check, value: list[str]) -> str | None:
    """A longer value the results showed, holding this one, stated in the message."""
    for record in check.scene.records.items:
        for _, shown in record.values:
            said = tokens(shown)
            if len(said) > len(value) and contains(said, value) and _stated(check.reading, said):
                return shown
    return None


def _stated_alone(check: _Check, value: list[str]) -> bool:
    """The value is stated, and not only as a part of a longer value the results showed:
    "Senior Analyst" does not state "Analyst"."""
    reading = check.reading
    places = [p for p in reading.find(value) if not _denied(reading, p)]
    if not places:
        return False
    width = len(value)
    longer = {
        tuple(t)
        for r in check.scene.records.items
        for _, v in r.values
        if len(t := tokens(v)) > width and contains(t, value)
    }
    covered = {
        p
        for form in longer
        for q in reading.find(list(form))
        for p in range(q, q + len(form) - width + 1)
    }
    return any(p not in covered for p in places)


def _choice_stated(reading: Reading, choice: str) -> bool:
    """An allowed value of a parameter is stated as written, in words ("original payment"
    of `original_payment`), or by all its words in one clause ("as credit at the clinic" of
    `clinic_credit`). Said in words, another allowed value is a rival only where none of the
    value's own words is said (or named by the action the message names): "swap the tee and
    text you the return label" proposes the `exchange_confirmed` text (which carries the
    label), not `return_label`."""
    if _stated(reading, tokens(choice)):
        return True
    words = tokens(choice.replace("_", " "))
    if len(words) < 2:
        return False
    if _stated(reading, words):
        return True
    return any(
        all(any(c.start <= p < c.end for p in reading.find([w])) for w in words)
        and c.negated_at is None
        for c in reading.clauses
    )


def _stated(reading: Reading, value: list[str]) -> bool:
    return any(not _denied(reading, p) for p in reading.find(value))


def _kind(said: list[str]) -> str:
    """What sort of value tokens hold: a date, a time of day, a number, or text."""
    if len(said) == 1:
        token = said[0]
        if "-" in token and token.replace("-", "").isdigit():
            return "date"
        if ":" in token:
            return "time"
        if token.replace(".", "", 1).isdigit():
            return "number"
    return "text"


DESCRIPTIVE = re.compile(
    r"(?:^|_)(?:reason|notes?|comments?|message|description|memo|details?|remarks?|summary|"
    r"body|subject|title|text)$",
    re.IGNORECASE,
)
"""An argument in words that has no consequence of its own (a reason, a note)."""


ID_DIGITS = 6
"""How long a part of a reference must be to name its record alone ("0015g00000988BP" of
"sf:0015g00000988BP"; not the "D2" of a slot)."""
CLAIM_REACH = 8
"""How many words after another action's word a record it names is its object."""


_ROLE_WORDS_APART = frozenset({"id", "no", "num", "number", "from", "to", "key", "ref", "new"})


def _swapped_roles(check: _Check) -> list[str]:
    """A record the message gives one argument's role ("keeping 0035g00000ftdgO as master",
    "CUSTDB's billing address") that the call gives another (it is the call's duplicate, or
    another system's record)."""
    records = check.scene.records
    reading = check.reading
    leaves = [
        (path, r, _part_named(records, v) is not None)
        for path, v, _ in _leaves(check.call, check.schema)
        if (r := records.named(v) or _part_named(records, v)) is not None
    ]
    problems: list[str] = []
    for path, record, sourced in leaves:
        roles = [(w,) for w in name_words(path.rsplit(".", 1)[-1]) if w not in _ROLE_WORDS_APART]
        peers = {p for p, r, _ in leaves if r.key == record.key}
        together = {r.key for p, r, _ in leaves if p in peers and p != path}  # the merged records
        others = [
            r
            for p, r, _ in leaves
            if r.key != record.key and p != path and (r.same_kind(record) or r.key in together)
        ]
        systems = systems_of(
            check.systems, record, [r for p, r, _ in leaves if r.key != record.key]
        )
        if not others and not (sourced and systems):
            continue  # one record of its kind: its role cannot be swapped
        for role in named_at(reading, roles):
            near = role_holder(reading, role)
            given = [r for r in others if any(p in near for p in referred(reading, r, records))]
            mine = any(p in near for p in referred(reading, record, records))
            if sourced and not given and not mine and reading.clause_at(role).negated_at is None:
                by = [r for r, names in systems.items() if system_at(reading, role, names)]
                mine = record in by
                given = [] if mine else by
            if given and not mine:
                problems.append(f"{path}: it proposed {given[0].key!r} as {path}")
                break
    return problems


def _claimed(check: _Check, record: Record, others: list[int]) -> bool:
    """The message names the record only as the object of another write's action, within a
    few words after it in its clause ("Shall I reschedule H2001 ...?", "merge the duplicate
    into 0015g00000988BP"): it is that action's, not this call's."""
    reading = check.reading
    places = referred(reading, record, check.scene.records) or find_all(
        reading, [p for p in digits_of_key(record.key or "") if len(p[0]) >= ID_DIGITS]
    )  # "sf:0015g00000988BP" named by the id it holds

    def owned(place: int) -> bool:
        clause = reading.clause_at(place)
        return any(clause.start <= o < place <= o + CLAIM_REACH for o in others)

    return bool(places) and all(owned(p) for p in places)


def _part_named(records: Records, value: Any) -> Record | None:
    """The record a part of a value names ("sf:0015g00000uNzn4": a system and an id)."""
    if not isinstance(value, str):
        return None
    pieces = re.split(r"[:/|]", value)
    found = [r for p in pieces if len(p) >= 5 and (r := records.named(p)) is not None]
    return found[0] if len(found) == 1 and len(pieces) > 1 else None


def _own_records(check: _Check) -> list[Record]:
    """The records the call's arguments name."""
    records = check.scene.records
    return [
        r
        for _, v, _ in _leaves(check.call, check.schema)
        if (r := records.named(v) or _part_named(records, v))
    ]


def _others_of_kind(check: _Check, kind: str, value: list[str], name: str) -> list[list[str]]:
    """Values of the argument's sort the message states that the call does not explain:
    a number, date or time that is not one of its arguments nor a value of the records they
    name; a text that tool results showed for the same field."""
    reading = check.reading
    if kind == "text":
        shown = {
            tuple(tokens(v)) for r in check.scene.records.items for f, v in r.values if f == name
        }
        return [list(v) for v in shown if list(v) != value and _stated(reading, list(v))]
    own = _own_records(check)
    explained = {tuple(tokens(str(v))) for _, v, _ in _leaves(check.call, check.schema)}
    explained |= {tuple(tokens(v)) for r in own for _, v in r.values}
    explained |= {tuple(t) for r in own for t in digits_of_key(r.key or "")}
    where = check.acting or set(range(len(reading.tokens)))
    out: list[list[str]] = []
    for position, token in enumerate(reading.tokens):
        if position not in where:
            continue
        if _kind([token]) != kind or (token,) in explained or _denied(reading, position):
            continue
        if token.startswith("0") or token in check.scene.heard:
            continue  # an identifier's digits, or the user's own number
        out.append([token])
    return [v for v in out if v != value]


_COUNTS = {"both": 2, "two": 2, "three": 3, "four": 4, "five": 5}
_EACH = frozenset({"each", "apiece", "per"})


def _per_unit(reading: Reading, value: list[str]) -> bool:
    """A total the message states as a count of a price each ("both poles, $89.00 each")."""
    if _kind(value) != "number":
        return False
    said = reading.tokens
    counts = [_COUNTS.get(t) or (int(t) if t.isdigit() and int(t) <= 20 else None) for t in said]
    for i, token in enumerate(said):
        if _kind([token]) != "number" or not any(t in _EACH for t in said[i + 1 : i + 3]):
            continue
        for count in counts[max(0, i - 8) : i]:
            if count and abs(count * float(token) - float(value[0])) < 0.005:
                return True
    return False


def _stated_apart(reading: Reading, value: list[str]) -> bool:
    """A text of several words said in order with a word or two between ("M / Navy" as
    "medium in navy")."""
    if len(value) < 2:
        return False
    said = reading.tokens
    for start in (i for i, t in enumerate(said) if t == value[0]):
        at = start
        for word in value[1:]:
            nxt = next((j for j in range(at + 1, min(at + 4, len(said))) if said[j] == word), None)
            if nxt is None:
                break
            at = nxt
        else:
            return not _denied(reading, start)
    return False


def weekday(value: str) -> str | None:
    """The weekday of a value that is a full date ("saturday" of 2026-12-12), else None."""
    said = tokens(value)
    if len(said) != 1 or _kind(said) != "date" or said[0].startswith("--"):
        return None
    year, month, day = (int(p) for p in said[0].split("-"))
    return WEEKDAYS[date(year, month, day).weekday()]


def weekday_named(reading: Reading, value: str) -> bool:
    """A date the message names by its weekday and day of the month ("Saturday the 12th")."""
    said = tokens(value)
    if _kind(said) != "date" or said[0].startswith("--"):
        return False
    year, month, day = (int(p) for p in said[0].split("-"))
    weekday = WEEKDAYS[date(year, month, day).weekday()]
    return _stated(reading, [weekday]) and any(
        t in (str(day), f"{day}th", f"{day}st", f"{day}nd", f"{day}rd") for t in reading.tokens
    )


def _offered_with(reading: Reading, value: list[str]) -> str | None:
    """Another value of the same sort the message offers in the same breath ("at 8:00 AM or
    3:00 PM"): a yes to a choice chooses nothing."""
    kind = _kind(value)
    if kind == "text":
        return None
    for position in reading.find(value):
        clause = reading.clause_at(position)
        said = reading.tokens[clause.start : clause.end]
        for i, token in enumerate(said):
            other = clause.start + i
            if _kind([token]) != kind or token == value[0] or _denied(reading, other):
                continue
            between = said[min(i, position - clause.start) : max(i, position - clause.start)]
            if "or" in between:
                return token
    return None


def _weekday_of(reading: Reading, value: list[str]) -> bool:
    """A date the message names by its weekday ("move it to Thursday") and no other date."""
    if _kind(value) != "date" or value[0].startswith("--"):
        return False
    year, month, day = (int(p) for p in value[0].split("-"))
    weekday = WEEKDAYS[date(year, month, day).weekday()]
    if not _stated(reading, [weekday]):
        return False
    return not any(_kind([t]) == "date" and t != value[0] for t in reading.tokens)
