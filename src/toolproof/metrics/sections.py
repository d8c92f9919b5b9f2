"""The typed parts of a run's summary, as `--json` writes them.

Every part is a pydantic model whose fields are the keys it has always been written with;
a part a run did not measure (no drift variant, no checkpoint) is left out of the JSON, as
it always was. A model's metric values, their intervals and the breakdowns by tier and tag
are keyed by metric names, and reading one by a name the catalogue does not define is an
error (`UnknownMetric`), never a metric that was not measured.
"""

from __future__ import annotations

from collections.abc import ItemsView, KeysView
from typing import Generic, Self, TypeVar

from pydantic import BaseModel, ConfigDict, Field, RootModel, model_validator

from toolproof.spec.metrics import CATALOGUE, PASS_AT, PASS_HAT

V = TypeVar("V")

Interval = list[float] | None
"""A 95% interval [low, high], or None where there is none."""

Value = int | float | None
"""A metric's value; None: not measured."""


class Section(BaseModel):
    """A part of the summary: known fields only, written as they are named."""

    model_config = ConfigDict(
        extra="forbid", serialize_by_alias=True, validate_by_name=True, validate_by_alias=True
    )


class ByMetric(RootModel[dict[str, V]], Generic[V]):
    """Values keyed by metric names, every name one the catalogue defines."""

    @model_validator(mode="after")
    def _named(self) -> Self:
        for name in self.root:
            CATALOGUE.read(name)
        return self

    def get(self, name: str) -> V | None:
        """The value of `name`; None when this run has none. A name the catalogue does not
        define raises UnknownMetric."""
        CATALOGUE.read(name)
        return self.root.get(name)

    def __getitem__(self, name: str) -> V:
        CATALOGUE.read(name)
        return self.root[name]

    def __contains__(self, name: str) -> bool:
        CATALOGUE.read(name)
        return name in self.root

    def __len__(self) -> int:
        return len(self.root)

    def names(self) -> KeysView[str]:
        return self.root.keys()

    def items(self) -> ItemsView[str, V]:
        return self.root.items()


MetricValues = ByMetric[Value]
MetricIntervals = ByMetric[Interval]


class Counts(Section):
    """Trials by outcome."""

    passed: int
    failed: int
    infra_error: int
    total: int


class Breakdown(Section):
    """A tier's or a tag's tasks, their weight (tiers only), and their metrics' means."""

    model_config = ConfigDict(extra="allow")
    __pydantic_extra__: dict[str, float] = Field(init=False)

    tasks: float
    weight: float | None = None

    @model_validator(mode="after")
    def _named(self) -> Self:
        for name in self.__pydantic_extra__:
            CATALOGUE.read(name)
        return self

    def value(self, name: str) -> float | None:
        """A metric's mean over the tasks (UnknownMetric for a name that is none)."""
        CATALOGUE.read(name)
        return self.__pydantic_extra__.get(name)


class TaskRow(Section):
    """One task of a model's primary variant."""

    id: str
    trials: int
    passed: int
    infra_error: int
    metrics: MetricValues
    failures: list[str]


class FaultInterval(Section):
    rate: Interval


class FaultRecovery(Section):
    """Failed tool calls of one fault kind and how many were recovered."""

    failed: int
    recovered: int
    rate: float
    ci: FaultInterval | None = None


class RecoveryIntervals(Section):
    recovery_rate: Interval
    loop_rate: Interval
    corrective_action: Interval


class Recovery(Section):
    """Recovery over a set of trials: the rates and what they divide."""

    recovery_rate: float | None
    loop_rate: float | None
    corrective_action: float | None
    failed_calls: int
    recovered_calls: int
    trials: int
    faulted_trials: int
    infra_error_excluded: int
    by_fault: dict[str, FaultRecovery]
    ci: RecoveryIntervals | None = None


class RecoveryBrief(Section):
    """Recovery of one task or tier."""

    recovery_rate: float | None
    loop_rate: float | None
    corrective_action: float | None
    failed_calls: int


class DriftVariant(Section):
    pass_rate: float
    ratio_to_clean: float | None


class DriftIntervals(Section):
    drift_robustness: Interval
    ratio_to_clean: Interval


class Drift(Section):
    """pass@1 under schema drift: the mean over drift variants, and against clean."""

    drift_robustness: float | None
    ratio_to_clean: float | None
    clean_pass_rate: float | None
    variants: dict[str, DriftVariant]
    ci: DriftIntervals | None = None


class LoadIntervals(Section):
    completion_under_load: Interval
    ratio_to_baseline: Interval


