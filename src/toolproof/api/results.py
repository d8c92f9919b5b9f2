"""What the library's calls return: typed, with the numbers a test asserts on one attribute
away, and a `repr` that reads as a short report (a notebook shows it, a failing assertion
prints it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from toolproof.errors import UsageError
from toolproof.spec.metrics import PASS_AT, PASS_HAT, RELIABILITY_SCORE

if TYPE_CHECKING:
    from toolproof.ci.findings import GateCheck
    from toolproof.ci.gate import GateResult
    from toolproof.metrics.sections import TaskRow
    from toolproof.metrics.summary import ModelSummary, RunSummary
    from toolproof.records.trial import TrialResult
    from toolproof.runner.validate import ConditionCheck, TaskCheck, Validation
    from toolproof.store.journal import Store

SHOWN_TASKS = 20
"""The most failing tasks a result's table lists (the rest are counted)."""
REASON_WIDTH = 100
"""The most characters of a failure reason a result's table shows."""


class Measure(float):
    """A metric's value that remembers the run it was measured on: it compares as the
    number it is, and a failing `assert result.pass_k(4) >= 0.9` can show the run's
    failing tasks (the pytest plugin does)."""

    name: str
    result: RunResult

    def __new__(cls, value: float, name: str, result: RunResult) -> Measure:
        made = super().__new__(cls, value)
        made.name = name
        made.result = result
        return made


@dataclass(eq=False)
class RunResult:
    """A finished (or stopped) run: its summary as `toolproof run --json` writes it, its
    tasks' rows, and its trials read back from the store when first asked for."""

    run_id: str
    summary: RunSummary
    stopped: bool
    """The run stopped early (its --max-cost was reached): resume it to finish."""
    ran: int
    """Trials this call ran (a resumed run's earlier trials not counted)."""
    store: Store = field(repr=False)
    include_ungradable: bool = False

    @property
    def tasks(self) -> list[TaskRow]:
        """Each task's row (trials, passes, metrics, failure reasons), every model's in
        turn where the run has several."""
        return [row for model in self.summary.models for row in model.tasks]

    @property
    def failing(self) -> list[TaskRow]:
        """The tasks with at least one trial that did not pass."""
        return [row for row in self.tasks if row.passed < row.trials]

    @cached_property
    def trials(self) -> list[TrialResult]:
        """Every stored trial of the run, transcripts included, in trial order."""
        return [result for _, result in self.store.results(self.run_id)]

    def metric(self, name: str) -> Measure:
        """A metric by its name (`pass^4`, `recovery_rate`); with several models, the
        lowest model's (what every model reaches). A metric the run did not measure is a
        usage error."""
        values = [m.metrics.get(name) for m in self._models(name)]
        measured = [float(v) for v in values if v is not None]
        if not measured:
            raise UsageError(f"run {self.run_id} did not measure {name}")
        return Measure(min(measured), name, self)

    def pass_k(self, k: int) -> Measure:
        """pass^k: the chance that k fresh trials of a task all pass, averaged over tasks
        (needs at least k trials per task)."""
        return self.metric(PASS_HAT.at(k=k))

    def pass_at(self, k: int) -> Measure:
        """pass@k: the chance that at least one of k trials of a task passes."""
        return self.metric(PASS_AT.at(k=k))

    @property
    def score(self) -> Measure | None:
        """The Reliability Score; None when none of its parts was measured."""
        try:
            return self.metric(RELIABILITY_SCORE.name)
        except UsageError:
            return None

    def _models(self, name: str) -> list[ModelSummary]:
        """The models' summaries, computed again at the k a metric's name asks for when the
        run's summary lacks it (`pass^4` of a run reported at k=1,2)."""
        models = self.summary.models
        if all(name in m.metrics for m in models):
            return models
        from toolproof.spec.metrics import CATALOGUE
        from toolproof.summaries import stored_summary

        k = CATALOGUE.read(name).k
        if k is None:
            return models
        again = stored_summary(
            self.store,
            self.run_id,
            ks=[k],
            infra=self.summary.infra_errors,
            include_ungradable=self.include_ungradable,
        )
        return again.models

    def table(self, tasks: int = SHOWN_TASKS, width: int = REASON_WIDTH) -> str:
        """The run in a few lines: its counts, then the first `tasks` failing tasks, each
        with its passes and its first failure (cut at `width` characters)."""
        counts = self.summary.counts
        lines = [
            f"run {self.run_id} of suite '{self.summary.suite.name}' "
            f"{self.summary.suite.version}: {counts.passed} of {counts.total} trials passed"
            + (f", {counts.infra_error} infra errors" if counts.infra_error else "")
            + (" (stopped early)" if self.stopped else "")
        ]
        failing = self.failing
        if not failing:
            return "\n".join([*lines, "every task passed every trial"])
        shown = failing[:tasks]
        pad = max(len(row.id) for row in shown)
        lines.append(f"failing tasks ({len(failing)}):")
        for row in shown:
            why = row.failures[0] if row.failures else "infra error"
            why = why if len(why) <= width else why[: width - 3] + "..."
            lines.append(f"  {row.id:<{pad}}  {row.passed}/{row.trials} passed  {why}")
        if len(failing) > len(shown):
            lines.append(f"  ... and {len(failing) - len(shown)} more")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<RunResult {self.run_id}>\n{self.table()}"


@dataclass(eq=False)
class ValidationResult:
    """A suite proved sound, or not: each task's check and each condition's."""

    suite: str
    version: str
    validation: Validation = field(repr=False)
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Every task is sound and every fault profile and drift variant survivable."""
        return self.validation.ok

    @property
    def checks(self) -> list[TaskCheck]:
        return self.validation.checks

    @property
    def conditions(self) -> list[ConditionCheck]:
        return self.validation.conditions

    @property
    def problems(self) -> list[str]:
        """Every problem found, each with the task or condition it is of."""
        found = [f"task '{c.task.id}': {p}" for c in self.validation.unsound for p in c.problems]
        return found + [
            f"{c.variant}: {c.problems[0]}" for c in self.validation.unsurvivable if c.problems
        ]

    def __repr__(self) -> str:
        verdict = "sound" if self.ok else "not sound"
        head = f"<ValidationResult {self.suite} {self.version}: {verdict}, {len(self.checks)} tasks"
        return "\n  ".join([head + ">", *self.problems])


@dataclass(eq=False)
class RegradeResult:
    """A run's stored transcripts graded again against the suite's expectations."""

    run_id: str
    changed: int
    """Trials whose outcome changed."""
    summary: RunSummary = field(repr=False)


@dataclass(eq=False)
class GateVerdict:
    """Whether a run may ship: every check the gate held it to, and the warnings."""

    run_id: str
    result: GateResult = field(repr=False)

    @property
    def passed(self) -> bool:
        return self.result.passed

    @property
    def checks(self) -> list[GateCheck]:
        return self.result.checks

    @property
    def failed(self) -> list[GateCheck]:
        return self.result.failed

    @property
    def warnings(self) -> list[str]:
        return self.result.warnings

    @property
    def summary(self) -> RunSummary:
        return self.result.summary

    def __repr__(self) -> str:
        from toolproof.report.gate import detail

        verdict = "passed" if self.passed else f"failed {len(self.failed)} of {len(self.checks)}"
        lines = [f"<GateVerdict {self.run_id}: {verdict}>"]
        lines += [f"  {c.title}: {detail(c)}" for c in self.failed]
        return "\n".join(lines)
