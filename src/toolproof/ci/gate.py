"""The CI gate: decide from a stored run whether a model version may ship.

Checks come from the suite's `gate:` section and from flags (a flag wins for the same
metric); every model of the run is held to each of them:

- `min: {METRIC: VALUE}`: the metric is at least VALUE (e.g. reliability_score, pass^5);
  `toolproof run --fail-under METRIC=VALUE` is shorthand for this, on the run just made;
- `max: {METRIC: VALUE}`: the metric is at most VALUE (e.g. cost_per_task_usd, latency_p95_s);
- `max_cost_per_task`, `max_infra_error_share`: shorthands for two `max` entries;
- `max_regression`: against a baseline run, no drop of pass@1 or pass^k larger than this
  that the paired test finds significant (`toolproof.ci.compare`);
- `max_regressed_tasks`: against a baseline run, at most this many tasks (default 0) that
  the per-task test flags as regressed (Fisher's exact test, Holm over the tasks): a few
  broken tasks among many move the mean too little for the test over tasks;
- the run finished, and its stored results match its recorded manifest (when recorded).

Metric names follow one grammar (`toolproof.spec.gate`). A metric that was not measured
(null) fails a check on it: it cannot be shown to hold. Each check carries what it
found as typed values (`findings.py`); `toolproof.report.gate` puts them in words.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from toolproof.ci.compare import compare_runs
from toolproof.ci.findings import (
    Drop,
    GateCheck,
    Integrity,
    NoBaseline,
    NoTrials,
    RegressedTasks,
    RunState,
    Threshold,
    Unmatched,
)
from toolproof.errors import SuiteError, UsageError
from toolproof.metrics.breakdown import TaskMeta
from toolproof.metrics.comparison import Comparison, VariantComparison
from toolproof.metrics.power import trials_needed
from toolproof.metrics.sections import MetricValues
from toolproof.metrics.stats import exact
from toolproof.metrics.summary import ModelSummary, RunSummary, model_metrics, run_summary
from toolproof.perf import gc_paused
from toolproof.records.run import RunRecord
from toolproof.spec.gate import GateSpec, check_metric, k_of
from toolproof.spec.metrics import CATALOGUE, PASS_AT, PASS_HAT, RELIABILITY_SCORE
from toolproof.store.journal import Store
from toolproof.store.verify import Verification, read_verified, verify_run
from toolproof.summaries import task_metas

DEFAULT_MAX_REGRESSION = 0.03
DEFAULT_MAX_REGRESSED_TASKS = 0
TOLERANCE = 1e-9


class _GateOnly(BaseModel):
    """suite.yaml read for its `gate:` section alone (the rest is load_suite's business)."""

    model_config = ConfigDict(extra="ignore")

    gate: GateSpec | None = None


def suite_gate(path: str | Path) -> GateSpec | None:
    """The `gate:` section of a suite (its folder or suite.yaml); None when it has none.
    Problems are located SuiteErrors, as for the rest of the suite."""
    # the suite models and YAML: imported by the gate only to read a gate: section
    from toolproof.spec.source import SUITE_FILE, shown, validation_problems
    from toolproof.spec.yamlload import load_yaml

    given = Path(path)
    file = given / SUITE_FILE if given.is_dir() else given
    where = shown(file)
    raw = load_yaml(file, where)
    if not isinstance(raw, Mapping):
        raise SuiteError.at(where, 1, "suite.yaml must be a mapping of fields")
    try:
        return _GateOnly.model_validate(raw).gate
    except ValidationError as exc:
        raise SuiteError(validation_problems(exc, raw, where)) from None


def parse_limit(flag: str, text: str) -> tuple[str, float]:
    """'pass^5=0.8' -> ('pass^5', 0.8), the metric checked: --min, --max, --fail-under."""
    name, sep, value = text.partition("=")
    name = name.strip()
    try:
        number = float(value)
    except ValueError:
        number = float("nan")
    if not sep or not name or not math.isfinite(number):
        raise UsageError(f"{flag} {text!r}: expected METRIC=VALUE, for example pass^5=0.8")
    try:
        check_metric(name)
    except ValueError as exc:
        raise UsageError(f"{flag} {name}: {exc}") from None
    return name, number


def flag_spec(
    mins: Sequence[str] = (),
    maxes: Sequence[str] = (),
    max_regression: float | None = None,
    min_flag: str = "--min",
    max_regressed_tasks: int | None = None,
) -> GateSpec:
    """The checks given as --min (or --fail-under), --max, --max-regression and
    --max-regressed-tasks."""
    if max_regression is not None and not 0 <= max_regression <= 1:
        raise UsageError(f"--max-regression {max_regression}: must be between 0 and 1")
    if max_regressed_tasks is not None and max_regressed_tasks < 0:
        raise UsageError(f"--max-regressed-tasks {max_regressed_tasks}: must be 0 or more")
    return GateSpec(
        min=dict(parse_limit(min_flag, t) for t in mins),
        max=dict(parse_limit("--max", t) for t in maxes),
        max_regression=max_regression,
        max_regressed_tasks=max_regressed_tasks,
    )


def merge(base: GateSpec | None, flags: GateSpec) -> GateSpec:
    """The suite's gate with the flags over it (a flag wins for the same metric)."""
    if base is None:
        return flags
    return GateSpec(
        min={**base.floors(), **flags.floors()},
        max={**base.ceilings(), **flags.ceilings()},
        max_regression=(
            flags.max_regression if flags.max_regression is not None else base.max_regression
        ),
        max_regressed_tasks=(
            flags.max_regressed_tasks
            if flags.max_regressed_tasks is not None
            else base.max_regressed_tasks
        ),
        alpha=base.alpha,
    )


# ---------------------------------------------------------------- evaluation


@dataclass
class GateResult:
    """Everything the gate decided, and what the reports need.

    The checks are decided on `points`, the run's summary without its bootstrapped
    intervals (no check reads an interval); `summary`, intervals included, is computed
    from the same rows when a report first asks for it."""

    run: RunRecord
    spec: GateSpec
    points: RunSummary
    checks: list[GateCheck]
    trials: list[dict[str, Any]]
    metas: list[TaskMeta] = field(default_factory=list)
    baseline: str | None = None
    comparison: Comparison | None = None
    verification: Verification | None = None
    sources: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    include_ungradable: bool = False
    """Whether the trials of ungradable tasks count (by default they are left out)."""
    _summary: RunSummary | None = field(default=None, init=False, repr=False)

    @property
    def summary(self) -> RunSummary:
        """The run's whole summary, as `toolproof show` gives it at the gate's k values."""
        if self._summary is None:
            with gc_paused():
                self._summary = run_summary(
                    self.run,
                    self.trials,
                    self.metas,
                    self.points.k,
                    include_ungradable=self.include_ungradable,
                )
        return self._summary

    @property
    def run_id(self) -> str:
        return self.run.id

    @property
    def passed(self) -> bool:
        return not self.failed

    @property
    def failed(self) -> list[GateCheck]:
        return [c for c in self.checks if c.failed]


def evaluate_gate(
    store: Store,
    run_id: str,
    spec: GateSpec,
    baseline: str | None = None,
    sources: Sequence[str] = (),
    include_ungradable: bool = False,
) -> GateResult:
    """Hold every model of the run to the gate; reads the run (and baseline) from the store.
    The trials of ungradable tasks are left out of what it holds, unless `include_ungradable`."""
    if spec.is_empty() and not baseline:
        raise UsageError(
            "nothing to gate on: add a gate: section to suite.yaml, or give --min, --max "
            "or --baseline"
        )
    run = store.run(run_id)
    ks = sorted(set(run.config.k) | set(spec.ks()))
    # one state of the store: the summary, the JUnit cases and the manifest's check share it
    metas = task_metas(store, run_id)
    rows, summary, verification = read_verified(
        store,
        run_id,
        lambda rows: run_summary(
            run, rows, metas, ks, intervals=False, include_ungradable=include_ungradable
        ),
    )
    result = GateResult(
        run=run,
        spec=spec,
        points=summary,
        checks=[],
        trials=rows,
        metas=metas,
        baseline=baseline,
        sources=list(sources),
        include_ungradable=include_ungradable,
    )
    result.checks.append(_finished(run, summary))
    if not summary.models:
        left_out = summary.ungradable.counts.total if summary.ungradable else 0
        found = NoTrials(left_out)
        result.checks.append(GateCheck("run has trials", "", False, "finished", found))
    result.checks.extend(limit_checks(summary, spec))
    if baseline:
        result.comparison = compare_runs(
            store, baseline, run_id, alpha=spec.alpha, include_ungradable=include_ungradable
        )
        result.warnings.extend(result.comparison.warnings)
        allowed = spec.max_regression if spec.max_regression is not None else DEFAULT_MAX_REGRESSION
        several = len(summary.models) > 1
        result.checks.extend(_regressions(result.comparison, allowed, several))
        tasks = (
            spec.max_regressed_tasks
            if spec.max_regressed_tasks is not None
            else DEFAULT_MAX_REGRESSED_TASKS
        )
        result.checks.extend(_regressed_tasks(result.comparison, tasks, several))
    else:
        result.checks.extend(_without_baseline(spec))
    result.verification = _integrity(verification, "manifest", result.checks)
    if baseline:
        _integrity(verify_run(store, baseline), "baseline manifest", result.checks)
    return result


def _finished(run: RunRecord, summary: RunSummary) -> GateCheck:
    state = RunState(run.status, run.finished_at, summary.stopped, summary.counts.total)
    return GateCheck("run finished", "", run.finished, "finished", state)


def limit_checks(summary: RunSummary, spec: GateSpec, flag: str = "gate metric") -> list[GateCheck]:
    """Every model of a run summary held to the gate's floors and ceilings (pure). A metric
    the run does not have is a usage error naming `flag`; one it could not compute (too few
    trials, not measured) fails its check."""
    out = []
    for entry in summary.models:
        label = entry.model if len(summary.models) > 1 else ""
        metrics = model_metrics(entry)
        skipped_k = set(entry.skipped_k or [])
        for name, floor in spec.floors().items():
            out.append(_limit(name, floor, True, metrics, label, skipped_k, flag, entry))
        for name, ceiling in spec.ceilings().items():
            out.append(_limit(name, ceiling, False, metrics, label, skipped_k, flag, entry))
    return out


def fail_under(summary: RunSummary, thresholds: Sequence[str]) -> list[GateCheck]:
    """`--fail-under` (the gate's `min`) on a run's summary: the checks that failed, none
    when no threshold is given; a run with no finished trial has nothing to check."""
    spec = flag_spec(list(thresholds), min_flag="--fail-under")
    if spec.is_empty():
        return []
    if not summary.models:
        raise UsageError("--fail-under: the run has no finished trial, so nothing to check")
    return [c for c in limit_checks(summary, spec, "--fail-under") if c.failed]


def with_threshold_ks(ks: list[int] | None, thresholds: Sequence[str] | None) -> list[int] | None:
    """The k values asked for, plus those --fail-under names (so the summary has them)."""
    extra = flag_spec(list(thresholds or []), min_flag="--fail-under").ks()
    if not extra:
        return ks
    return sorted(set(ks or []) | set(extra)) if ks else None


def _limit(
    name: str,
    limit: float,
    at_least: bool,
    metrics: MetricValues,
    model: str,
    skipped_k: set[int],
    flag: str,
    entry: ModelSummary,
) -> GateCheck:
    """One floor or ceiling; next to a Reliability Score its finding keeps which of the
    score's parts were measured."""
    title = f"{name} {'≥' if at_least else '≤'} {limit:g}"
    kind = "min" if at_least else "max"
    if name not in metrics:
        if k_of(name) in skipped_k:
            too_few = Threshold(name, None, limit, at_least, too_few_trials=True)
            return GateCheck(title, model, False, kind, too_few, None, limit)
        known = ", ".join(sorted(metrics.names()))
        raise UsageError(f"{flag} {name}: no such metric in this run (have: {known})")
    value = metrics[name]
    reliability = entry.reliability if name == RELIABILITY_SCORE.name else None
    found = Threshold(name, value, limit, at_least, reliability=reliability)
    if value is None:
        return GateCheck(title, model, False, kind, found, None, limit)
    ok = value >= limit - TOLERANCE if at_least else value <= limit + TOLERANCE
    return GateCheck(title, model, ok, kind, found, value, limit)


def _regression_title(allowed: float) -> str:
    return f"no significant regression > {allowed:g} vs baseline"


def _regressions(comparison: Comparison, allowed: float, several: bool) -> list[GateCheck]:
    out = []
    baseline = comparison.run_a
    if not comparison.pairs:
        unmatched = Unmatched(baseline, "model")
        out.append(GateCheck(_regression_title(allowed), "", False, "regression", unmatched))
    for pair in comparison.pairs:
        label = pair.label_b if several else ""
        if not pair.variants:
            unmatched = Unmatched(baseline, "variant")
            out.append(GateCheck(_regression_title(allowed), label, False, "regression", unmatched))
        for v in pair.variants:
            model = " ".join(p for p in (label, f"[{v.variant}]" if v.variant else "") if p)
            k_metrics = [m for m in v.metrics if CATALOGUE.read(m.name).definition is PASS_HAT]
            chosen = [m for m in v.metrics if m.name == PASS_AT.at(k=1)] + k_metrics[-1:]
            if not chosen:
                unmatched = Unmatched(baseline, "trials")
                out.append(
                    GateCheck(_regression_title(allowed), model, False, "regression", unmatched)
                )
            for m in chosen:
                delta = m.delta if m.delta is not None else 0.0
                dropped = delta < -allowed - TOLERANCE
                bad = dropped and m.significant
                found = Drop(m, v.task_count, comparison.alpha, dropped, len(v.regressed))
                title = f"{m.name}: no significant drop > {allowed:g} vs baseline"
                out.append(GateCheck(title, model, not bad, "regression", found, delta, -allowed))
    return out


def _without_baseline(spec: GateSpec) -> list[GateCheck]:
    """The regression checks the gate was given, skipped: there is nothing to compare."""
    titles = []
    if spec.max_regression is not None:
        titles.append((_regression_title(spec.max_regression), "regression"))
    if spec.max_regressed_tasks is not None:
        titles.append((_tasks_title(spec.max_regressed_tasks), "regressed_tasks"))
    return [GateCheck(title, "", True, kind, NoBaseline(), skipped=True) for title, kind in titles]


def _tasks_title(allowed: int) -> str:
    if allowed == 0:
        return "no task regressed significantly vs baseline"
    return f"at most {allowed} task(s) regressed significantly vs baseline"


def _regressed_tasks(comparison: Comparison, allowed: int, several: bool) -> list[GateCheck]:
    """Per model pair and variant: the tasks the per-task test flags, at most `allowed`.
    A pair or variant without matched tasks already fails the regression checks."""
    out = []
    for pair in comparison.pairs:
        label = pair.label_b if several else ""
        for v in pair.variants:
            if v.tasks:
                model = " ".join(p for p in (label, f"[{v.variant}]" if v.variant else "") if p)
                out.append(_task_check(v, allowed, model, comparison.alpha))
    return out


def _task_check(v: VariantComparison, allowed: int, model: str, alpha: float) -> GateCheck:
    flagged = tuple(v.significantly_regressed)
    found = RegressedTasks(flagged, v.task_count, allowed, alpha)
    if not flagged:
        counts = [t.trials for t in v.tasks]
        found = replace(found, needed=trials_needed(counts, exact(alpha)), fewest=min(counts))
    return GateCheck(
        _tasks_title(allowed),
        model,
        len(flagged) <= allowed,
        "regressed_tasks",
        found,
        len(flagged),
        allowed,
    )


def _integrity(
    verification: Verification, what: str, checks: list[GateCheck]
) -> Verification | None:
    run_id = verification.run_id
    name = f"{what} verified" if what == "manifest" else f"{what} verified ({run_id})"
    found = Integrity(verification)
    if not verification.recorded:
        checks.append(GateCheck(name, "", True, "integrity", found, skipped=True))
        return None
    checks.append(GateCheck(name, "", verification.ok, "integrity", found))
    return verification


def resolve_spec(
    run: RunRecord,
    suite: Path | None,
    flags: GateSpec,
    baseline: str | None = None,
) -> tuple[GateSpec, list[str], list[str]]:
    """The effective gate, where it came from, and warnings: the suite's section (from
    --suite or the run's own suite folder) with the flags over it. A suite folder that is
    gone is an error, unless the flags give checks (then a warning)."""
    stored = run.config.suite_path
    path = suite or (Path(stored) if stored else None)
    sources: list[str] = []
    warnings: list[str] = []
    base = None
    if path is not None:
        from toolproof.spec.source import SUITE_FILE  # the suite models: only to read one

        file = path / SUITE_FILE if path.is_dir() else path
        if file.is_file():
            base = suite_gate(file)
            if base is not None:
                sources.append(f"{file}: gate")
        elif suite is not None:
            raise UsageError(f"--suite {suite}: no suite.yaml there")
        elif flags.is_empty() and not baseline:
            raise UsageError(
                f"the run's suite {file} is not here, so its gate: section cannot be read; "
                "give --suite FOLDER, or the checks as --min/--max/--baseline"
            )
        else:
            warnings.append(f"the run's suite {file} is not here: its gate: section is not applied")
    if not flags.is_empty():
        sources.append("flags")
    if baseline:
        sources.append(f"baseline {baseline}")
    return merge(base, flags), sources, warnings
