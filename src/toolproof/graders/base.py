"""What graders read and what they return. Graders are pure functions of this data."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from toolproof.spec.models import Expectations
from toolproof.transcript import Transcript
from toolproof.world import Change


class Verdict(BaseModel):
    """One grader's judgement of one expectation group, with its reason."""

    grader: str
    passed: bool
    reason: str


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


Grader = Callable[[Expectations, Evidence], list[Verdict]]


def matches(arguments: dict[str, Any] | None, subset: dict[str, Any]) -> bool:
    """Every argument of the pattern is present with an equal value."""
    if arguments is None:
        return False
    return all(key in arguments and arguments[key] == value for key, value in subset.items())


def describe_call(tool: str, args: dict[str, Any]) -> str:
    inner = ", ".join(f"{k}={v!r}" for k, v in args.items())
    return f"{tool}({inner})"
