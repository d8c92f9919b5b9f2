"""The CI gate: decide from a stored run whether a model version may ship.

Conditions come from the suite's `gate:` section and from flags (a flag wins for the same
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
(null) fails a condition on it: it cannot be shown to hold.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from toolproof.ci.compare import compare_runs
from toolproof.errors import SuiteError, UsageError
from toolproof.format import fmt, p_phrase, score_parts
from toolproof.metrics.breakdown import TaskMeta
from toolproof.metrics.comparison import Comparison, TaskDiff, VariantComparison
from toolproof.metrics.power import trials_needed
from toolproof.metrics.stats import exact
from toolproof.metrics.summary import RunSummary, model_metrics, run_summary
from toolproof.records import RunRecord
from toolproof.spec.gate import GateSpec, check_metric, k_of
from toolproof.store.journal import Store
from toolproof.store.queries import bulk_read
from toolproof.store.verify import Verification, read_verified, verify_run
from toolproof.summaries import task_metas

DEFAULT_MAX_REGRESSION = 0.03
DEFAULT_MAX_REGRESSED_TASKS = 0
TOLERANCE = 1e-9
NAMED_TASKS = 10
"""Flagged tasks a condition's detail names; --json lists them all."""


class _GateOnly(BaseModel):
    """suite.yaml read for its `gate:` section alone (the rest is load_suite's business)."""

    model_config = ConfigDict(extra="ignore")

    gate: GateSpec | None = None


