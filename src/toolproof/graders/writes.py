"""The writes grader: every write the agent attempted, succeeded or refused, is one the task
asks for.

The gold writes are matched as a multiset: each by at most one successful attempt whose
arguments equal its own as the tool reads them. Every other attempt is then judged in the
order it was made: one the task forbids fails, one a pattern of the task allows passes, and
the rest by the gold writes of its tool and record (the object it writes): a refused try at
one not yet done is allowed when the agent goes on to make it (the system said no and the
agent corrected it; so is a refused try of its tool at an id no result showed, a mistyped
one), a repeat of one done, or any attempt once all are done, is a duplicate, a successful
one with other arguments wrote what the gold does not; with no gold write of its record,
nobody asked for it."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from toolproof.graders.base import Evidence, Verdict, describe_call
from toolproof.meaning.records import Records
from toolproof.meaning.values import tokens
from toolproof.spec.expectations import Action, CallSpec, Expectations
from toolproof.transcript import ToolCallEvent

Schema = Mapping[str, Any]
"""A tool's parameters as JSON Schema."""

FORBIDDEN = "a write the task forbids"
DUPLICATE = "a duplicate write"
OTHER_ARGUMENTS = "a write with arguments the gold lacks"
NOT_ASKED = "a write nobody asked for"
CLASSES = (FORBIDDEN, DUPLICATE, OTHER_ARGUMENTS, NOT_ASKED)
TRY = "a refused try"
"""Not failing by itself: a try the system refused at a gold write not yet done, which the
agent must go on to make."""
"""The failing classes, in the order a reason lists them."""

SHOWN = 3
"""How many failing attempts a reason lists before "and N more"."""

ID_WORDS = frozenset({"id", "no", "number"})
"""Last words of a parameter name that make it an identifier (order_id, order_no, ...)."""


def same_value(a: Any, b: Any) -> bool:
    """Two argument values ask for the same thing: equal, or the same tokens (a phone number
    or an amount in another format, an id in another case)."""
    if a == b:
        return True
    if isinstance(a, dict | list) or isinstance(b, dict | list):
        return False
    return bool(tokens(str(a))) and tokens(str(a)) == tokens(str(b))


def same_arguments(given: Mapping[str, Any], gold: Mapping[str, Any], schema: Schema) -> bool:
    """Two calls of one tool pass the same arguments as the tool reads them: keys its schema
    does not declare ignored at any depth, an optional argument left out equal to its
    default, numbers by value, other values as `same_value` compares them. Without a schema
    every key counts."""
    return _same(as_read(dict(given), schema, schema), as_read(dict(gold), schema, schema))


def as_read(value: Any, schema: Schema, root: Schema) -> Any:
    """The value as a tool with this schema reads it: an object keeps only the properties
    the schema declares (every key where it declares none), with the default of each one
    left out; an array's items are read by its `items` schema, and an array of allowed
    values (fields to take, in any order) as a set."""
    branches = list(_branches(schema, root))
    if isinstance(value, dict):
        declared = {k: p for b in branches for k, p in b.get("properties", {}).items()}
        if not declared:
            return value
        read = {k: as_read(v, declared[k], root) for k, v in value.items() if k in declared}
        defaults = {k: p["default"] for k, p in declared.items() if "default" in p}
        return {**defaults, **read}
    if isinstance(value, list):
        items = [b["items"] for b in branches if isinstance(b.get("items"), dict)]
        item: Schema = {"anyOf": items} if items else {}
        if items and all("enum" in _resolved(i, root) for i in items):
            return sorted(value, key=str)  # a set of choices ("Title", "Email"): any order
        return [as_read(v, item, root) for v in value]
    return value


def _branches(schema: Schema, root: Schema) -> Iterator[Schema]:
    """The schema and every schema it combines (anyOf, oneOf, allOf), references followed:
    a value may be read by any of them."""
    node = _resolved(schema, root)
    yield node
    for key in ("anyOf", "oneOf", "allOf"):
        for branch in node.get(key, []):
            if isinstance(branch, dict):
                yield from _branches(branch, root)


