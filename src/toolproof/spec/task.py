"""A task: one user story as a multi-step scenario (`TaskSpec`, a task file's mapping or an
inline entry of `tasks:`), and a task as read (`Task`: its spec, where it was written, its
content hash)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from pydantic import Field, field_validator

from toolproof.spec.base import Strict
from toolproof.spec.expectations import Expectations
from toolproof.spec.user import UserSpec
from toolproof.spec.yamlload import LineDict, line_of

TASK_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]*$")


class TaskSpec(Strict):
    """One user story as a multi-step scenario."""

    id: str
    story: str = ""
    version: str = "1"
    tags: list[str] = Field(default_factory=list)
    initial_state: dict[str, Any] = Field(
        default_factory=dict, description="JSON merge patch applied to the suite's world."
    )
    user: UserSpec
    expect: Expectations
    ungradable: str | None = Field(
        None,
        description="Why the task cannot tell a good agent from a bad one, known when it was "
        "written (a benchmark's task its own grader passes whatever the agent does): "
        "`validate` reports the task unsound for this reason.",
    )

    notes: list[str] = Field(
        default_factory=list,
        description="What a reader of the task must know that no check says (an imported "
        "task's check its source made in words, which toolproof grades another way).",
    )

    @field_validator("id")
    @classmethod
    def _id_shape(cls, value: str) -> str:
        if not TASK_ID.match(value):
            raise ValueError("task ids are letters, digits and _ . : - (no spaces)")
        return value


@dataclass(frozen=True)
class Task:
    """A task as read: its spec, where it was defined, and its content hash."""

    spec: TaskSpec
    source: str
    line: int | None
    lines: LineDict = field(repr=False, compare=False)
    content_hash: str = ""

    @property
    def id(self) -> str:
        return self.spec.id

    def at(self, *loc: Any) -> int | None:
        """The line of a place inside the task (`at("expect", "calls", 0)`), else its own."""
        return line_of(self.lines, list(loc)) or self.line
