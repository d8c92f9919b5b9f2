"""`suite.yaml` as a pydantic model: the suite's tools, backends, world, tasks, run defaults,
models, conditions, gate and judge.

`toolproof schema` prints the JSON Schema of this model for editor completion.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, StrictInt, ValidationInfo, field_validator

from toolproof.spec.backends import Backend, Hooks, ServiceSpec
from toolproof.spec.base import Strict
from toolproof.spec.conditions import DriftTransform, FaultsSpec, LoadSpec, ScoreSpec
from toolproof.spec.gate import GateSpec
from toolproof.spec.limits import (
    MAX_CONCURRENCY,
    MAX_SECONDS,
    MAX_SEED,
    MAX_STEPS,
    MAX_TRIALS,
)
from toolproof.spec.model_settings import ModelEntry, Price
from toolproof.spec.policy import PolicyRuleEntry, PolicyRuleSpec
from toolproof.spec.task import TaskSpec
from toolproof.spec.user import PERSONA_NAME, PersonaSpec, known_personas


class ToolEntry(Strict):
    """One tool an agent sees (an entry of `tools:`): where it comes from, how critical and how
    common it is."""

    backend: str | None = Field(None, description="Backend name; optional with one backend.")
    tier: Literal[1, 2, 3] = Field(
        description="1: the tools that carry most calls; 2: regular; 3: rare but critical."
    )
    weight: float | None = Field(None, ge=0, description="Share of production calls.")
    write: bool | None = Field(None, description="Overrides the tool's own read/write kind.")
    description: str | None = Field(None, description="Overrides what the model is told.")
    parameters: dict[str, Any] | None = Field(
        None, description="JSON Schema of the arguments; overrides the derived one."
    )


class UserToolEntry(Strict):
    """One tool the simulated user has (an entry of `user: tools:`): the user calls it on
    their own part of the world (a device, an account); the agent never sees it."""

    backend: str | None = Field(None, description="Backend name; optional with one backend.")
    write: bool | None = Field(None, description="Overrides the tool's own read/write kind.")
    description: str | None = Field(None, description="Overrides what the user is told.")
    parameters: dict[str, Any] | None = Field(
        None, description="JSON Schema of the arguments; overrides the derived one."
    )


class UserSide(Strict):
    """What the simulated user can do besides speak (dual control)."""

    tools: dict[str, UserToolEntry] = Field(
        default_factory=dict,
        description="Tools the user calls on their own part of the world, through the gateway "
        "like the agent's (faults apply); gold actions with `by: user` are theirs.",
    )


class WorldSpec(Strict):
    """The suite's initial state: data files merged in order, then an optional factory."""

    data: list[str] = Field(
        default_factory=list,
        description="JSON/YAML files or folders; each file becomes a top-level key (its stem).",
    )
    factory: str | None = Field(
        None, description="'file.py:function' returning a dict merged over the data."
    )


DEFAULT_AGENT_TIMEOUT_S = 300.0
"""Seconds a Python agent's turn may take when neither the suite nor the command line says."""


class Defaults(Strict):
    """Run settings a command line may override."""

    trials: int = Field(5, ge=1, le=MAX_TRIALS)
    k: list[StrictInt] = Field(default_factory=lambda: [1, 5])
    seed: int = Field(0, ge=0, le=MAX_SEED)
    max_steps: int = Field(30, ge=1, le=MAX_STEPS, description="Model calls allowed per trial.")
    concurrency: int = Field(8, ge=1, le=MAX_CONCURRENCY)
    agent_timeout_s: float = Field(
        DEFAULT_AGENT_TIMEOUT_S,
        gt=0,
        le=MAX_SECONDS,
        description="Seconds one turn of a Python agent may take (a user message answered).",
    )

    @field_validator("k")
    @classmethod
    def _positive_k(cls, value: list[int]) -> list[int]:
        if not value or any(not 1 <= k <= MAX_TRIALS for k in value):
            raise ValueError(f"k values must be whole numbers from 1 to {MAX_TRIALS:,}")
        return sorted(set(value))


class SuiteFile(Strict):
    """`suite.yaml`."""

    name: str
    version: str = "1"
    description: str = ""
    notes: list[str] = Field(
        default_factory=list,
        description="What a reader of any run's numbers must know about the suite (what its "
        "tasks leave ungraded, say): shown under every run's summary.",
    )
    policy: str | None = Field(None, description="Markdown file: the agent's system prompt.")
    allow_outside: list[str] = Field(
        default_factory=list,
        description="Folders outside the suite folder that its files (policy, data, tasks, "
        "Python modules, OpenAPI documents) may come from; relative to the suite folder.",
    )
    policy_rules: list[PolicyRuleEntry] = Field(
        default_factory=list,
        description="Rules checked on every task's transcript: a rule's name, or its name "
        "under `rule:` with its settings.",
    )
    world: WorldSpec = Field(default_factory=WorldSpec)
    services: dict[str, ServiceSpec] = Field(
        default_factory=dict, description="Local services started before the run."
    )
    backends: dict[str, Backend]
    hooks: Hooks = Field(default_factory=Hooks)
    tools: dict[str, ToolEntry] = Field(
        description="The tools an agent sees, each with its tier and weight (once `spectra:`, "
        "which is still read)."
    )
    tasks: list[str | TaskSpec] = Field(
        description="Task files (globs allowed) or inline tasks, in order."
    )
    user: UserSide = Field(
        default_factory=UserSide,
        description="The simulated user's own tools (dual control: the user acts on their "
        "device or account when the agent asks).",
    )
    defaults: Defaults = Field(default_factory=Defaults)
    models: dict[str, ModelEntry] = Field(
        default_factory=dict, description="Per-model settings, keyed by provider/model."
    )
    prices: dict[str, Price] = Field(
        default_factory=dict, description="USD per million tokens; overrides bundled prices."
    )
    faults: FaultsSpec = Field(default_factory=FaultsSpec)
    drift: dict[str, list[DriftTransform]] = Field(
        default_factory=dict, description="Schema drift variants by name."
    )
    load: LoadSpec | None = None
    score: ScoreSpec = Field(default_factory=ScoreSpec)
    gate: GateSpec | None = Field(
        None, description="What a run must show before its model may ship (toolproof gate)."
    )
    judge: str | None = Field(
        None, description="provider/model grading rubric criteria (run --judge-model wins)."
    )

    @field_validator("policy_rules")
    @classmethod
    def _rules_once(cls, rules: list[PolicyRuleSpec]) -> list[PolicyRuleSpec]:
        names = [rule.rule for rule in rules]
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise ValueError(f"policy rule '{twice[0]}' is given twice; give it once")
        return rules

    def rule_names(self) -> list[str]:
        """The names of the suite's policy rules, in order."""
        return [rule.rule for rule in self.policy_rules]

    personas: dict[str, PersonaSpec] = Field(
        default_factory=dict, description="The suite's own personas (run --persona NAME)."
    )

    @field_validator("personas")
    @classmethod
    def _persona_names(
        cls, value: dict[str, PersonaSpec], info: ValidationInfo
    ) -> dict[str, PersonaSpec]:
        names, _ = known_personas(info)
        for name in value:
            if name in names:
                raise ValueError(f"persona {name!r} is a built-in; give yours another name")
            if not PERSONA_NAME.match(name):
                raise ValueError(
                    f"persona name {name!r}: lower-case letters, digits, '-' and '_', "
                    "starting with a letter"
                )
        return value
