"""What a task expects at the end of a trial (`expect:`): gold actions, state checks, calls
required and forbidden, facts to say, refusals, real-system checks and rubric criteria."""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Annotated, Any, Literal

from pydantic import (
    Discriminator,
    Field,
    Tag,
    field_validator,
    model_validator,
)

from toolproof.spec.base import Strict
from toolproof.spec.limits import MAX_SECONDS, MAX_STEPS, MAX_TOOL_CALLS


class CallSpec(Strict):
    """A tool call pattern: the tool and a subset of its arguments."""

    tool: str
    args: dict[str, Any] = Field(default_factory=dict)


class Refusal(Strict):
    """What a task whose answer is "no" requires beyond its other expectations."""

    reads: list[CallSpec] | None = Field(
        None,
        description="The reads that establish why (ownership, status, a window), each "
        "required to succeed before the agent declines. Default: for each write the task "
        "forbids, the gold actions that read what the suite's read_before_write rule requires "
        "before that write; without such a rule, every gold action.",
    )
    reasons: list[str] | None = Field(
        None,
        description="The decisive facts: the declining message (or a later one) must state "
        "one of them, not denied or hedged, in place of the task's must_say facts. Default: "
        "the task's must_say facts; for a task with none, a value the decisive reads showed "
        "or a cause in words in the declining message.",
    )


Side = Literal["agent", "user"]
"""Who makes a call: the agent, or (with the suite's `user: tools:`) the user on their own
part of the world."""


class Action(Strict):
    """A gold action: a complete tool call replayed to build the expected final state."""

    tool: str
    args: dict[str, Any] = Field(default_factory=dict)
    by: Side = Field(
        "agent",
        description="Who makes it: the agent, or the user with one of the suite's user tools "
        "(dual control: the agent asks, the user acts on their device or account).",
    )


class StateCheck(Strict):
    """An assertion on the final world at a path like `orders/W1001/status`."""

    path: str
    equals: Any = None
    not_equals: Any = None
    one_of: list[Any] | None = None
    contains: Any = None
    exists: bool | None = None

    @model_validator(mode="before")
    @classmethod
    def _one_check(cls, data: Any) -> Any:
        if isinstance(data, dict):
            given = [
                k for k in ("equals", "not_equals", "one_of", "contains", "exists") if k in data
            ]
            if len(given) != 1:
                raise ValueError("give exactly one of equals, not_equals, one_of, contains, exists")
        return data

    @property
    def check(self) -> str:
        for name in ("equals", "not_equals", "one_of", "contains", "exists"):
            if name in self.model_fields_set:
                return name
        raise AssertionError("validated to have one check")


class CheckSpec(Strict):
    """A final-state check against a real system, run after the conversation."""

    name: str | None = Field(None, description="How the check is reported.")
    python: str | None = Field(None, description="'file.py:function'.")
    args: dict[str, Any] = Field(default_factory=dict, description="Keyword arguments.")
    command: list[str] | None = Field(None, min_length=1)
    cwd: str | None = Field(None, description="Working folder of a command (default trial_dir).")
    expect_exit: int = Field(0, description="The exit status a command must end with.")
    stdout: str | None = Field(None, description="A command's output must equal this (trimmed).")
    stdout_contains: str | None = None
    timeout_s: float = Field(60.0, gt=0, le=MAX_SECONDS)

    @model_validator(mode="after")
    def _one_kind(self) -> CheckSpec:
        if (self.python is None) == (self.command is None):
            raise ValueError("give exactly one of 'python' or 'command'")
        command_only = self.model_fields_set & {"cwd", "expect_exit", "stdout", "stdout_contains"}
        if self.python is not None and command_only:
            raise ValueError(f"{', '.join(sorted(command_only))}: only for command checks")
        if self.command is not None and self.args:
            raise ValueError("args are for python checks")
        return self

    @property
    def label(self) -> str:
        if self.name:
            return self.name
        return self.python or " ".join(self.command or [])


FactSource = Literal["tools", "user", "none"]

_NUMBER = re.compile(r"[-+]?\$?\d[\d,]*(\.\d+)?")


def as_number(text: str) -> Decimal | None:
    """A value written as a number ("54.04", "$1,093.34", "12"), or None."""
    written = text.strip()
    if not _NUMBER.fullmatch(written):
        return None
    try:
        return Decimal(written.replace("$", "").replace(",", ""))
    except InvalidOperation:  # pragma: no cover - the pattern admits only numbers
        return None


CENT = Decimal("0.005")
"""How near two amounts must be to be the same value: to the cent."""


