"""What graders read and what they return. Graders are pure functions of this data."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from toolproof.graders.ownership import Ownership
from toolproof.spec.expectations import Expectations
from toolproof.spec.policy import PolicyRuleSpec
from toolproof.transcript import Transcript
from toolproof.world import Change


class Verdict(BaseModel):
    """One grader's judgement of one expectation group, with its reason."""

    grader: str
    passed: bool
    reason: str
    decided: bool = True
    """False when the grader could not tell (a check that errored or was never run, no
    expected state): the trial fails, and the failure is the grader's, not the agent's."""


Alternatives = Mapping[str, Mapping[str, tuple[str, ...]]]
"""Tool name -> parameter name -> the values the parameter allows."""


@dataclass(frozen=True)
class Evidence:
    """A finished trial as graders see it."""

    transcript: Transcript
    lookup: Callable[[str], tuple[bool, Any]]
    final_hash: str
    expected_hash: str | None
    write_tools: frozenset[str]
    ended: str
    required_args: Mapping[str, frozenset[str]] = field(default_factory=dict)
    """Each tool's required parameters (a decisive read is matched on those)."""
    changes: Callable[[], list[Change]] = list
    """What the trial changed in its initial world (read only when the state differs)."""
    expected_changes: Sequence[Change] = ()
    """What the gold actions change in it."""
    ownership: Ownership | None = None
    """Whose records are whose, and whose the caller's are (suites that protect them)."""
    facts: tuple[str, ...] = ()
    """Every form of every fact the task expects said: saying one is never a leak."""
    read_tools: frozenset[str] = frozenset()
    """The suite's read tools (a write's action is named by words no read's name has)."""
    alternatives: Alternatives = field(default_factory=dict)
    """Each tool's parameters that allow only some values, with those values: a fact among
    them competes with the others."""
    parameters: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """Each tool's parameters as JSON Schema: write attempts are compared with the gold
    writes as the tool reads their arguments."""


Grader = Callable[[Expectations, list[PolicyRuleSpec], Evidence], list[Verdict]]
"""A grader: a task's expectations, the suite's policy rules and a trial's evidence to
verdicts (registered in `toolproof.graders.registry.GRADERS`)."""


def matches(arguments: dict[str, Any] | None, subset: dict[str, Any]) -> bool:
    """Every argument of the pattern is present with an equal value."""
    if arguments is None:
        return False
    return all(key in arguments and arguments[key] == value for key, value in subset.items())


def describe_call(tool: str, args: dict[str, Any]) -> str:
    inner = ", ".join(f"{k}={v!r}" for k, v in args.items())
    return f"{tool}({inner})"


def allowed_values(schemas: Mapping[str, Mapping[str, Any]]) -> Alternatives:
    """Each tool's properties (at any depth of its JSON Schema) that list their allowed
    values (`enum`), with those values as text."""
    return {tool: _enums(schema) for tool, schema in schemas.items() if _enums(schema)}


def _enums(schema: Mapping[str, Any]) -> dict[str, tuple[str, ...]]:
    out: dict[str, list[str]] = {}

    def walk(node: Any, name: str) -> None:
        if isinstance(node, dict):
            if name and isinstance(node.get("enum"), list):
                values = out.setdefault(name, [])
                values += [str(v) for v in node["enum"] if str(v) not in values]
            for key, item in node.items():
                if key in ("$defs", "definitions"):
                    continue
                inner = key if isinstance(item, dict) and key not in _SCHEMA_WORDS else name
                walk(item, inner if key != "properties" else name)
        elif isinstance(node, list):
            for item in node:
                walk(item, name)

    walk(schema, "")
    return {name: tuple(values) for name, values in out.items()}


def by_field(alternatives: Alternatives) -> dict[str, tuple[str, ...]]:
    """The allowed values of each field, over every tool that has it."""
    out: dict[str, list[str]] = {}
    for fields in alternatives.values():
        for name, values in fields.items():
            merged = out.setdefault(name, [])
            merged += [v for v in values if v not in merged]
    return {name: tuple(values) for name, values in out.items()}


_SCHEMA_WORDS = frozenset({"items", "anyOf", "oneOf", "allOf", "additionalProperties", "not"})