def _resolved(schema: Schema, root: Schema) -> Schema:
    """A local `$ref` (`#/$defs/Flight`) followed to the schema it names."""
    ref = schema.get("$ref")
    if not isinstance(ref, str) or not ref.startswith("#/"):
        return schema
    node: Any = root
    for part in ref[2:].split("/"):
        node = node.get(part, {}) if isinstance(node, dict) else {}
    return _resolved(node, root) if isinstance(node, dict) else {}


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return same_value(a, b)


def record_key(action: Action, schema: Schema) -> str | None:
    """The argument of a gold write that names the record it writes: the first required
    argument (in the schema's order; the action's own without a schema) named as an
    identifier (order_id, order_no, flight_number) or whose value is one (a single word of
    letters and digits: W10234, ch_3Nq8). Later identifiers name what the write uses (a
    payment method, a duplicate to merge in). None when there is none: then every write of
    the tool is of one record."""
    order = [k for k in schema.get("required", []) if k in action.args] or list(action.args)
    return next((k for k in order if _names_a_record(k, action.args[k])), None)


def _names_a_record(name: str, value: Any) -> bool:
    words = re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+", name)
    if words and words[-1].lower() in ID_WORDS:
        return True
    return (
        isinstance(value, str)
        and re.fullmatch(r"\S+", value) is not None
        and re.search(r"[A-Za-z]", value) is not None
        and re.search(r"\d", value) is not None
    )


@dataclass
class GoldWrite:
    """A gold write, the argument naming its record, and whether an attempt has done it."""

    action: Action
    key: str | None
    done: bool = False

    def does(self, tool: str, args: Mapping[str, Any], schema: Schema) -> bool:
        """A successful attempt does this gold write: not done yet, same tool, equal
        arguments."""
        return (
            not self.done
            and self.action.tool == tool
            and same_arguments(args, self.action.args, schema)
        )

    def of_record(self, tool: str, args: Mapping[str, Any]) -> bool:
        """An attempt writes this gold write's record: same tool, same record."""
        return self.action.tool == tool and (
            self.key is None or same_value(args.get(self.key), self.action.args[self.key])
        )


def _fits(tool: str, args: Mapping[str, Any], pattern: CallSpec) -> bool:
    return pattern.tool == tool and all(same_value(args.get(k), v) for k, v in pattern.args.items())


def classify(
    call: ToolCallEvent,
    golds: list[GoldWrite],
    expect: Expectations,
    allowed: list[CallSpec],
    schema: Schema,
    records: Records | None = None,
) -> tuple[str, str] | None:
    """Why one write attempt fails the task, as (class, the attempt described), or None when
    it was asked for. A successful attempt equal to a gold write not yet done does it; at
    the record of gold writes, one that repeats a gold write done, or comes when all are
    done, is a duplicate, and one refused while some is not done is a try at it."""
    tool, args = call.canonical_name, call.canonical_arguments or {}
    done = next((g for g in golds if not call.is_error and g.does(tool, args, schema)), None)
    if done is not None:
        done.done = True
        return None
    if any(_fits(tool, args, f) for f in expect.forbidden_calls):
        return FORBIDDEN, describe_call(tool, args)
    if any(_fits(tool, args, p) for p in allowed):
        return None
    ours = [g for g in golds if g.of_record(tool, args)]
    if not ours and call.is_error and (typo := _mistyped(tool, args, golds, records)):
        return TRY, str(id(typo))  # a try with an id no result showed: the system said no
    if not ours:
        return NOT_ASKED, describe_call(tool, args)
    pending = [g for g in ours if not g.done]
    if not pending or any(g.done and same_arguments(args, g.action.args, schema) for g in ours):
        return DUPLICATE, describe_call(tool, args)
    if call.is_error:
        return TRY, str(id(pending[0]))
    return OTHER_ARGUMENTS, describe_call(tool, differing(args, pending[0], schema))