def suite_gate(path: str | Path) -> GateSpec | None:
    """The `gate:` section of a suite (its folder or suite.yaml); None when it has none.
    Problems are located SuiteErrors, as for the rest of the suite."""
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
    """The conditions given as --min (or --fail-under), --max, --max-regression and
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


@dataclass(frozen=True)
class Condition:
    """One gate condition for one model (or the whole run when `model` is empty)."""

    name: str
    model: str
    passed: bool
    detail: str
    kind: str
    value: float | None = None
    limit: float | None = None
    skipped: bool = False
    tasks: tuple[TaskDiff, ...] = ()
    """The tasks a `regressed_tasks` condition flagged."""

    @property
    def title(self) -> str:
        return f"{self.model}: {self.name}" if self.model else self.name

    @property
    def failed(self) -> bool:
        return not self.passed and not self.skipped

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "model": self.model or None,
            "kind": self.kind,
            "passed": self.passed,
            "skipped": self.skipped,
            "value": self.value,
            "limit": self.limit,
            "detail": self.detail,
        }
        if self.kind == "regressed_tasks":
            out["tasks"] = [t.as_json() for t in self.tasks]
        return out


@dataclass
class GateResult:
    """Everything the gate decided, and what the reports need.

    The conditions are decided on `points`, the run's summary without its bootstrapped
    intervals (no condition reads an interval); `summary`, intervals included, is computed
    from the same rows when a report first asks for it."""

    run: RunRecord
    spec: GateSpec
    points: RunSummary
    conditions: list[Condition]
    trials: list[dict[str, Any]]
    metas: list[TaskMeta] = field(default_factory=list)
    baseline: str | None = None
    comparison: Comparison | None = None
    verification: Verification | None = None
    sources: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    _summary: RunSummary | None = field(default=None, init=False, repr=False)

    @property
    def summary(self) -> RunSummary:
        """The run's whole summary, as `toolproof show` gives it at the gate's k values."""
        if self._summary is None:
            with bulk_read():
                self._summary = run_summary(self.run, self.trials, self.metas, self.points.k)
        return self._summary

    @property
    def run_id(self) -> str:
        return self.run.id

    @property
    def passed(self) -> bool:
        return not self.failed

    @property
    def failed(self) -> list[Condition]:
        return [c for c in self.conditions if c.failed]

    def as_json(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "suite": self.summary.suite.model_dump(),
            "agent": self.run.agent,
            "baseline": self.baseline,
            "passed": self.passed,
            "gate": self.spec.model_dump(),
            "sources": self.sources,
            "conditions": [c.as_json() for c in self.conditions],
            "warnings": self.warnings,
            "manifest": None if self.verification is None else self.verification.as_json(),
            "comparison": None if self.comparison is None else self.comparison.as_json(),
            "summary": self.summary.as_json(),
        }


def evaluate_gate(
    store: Store,
    run_id: str,
    spec: GateSpec,
    baseline: str | None = None,
    sources: Sequence[str] = (),
) -> GateResult:
    """Hold every model of the run to the gate; reads the run (and baseline) from the store."""
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
        store, run_id, lambda rows: run_summary(run, rows, metas, ks, intervals=False)
    )
    result = GateResult(
        run=run,
        spec=spec,
        points=summary,
        conditions=[],
        trials=rows,
        metas=metas,
        baseline=baseline,
        sources=list(sources),
    )
    result.conditions.append(_finished(run, summary))
    if not summary.models:
        result.conditions.append(
            Condition("run has trials", "", False, "no trial recorded: nothing to gate", "finished")
        )
    result.conditions.extend(limit_conditions(summary, spec))
    if baseline:
        result.comparison = compare_runs(store, baseline, run_id, alpha=spec.alpha)
        result.warnings.extend(result.comparison.warnings)
        allowed = spec.max_regression if spec.max_regression is not None else DEFAULT_MAX_REGRESSION
        several = len(summary.models) > 1
        result.conditions.extend(_regressions(result.comparison, allowed, several))
        tasks = (
            spec.max_regressed_tasks
            if spec.max_regressed_tasks is not None
            else DEFAULT_MAX_REGRESSED_TASKS
        )
        result.conditions.extend(_regressed_tasks(result.comparison, tasks, several))
    else:
        result.conditions.extend(_without_baseline(spec))
    result.verification = _integrity(verification, "manifest", result.conditions)
    if baseline:
        _integrity(verify_run(store, baseline), "baseline manifest", result.conditions)
    return result


def _finished(run: RunRecord, summary: RunSummary) -> Condition:
    done = run.finished
    if done:
        detail = f"finished at {run.finished_at}"
    else:
        stopped = summary.stopped
        detail = (
            f"the run is '{run.status}'"
            + (f" ({stopped})" if stopped else ": interrupted or still running")
            + f" with {summary.counts.total} trials; resume it before gating"
        )
    return Condition("run finished", "", done, detail, "finished")


def limit_conditions(
    summary: RunSummary, spec: GateSpec, flag: str = "gate metric"
) -> list[Condition]:
    """Every model of a run summary held to the gate's floors and ceilings (pure). A metric
    the run does not have is a usage error naming `flag`; one it could not compute (too few
    trials, not measured) fails its condition."""
    out = []
    for entry in summary.models:
        label = entry.model if len(summary.models) > 1 else ""
        metrics = model_metrics(entry)
        skipped_k = set(entry.skipped_k or [])
        parts = score_parts(entry.reliability)
        for name, floor in spec.floors().items():
            out.append(_limit(name, floor, ">=", metrics, label, skipped_k, flag, parts))
        for name, ceiling in spec.ceilings().items():
            out.append(_limit(name, ceiling, "<=", metrics, label, skipped_k, flag, parts))
    return out


def _limit(
    name: str,
    limit: float,
    op: str,
    metrics: Mapping[str, float | None],
    model: str,
    skipped_k: set[int],
    flag: str,
    parts: str = "",
) -> Condition:
    """One floor or ceiling; `parts` says next to a Reliability Score which of its parts
    were measured."""
    title = f"{name} {'≥' if op == '>=' else '≤'} {limit:g}"
    kind = "min" if op == ">=" else "max"
    if name not in metrics:
        if k_of(name) in skipped_k:
            return Condition(
                title, model, False, f"{name} not computed: too few trials", kind, None, limit
            )
        known = ", ".join(sorted(metrics))
        raise UsageError(f"{flag} {name}: no such metric in this run (have: {known})")
    value = metrics[name]
    if value is None:
        return Condition(
            title, model, False, f"{name} was not measured in this run", kind, None, limit
        )
    shown = f"{name} = {fmt(value, 4)}" + (parts if name == "reliability_score" else "")
    if op == ">=":
        ok = value >= limit - TOLERANCE
        detail = shown + ("" if ok else f" is below {limit:g}")
    else:
        ok = value <= limit + TOLERANCE
        detail = shown + ("" if ok else f" is above {limit:g}")
    return Condition(title, model, ok, detail, kind, value, limit)


def _regressions(comparison: Comparison, allowed: float, several: bool) -> list[Condition]:
    out = []
    if not comparison.pairs:
        out.append(
            Condition(
                f"no significant regression > {allowed:g} vs baseline",
                "",
                False,
                f"no trial of the run can be paired with one of baseline {comparison.run_a}",
                "regression",
            )
        )
    for pair in comparison.pairs:
        label = pair.label_b if several else ""
        if not pair.variants:
            out.append(
                Condition(
                    f"no significant regression > {allowed:g} vs baseline",
                    label,
                    False,
                    f"no trial of the run matches one of baseline {comparison.run_a}",
                    "regression",
                )
            )
        for v in pair.variants:
            model = " ".join(p for p in (label, f"[{v.variant}]" if v.variant else "") if p)
            k_metrics = [m for m in v.metrics if m.name.startswith("pass^")]
            chosen = [m for m in v.metrics if m.name == "pass@1"] + k_metrics[-1:]
            if not chosen:
                out.append(
                    Condition(
                        f"no significant regression > {allowed:g} vs baseline",
                        model,
                        False,
                        f"no matched trials with baseline {comparison.run_a}",
                        "regression",
                    )
                )
            for m in chosen:
                delta = m.delta if m.delta is not None else 0.0
                drop = delta < -allowed - TOLERANCE
                bad = drop and m.significant
                interval = f"[{fmt(m.low, signed=True)}, {fmt(m.high, signed=True)}]"
                test = (
                    f"{p_phrase(m.p_value)} over {v.task_count} tasks, "
                    f"{1 - comparison.alpha:.0%} CI {interval}"
                )
                detail = f"{m.name} {fmt(m.a)} → {fmt(m.b)} (Δ {fmt(delta, signed=True)}, {test})"
                if drop and not bad:
                    detail += ": a drop, but not significant"
                elif bad:
                    regressed = [t.task_id for t in v.regressed]
                    detail += f": significant drop; {len(regressed)} task(s) regressed"
                out.append(
                    Condition(
                        f"{m.name}: no significant drop > {allowed:g} vs baseline",
                        model,
                        not bad,
                        detail,
                        "regression",
                        delta,
                        -allowed,
                    )
                )
    return out


def _without_baseline(spec: GateSpec) -> list[Condition]:
    """The regression conditions the gate was given, skipped: there is nothing to compare."""
    titles = []
    if spec.max_regression is not None:
        titles.append(
            (f"no significant regression > {spec.max_regression:g} vs baseline", "regression")
        )
    if spec.max_regressed_tasks is not None:
        titles.append((_tasks_title(spec.max_regressed_tasks), "regressed_tasks"))
    return [
        Condition(title, "", True, "no --baseline run given", kind, skipped=True)
        for title, kind in titles
    ]


def _tasks_title(allowed: int) -> str:
    if allowed == 0:
        return "no task regressed significantly vs baseline"
    return f"at most {allowed} task(s) regressed significantly vs baseline"


def _regressed_tasks(comparison: Comparison, allowed: int, several: bool) -> list[Condition]:
    """Per model pair and variant: the tasks the per-task test flags, at most `allowed`.
    A pair or variant without matched tasks already fails the regression conditions."""
    out = []
    for pair in comparison.pairs:
        label = pair.label_b if several else ""
        for v in pair.variants:
            if v.tasks:
                model = " ".join(p for p in (label, f"[{v.variant}]" if v.variant else "") if p)
                out.append(_task_condition(v, allowed, model, comparison.alpha))
    return out


def _task_condition(v: VariantComparison, allowed: int, model: str, alpha: float) -> Condition:
    flagged = v.significantly_regressed
    method = f"Fisher's exact test per task, Holm over {v.task_count} tasks, alpha {alpha:g}"
    if flagged:
        named = ", ".join(
            f"{t.task_id} {t.passed_a}/{t.trials} → {t.passed_b}/{t.trials} "
            f"(adjusted {p_phrase(t.p_adjusted)})"
            for t in flagged[:NAMED_TASKS]
        )
        more = len(flagged) - NAMED_TASKS
        detail = (
            f"{len(flagged)} of {v.task_count} tasks regressed significantly, {allowed} "
            f"allowed: {named}" + (f", and {more} more (--json)" if more > 0 else "")
        )
    else:
        detail = f"none of {v.task_count} tasks regressed significantly"
        needed = trials_needed([t.trials for t in v.tasks], exact(alpha))
        if needed is not None:
            fewest = min(t.trials for t in v.tasks)
            detail += f", but none could with {fewest} trials per task ({needed} needed)"
    return Condition(
        _tasks_title(allowed),
        model,
        len(flagged) <= allowed,
        f"{detail} ({method})",
        "regressed_tasks",
        len(flagged),
        allowed,
        tasks=tuple(flagged),
    )


def _integrity(
    verification: Verification, what: str, conditions: list[Condition]
) -> Verification | None:
    run_id = verification.run_id
    name = f"{what} verified" if what == "manifest" else f"{what} verified ({run_id})"
    if not verification.recorded:
        conditions.append(
            Condition(
                name,
                "",
                True,
                f"no manifest recorded for run {run_id}",
                "integrity",
                skipped=True,
            )
        )
        return None
    if verification.ok:
        detail = f"{verification.trials} trials match manifest {verification.manifest_hash}"
    else:
        shown = "; ".join(verification.problems[:3])
        more = len(verification.problems) - 3
        detail = shown + (f"; {more} more (toolproof verify {run_id})" if more > 0 else "")
    conditions.append(Condition(name, "", verification.ok, detail, "integrity"))
    return verification


def resolve_spec(
    run: RunRecord,
    suite: Path | None,
    flags: GateSpec,
    baseline: str | None = None,
) -> tuple[GateSpec, list[str], list[str]]:
    """The effective gate, where it came from, and warnings: the suite's section (from
    --suite or the run's own suite folder) with the flags over it. A suite folder that is
    gone is an error, unless the flags give conditions (then a warning)."""
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
                "give --suite FOLDER, or the conditions as --min/--max/--baseline"
            )
        else:
            warnings.append(f"the run's suite {file} is not here: its gate: section is not applied")
    if not flags.is_empty():
        sources.append("flags")
    if baseline:
        sources.append(f"baseline {baseline}")
    return merge(base, flags), sources, warnings