class Load(Section):
    """pass@1 at the peak load level, and against the baseline level."""

    completion_under_load: float | None
    ratio_to_baseline: float | None
    peak: int
    baseline: int
    baseline_pass_rate: float | None
    levels: dict[int, float | None]
    ci: LoadIntervals | None = None


class DriftRow(Section):
    """Drift robustness of one task or (with its tasks and weight) one tier."""

    tasks: float | None = None
    weight: float | None = None
    drift_robustness: float | None
    ratio_to_clean: float | None
    clean_pass_rate: float | None


class LoadRow(Section):
    """Completion under load of one task or (with its tasks and weight) one tier."""

    tasks: float | None = None
    weight: float | None = None
    completion_under_load: float | None
    ratio_to_baseline: float | None
    baseline_pass_rate: float | None


class ConditionStats(Section):
    """A model's production conditions over all of its trials, per task and per tier."""

    recovery: Recovery
    drift: Drift | None = None
    load: Load | None = None
    recovery_by_task: dict[str, RecoveryBrief]
    recovery_by_tier: dict[str, RecoveryBrief]
    drift_by_task: dict[str, DriftRow] | None = None
    drift_by_tier: dict[str, DriftRow] | None = None
    load_by_task: dict[str, LoadRow] | None = None
    load_by_tier: dict[str, LoadRow] | None = None


class LoadLevel(Section):
    """The trials of one load level: pass rate, throughput, latency and tool errors."""

    trials: int
    passed: int
    infra_error: int
    pass_rate: float | None
    throughput_per_min: float | None
    trial_latency_p50_s: float | None
    trial_latency_p95_s: float | None
    tool_calls: int
    tool_errors: int
    tool_error_rate: float | None


class VariantSummary(Section):
    """One variant of a model: counts, pass rate, blame, and its condition's statistics."""

    counts: Counts
    pass_rate: float | None = Field(alias=PASS_AT.at(k=1))
    blame: dict[str, int]
    recovery: Recovery | None = None
    load: LoadLevel | None = None


class ScoreInterval(Section):
    reliability_score: Interval


class Reliability(Section):
    """The Reliability Score, its parts, the weights given and used, and what is missing."""

    k: int
    reliability_score: float | None
    components: dict[str, float | None]
    weights: dict[str, float]
    weights_used: dict[str, float]
    missing: list[str]
    notes: list[str]
    ci: ScoreInterval

    def parts_note(self) -> str:
        """' (2 of 4 parts)' after a score built without some of its parts, so the number
        is never read as the whole score; '' when every part was measured."""
        if self.reliability_score is None or not self.missing:
            return ""
        total = len(self.components)
        return f" ({total - len(self.missing)} of {total} parts)"


class PolicyInterval(Section):
    policy_adherence: Interval


class Policy(Section):
    """The trials whose policy was checked, those that broke a rule, and adherence."""

    trials: int
    violating_trials: int
    violations: dict[str, int]
    policy_adherence: float
    ci: PolicyInterval


class PassRateIntervals(Section):
    pass_rate: Interval = Field(alias=PASS_AT.at(k=1))
    pass_hat: dict[str, Interval] = Field(alias=PASS_HAT.generic)


class PassRates(Section):
    """pass@1 and pass^k (by k) over tasks, with intervals."""

    pass_rate: float | None = Field(alias=PASS_AT.at(k=1))
    pass_hat: dict[str, float] = Field(alias=PASS_HAT.generic)
    n_tasks: int
    ci: PassRateIntervals


class ConfusionRecovery(Section):
    """Turns to recover from a confusing message: the median over tasks, its interval, the
    share recovered and the trials that met the message."""

    recovery_turns: float | None
    ci: Interval
    recovered: float | None
    confused_trials: int


class PersonaRates(PassRates):
    """One persona: its pass rates and recovery from confusion."""

    recovery: ConfusionRecovery


class CheckpointRates(PassRates):
    """One turn checkpoint: its pass rates, the user turns measured, the tasks left out."""

    user_turns: float | None
    too_long: list[str]


class Degradation(Section):
    """pass@1 lost per `per_turns` more user turns, or why it was not measured."""

    value: float | None
    ci: Interval
    per_turns: int
    n_tasks: int
    reason: str | None = None


class Judge(Section):
    """The judge model of a rubric, its own cost, and the criteria it left undecided."""

    model: str
    cost_usd: float | None
    undecided_criteria: int
    failed_controls: dict[str, list[str]]


class Ungradable(Section):
    """The run's tasks nothing of which can fail (each with why, from its `ungradable:`),
    their trials by outcome, and whether the summary counts them (`--include-ungradable`)
    or, by default, leaves them out of every count, rate, breakdown and the score."""

    tasks: dict[str, str]
    counts: Counts
    included: bool
