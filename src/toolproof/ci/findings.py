"""What the gate found, check by check: typed values, which report/ renders as the
check's detail in the terminal, JUnit, Markdown and JSON.

A `GateCheck` is one thing the gate holds a model (or the whole run) to, whether it held,
and a finding of one of the types below: what was measured, the limit, and what the test
said. Nothing here is text for people; `toolproof.report.gate.detail` writes that.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from toolproof.metrics.comparison import MetricDiff, TaskDiff
from toolproof.metrics.sections import Reliability
from toolproof.store.verify import Verification


@dataclass(frozen=True)
class RunState:
    """`run finished`: the run's status, and how many trials it holds."""

    status: str
    finished_at: str | None
    stopped: str | None
    """Why the run stopped early (its --max-cost), if it did."""
    trials: int


@dataclass(frozen=True)
class NoTrials:
    """`run has trials`, failed: the run recorded no trial, or only trials of tasks left out
    as ungradable, so nothing can be gated."""

    left_out: int = 0
    """Trials recorded but left out (their tasks cannot be graded)."""


@dataclass(frozen=True)
class Threshold:
    """A metric held to a floor (`min`, `--fail-under`) or a ceiling (`max`)."""

    metric: str
    value: float | None
    """None: not computed, for `too_few_trials` or because the run did not measure it."""
    limit: float
    at_least: bool
    too_few_trials: bool = False
    reliability: Reliability | None = None
    """The Reliability Score's parts, when the metric is the score: which were measured."""


@dataclass(frozen=True)
class Unmatched:
    """A regression check with nothing to compare against the baseline run: no model of
    the run pairs with one of it (`model`), a model pair has no variant in common
    (`variant`), or a variant has no matched trials (`trials`)."""

    baseline: str
    missing: Literal["model", "variant", "trials"]


@dataclass(frozen=True)
class Drop:
    """pass@1 or pass^k against the baseline: the paired difference and its test over the
    matched tasks, whether it dropped by more than allowed, and how many tasks passed fewer
    matched trials."""

    metric: MetricDiff
    tasks: int
    alpha: float
    dropped: bool
    regressed_tasks: int


@dataclass(frozen=True)
class RegressedTasks:
    """The tasks the per-task test flagged (Fisher's exact test, Holm over the variant's
    tasks) against the number allowed; `needed`: the trials per task any task would need
    to be flagged at all, when the run has fewer (`fewest`)."""

    flagged: tuple[TaskDiff, ...]
    tasks: int
    allowed: int
    alpha: float
    needed: int | None = None
    fewest: int = 0


@dataclass(frozen=True)
class NoBaseline:
    """A regression check skipped: no baseline run was given."""


@dataclass(frozen=True)
class Integrity:
    """A run's stored results checked against its recorded manifest."""

    verification: Verification


Finding = (
    RunState | NoTrials | Threshold | Unmatched | Drop | RegressedTasks | NoBaseline | Integrity
)
"""What a check found."""


@dataclass(frozen=True)
class GateCheck:
    """One gate check for one model (or the whole run when `model` is empty)."""

    name: str
    model: str
    passed: bool
    kind: str
    """finished, min, max, regression, regressed_tasks or integrity."""
    found: Finding
    value: float | None = None
    limit: float | None = None
    skipped: bool = False

    @property
    def title(self) -> str:
        return f"{self.model}: {self.name}" if self.model else self.name

    @property
    def failed(self) -> bool:
        return not self.passed and not self.skipped