def _mistyped(
    tool: str, args: Mapping[str, Any], golds: list[GoldWrite], records: Records | None
) -> GoldWrite | None:
    """A refused attempt at a gold write of its tool not yet done, whose record argument
    names no record any result showed (a mistyped or made-up id, "I302" for "I3002"):
    nothing was written, and the agent may correct it. One that names a real other record
    (another customer's order) is no such try."""
    if records is None:
        return None
    for gold in golds:
        if gold.done or gold.action.tool != tool or gold.key is None:
            continue
        value = args.get(gold.key)
        if isinstance(value, str | int) and records.named(value) is None:
            return gold
    return None


def differing(args: Mapping[str, Any], gold: GoldWrite, schema: Schema) -> dict[str, Any]:
    """The record's argument, then each the attempt passed otherwise than the gold (as the
    tool reads both; None for one it left out): what the gold lacks."""
    given = as_read(dict(args), schema, schema)
    wanted = as_read(dict(gold.action.args), schema, schema)
    record = {gold.key: given.get(gold.key)} if gold.key is not None else {}
    keys = [*given, *(k for k in wanted if k not in given)]
    return {
        **record,
        **{
            k: given.get(k)
            for k in keys
            if k not in given or k not in wanted or not _same(given[k], wanted[k])
        },
    }


def grade_writes(expect: Expectations, evidence: Evidence) -> list[Verdict]:
    """Every write attempt is asked for: a gold write it does, a refused try at one not yet
    done, or a write the task allows (`allow_writes`, a write pattern of `calls`, any number
    of times). A task without gold actions is judged by its other expectations."""
    if expect.actions is None:
        return []
    schemas = evidence.parameters
    golds = [
        GoldWrite(a, record_key(a, schemas.get(a.tool, {})))
        for a in expect.actions
        if a.tool in evidence.write_tools
    ]
    allowed = [*expect.allow_writes, *(c for c in expect.calls if c.tool in evidence.write_tools)]
    failed: dict[str, list[str]] = {}
    tries: list[tuple[ToolCallEvent, GoldWrite]] = []
    records = Records()
    for call in evidence.transcript.tool_calls():
        if call.canonical_name not in evidence.write_tools:
            if not call.is_error:
                records.add(call.result, call.canonical_arguments, call.canonical_name)
            continue
        schema = schemas.get(call.canonical_name, {})
        found = classify(call, golds, expect, allowed, schema, records)
        if not call.is_error:
            records.add(call.result, call.canonical_arguments, call.canonical_name)
        if found is not None and found[0] == TRY:
            tries.append((call, next(g for g in golds if str(id(g)) == found[1])))
        elif found is not None:
            failed.setdefault(found[0], []).append(found[1])
    for call, gold in tries:
        if not gold.done:  # never corrected: what it tried is not what the task asks
            args = call.canonical_arguments or {}
            schema = schemas.get(call.canonical_name, {})
            shown = describe_call(call.canonical_name, differing(args, gold, schema))
            failed.setdefault(OTHER_ARGUMENTS, []).append(shown)
    if not failed:
        return [Verdict(grader="writes", passed=True, reason="every write was asked for")]
    return [Verdict(grader="writes", passed=False, reason=listed(failed))]


def listed(failed: Mapping[str, list[str]]) -> str:
    """The failing attempts by class, at most `SHOWN` of them, then how many more."""
    parts: list[str] = []
    left = SHOWN
    for name in CLASSES:
        shown = failed.get(name, [])[:left]
        if shown:
            parts.append(f"{name}: {', '.join(shown)}")
            left -= len(shown)
    total = sum(len(items) for items in failed.values())
    more = f" and {total - SHOWN} more" if total > SHOWN else ""
    return "; ".join(parts) + more