class Computed(Strict):
    """How a fact is worked out from values tool results show: its operands must have been
    shown before it counts (no tool shows the fact itself)."""

    op: Literal["sum", "difference", "product"] = Field(
        description="sum: all the operands added; difference: the first less the second; "
        "product: all the operands multiplied."
    )
    of: list[str] = Field(
        min_length=2,
        description="The operands, as tool results show them (54.04, 12); compared as numbers.",
    )

    @field_validator("of", mode="before")
    @classmethod
    def _as_text(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [
                str(v) if isinstance(v, int | float) and not isinstance(v, bool) else v
                for v in value
            ]
        return value

    @model_validator(mode="after")
    def _operands(self) -> Computed:
        bad = [o for o in self.of if as_number(o) is None]
        if bad:
            raise ValueError(f"computed operand {bad[0]!r} is not a number")
        if self.op == "difference" and len(self.of) != 2:
            raise ValueError("a difference has two operands: the first less the second")
        return self

    def value(self) -> Decimal:
        """The operation over the operands."""
        numbers = [n for n in map(as_number, self.of) if n is not None]
        if self.op == "difference":
            return numbers[0] - numbers[1]
        out = numbers[0]
        for n in numbers[1:]:
            out = out * n if self.op == "product" else out + n
        return out


class Fact(Strict):
    """A fact the user must hear, and where the agent must have learnt it first."""

    fact: str | list[str] = Field(description="What to say; a list gives alternatives.")
    source: FactSource = Field(
        "tools",
        description="tools: it counts only once a tool result has shown it (or, computed, "
        "its operands); user: it is the user's own words, repeated on purpose; none: it needs "
        "no source (policy).",
    )

    found_as: list[str] = Field(
        default_factory=list,
        description="Forms a tool result may show the fact in besides those it is said in: "
        "a system's status code (SHPD) or date format (20261120).",
    )
    field: list[str] | None = Field(
        None,
        description="The fields of tool results the fact answers (status, delivered_on): a "
        "message that states the fact and also another value of them does not commit to it. "
        "Default: the fields tool results showed the fact under, and the parameters whose "
        "allowed values include it.",
        min_length=1,
    )
    computed: Computed | None = Field(
        None,
        description="How the fact is worked out from values tool results show ({op: sum|"
        "difference|product, of: [operands]}): it counts once tool results have shown every "
        "operand (or the fact itself). Only with source: tools.",
    )

    @property
    def options(self) -> list[str]:
        """The alternatives, any one of which states the fact."""
        return list(self.fact) if isinstance(self.fact, list) else [self.fact]

    @property
    def sources(self) -> list[str]:
        """The forms a tool result may show the fact in."""
        return [*self.options, *self.found_as]

    @field_validator("fact")
    @classmethod
    def _not_empty(cls, value: str | list[str]) -> str | list[str]:
        if isinstance(value, list) and not value:
            raise ValueError("give at least one way to say the fact")
        return value

    @field_validator("field", mode="before")
    @classmethod
    def _fields(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @model_validator(mode="after")
    def _found_in_tools(self) -> Fact:
        if self.found_as and self.source != "tools":
            raise ValueError("found_as is for facts a tool result shows (source: tools)")
        if self.computed is None:
            return self
        if self.source != "tools":
            raise ValueError("computed is for facts worked out from tool results (source: tools)")
        want = self.computed.value()
        values = [n for n in map(as_number, self.options) if n is not None]
        if not any(abs(n - want) < CENT for n in values):
            said = ", ".join(repr(o) for o in self.options)
            raise ValueError(
                f"computed: the {self.computed.op} of {', '.join(self.computed.of)} is "
                f"{format(want.normalize(), 'f')}, but the fact says {said}"
            )
        return self


def _fact_form(value: Any) -> str:
    if isinstance(value, dict | Fact):
        return "Fact"
    return "list" if isinstance(value, list) else "str"


FactEntry = Annotated[
    Annotated[str, Tag("str")] | Annotated[list[str], Tag("list")] | Annotated[Fact, Tag("Fact")],
    Discriminator(_fact_form),
]
"""A must_say entry: a fact, its alternatives, or the full form (so a mapping's problems are
reported as the mapping's, not as "not a string")."""


class Controls(Strict):
    """Two agent replies whose verdict on a criterion is known: the judge must grade both
    right before its verdicts on the criterion count (docs/suite-format.md, Rubrics)."""

    passes: str = Field(description="A reply that plainly does what the criterion asks.")
    fails: str = Field(description="A reply that plainly does not.")

    @field_validator("passes", "fails")
    @classmethod
    def _said(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("give the agent's reply in words")
        return value

    @model_validator(mode="after")
    def _different(self) -> Controls:
        if self.passes.strip() == self.fails.strip():
            raise ValueError("'passes' and 'fails' are the same reply: give two different ones")
        return self


class Criterion(Strict):
    """One thing a good answer does, as the judge model reads it (docs/graders.md)."""

    does: str = Field(min_length=1, description="What a good answer does, in plain words.")
    weight: float = Field(1.0, gt=0, description="Its share of the rubric's score.")
    required: bool = Field(
        False, description="The rubric fails when this criterion fails, whatever its score."
    )
    controls: Controls | None = Field(
        None,
        description="The replies the judge must grade right first; by default derived from `does`.",
    )


CRITERION_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")
OUTCOME_LABEL = "outcome"
"""What human labels call a trial's own outcome: no rubric criterion may take the name."""


class Expectations(Strict):
    """What must hold at the end of a trial. Every given expectation must hold to pass."""

    actions: list[Action] | None = Field(
        None, description="Gold actions; the final world must hash equal to their replay."
    )
    state: list[StateCheck] = Field(default_factory=list)
    final_state: Literal["gold", "checks"] = Field(
        "gold",
        description="gold: the final world must hash equal to the gold actions' replay; "
        "checks: the gold actions show the way (the oracle makes them) and the final world is "
        "judged by the task's `state` and `check` expectations alone, as a benchmark that "
        "grades by assertions does (another path to the same outcome passes).",
    )
    calls: list[CallSpec] = Field(default_factory=list, description="Required calls.")
    ordered_calls: bool = Field(False, description="Required calls must happen in this order.")
    forbidden_calls: list[CallSpec] = Field(default_factory=list)
    must_say: list[FactEntry] = Field(
        default_factory=list,
        description="Facts to tell the user; a list gives alternatives. A fact counts once a "
        "tool result has shown it, unless it says otherwise ({fact: ..., source: user|none}).",
    )
    must_not_say: list[str] = Field(default_factory=list)
    reads: list[CallSpec] | None = Field(
        None,
        description="The calls that produce the answer, each required to succeed. By default, "
        "for a task whose gold actions write nothing, those actions with their required "
        "arguments.",
    )
    allow_writes: list[CallSpec] = Field(
        default_factory=list,
        description="Write calls the task allows besides its gold actions (tool and the "
        "arguments that matter): any other write attempt, succeeded or refused, fails it.",
    )
    refusal: bool | Refusal | None = Field(
        None,
        description="The task's answer is a refusal: the reads that establish the reason must "
        "succeed first, and a message must decline with a reason. Default: a task whose gold "
        "actions write nothing and that forbids a write call; false: never.",
    )
    max_tool_calls: int | None = Field(None, ge=0, le=MAX_TOOL_CALLS)
    max_turns: int | None = Field(None, ge=1, le=MAX_STEPS)
    check: list[CheckSpec] = Field(
        default_factory=list, description="Final-state checks against the real systems."
    )
    rubric: dict[str, str | Criterion] = Field(
        default_factory=dict,
        description="Criteria a judge model grades (name: what a good answer does, or "
        "{does, weight, required, controls}); needs run --judge-model or the suite's judge.",
    )
    rubric_pass: float = Field(
        1.0,
        gt=0,
        le=1,
        description="The weighted share of rubric criteria that must pass (default: all).",
    )

    @model_validator(mode="after")
    def _judged_by_checks(self) -> Expectations:
        if self.final_state == "checks" and not (self.state or self.check):
            raise ValueError(
                "final_state: checks judges the final world by the task's state and check "
                "expectations: give at least one"
            )
        return self

    @field_validator("rubric")
    @classmethod
    def _criterion_names(cls, value: dict[str, str | Criterion]) -> dict[str, str | Criterion]:
        for name, criterion in value.items():
            if not CRITERION_NAME.match(name) or name == OUTCOME_LABEL:
                raise ValueError(
                    f"criterion name {name!r}: use a letter then letters, digits, _ or - "
                    f"(and not {OUTCOME_LABEL!r}, which labels mean the trial's outcome)"
                )
            if isinstance(criterion, str) and not criterion.strip():
                raise ValueError(f"criterion {name!r}: say what a good answer does")
        return value

    def criteria(self) -> dict[str, Criterion]:
        """The rubric, every criterion in its full form."""
        return {
            name: c if isinstance(c, Criterion) else Criterion(does=c)
            for name, c in self.rubric.items()
        }

    def is_empty(self) -> bool:
        return (
            self.actions is None
            and not self.check
            and not self.state
            and not self.calls
            and not self.forbidden_calls
            and not self.must_say
            and not self.must_not_say
            and not self.reads
            and not self.rubric
            and not self.refusal
        )

    def facts(self) -> list[Fact]:
        """`must_say`, every entry in its full form."""
        return [f if isinstance(f, Fact) else Fact(fact=f) for f in self.must_say]
