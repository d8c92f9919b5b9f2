"""Confidence intervals of one model's production-condition metrics and Reliability Score.

One percentile bootstrap over the model's tasks (`stats.bootstrap_sums`): each resample draws
tasks with replacement, and every metric is recomputed from that same draw, so a ratio's two
pass rates come from the same tasks and the score's components move together. A metric gets
no interval (None) when it is not measured or fewer than `MIN_TASKS` tasks carry its
denominator. See docs/metrics.md, "Confidence intervals".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from toolproof.metrics.conditions import DRIFT, LOAD, TaskRates, drift_keys, load_keys
from toolproof.metrics.load import divide
from toolproof.metrics.stats import Statistic, bootstrap_sums
from toolproof.spec.metrics import (
    CORRECTIVE_ACTION,
    LOOP_RATE,
    PASS_HAT,
    RECOVERY_RATE,
    RELIABILITY_SCORE,
)

RECOVERY = (RECOVERY_RATE.name, LOOP_RATE.name, CORRECTIVE_ACTION.name)

MIN_TASKS = 2
"""Tasks that must carry a metric's denominator for it to get an interval: with one, every
resample repeats it and the interval would claim a certainty the data does not have."""


@dataclass(frozen=True)
class _Metric:
    """A metric as a function of column sums, the tasks carrying its denominator, and the
    tasks where it is positive (what a ratio over it needs)."""

    statistic: Statistic
    support: int
    positive: int


class _Table:
    """Per-task columns of what the metrics sum, the tasks in a fixed order."""

    def __init__(self, tasks: Sequence[str]) -> None:
        self.tasks = tasks
        self.columns: list[list[float]] = []
        self._index: dict[str, int] = {}

    def column(self, key: str, values: Mapping[str, float]) -> int:
        """The column of these per-task values (0 for a task without one), added once."""
        if key not in self._index:
            self._index[key] = len(self.columns)
            self.columns.append([float(values.get(task, 0.0)) for task in self.tasks])
        return self._index[key]

    def ratio(self, key: str, top: Mapping[str, float], bottom: Mapping[str, float]) -> _Metric:
        """Σ top / Σ bottom over the resampled tasks."""
        t, b = self.column(f"{key}/top", top), self.column(f"{key}/bottom", bottom)

        def statistic(sums: Sequence[float]) -> float | None:
            return sums[t] / sums[b] if sums[b] > 0 else None

        return _Metric(statistic, self._positive(b), self._positive(t))

    def _positive(self, index: int) -> int:
        return sum(value > 0 for value in self.columns[index])


def _mean(parts: Sequence[_Metric]) -> _Metric:
    def statistic(sums: Sequence[float]) -> float | None:
        values = [v for part in parts if (v := part.statistic(sums)) is not None]
        return sum(values) / len(values) if len(values) == len(parts) else None

    return _Metric(statistic, min(p.support for p in parts), min(p.positive for p in parts))


def _quotient(top: _Metric, bottom: _Metric) -> _Metric:
    def statistic(sums: Sequence[float]) -> float | None:
        return divide(top.statistic(sums), bottom.statistic(sums))

    return _Metric(statistic, min(top.support, bottom.positive), top.positive)


def _weighted(parts: Sequence[tuple[_Metric, float]]) -> _Metric:
    """Σ w·c / Σ w, as the Reliability Score combines its measured components."""
    total = sum(weight for _, weight in parts)

    def statistic(sums: Sequence[float]) -> float | None:
        values = [(v, w) for part, w in parts if (v := part.statistic(sums)) is not None]
        return sum(v * w for v, w in values) / total if len(values) == len(parts) else None

    return _Metric(statistic, min(part.support for part, _ in parts), 0)


def _recovery_columns(counts: Mapping[str, Any]) -> dict[str, float]:
    """One task's `recovery_counts`, flat: totals, and failed and recovered calls per kind."""
    flat = {name: float(counts[name]) for name in ("trials", "looped", "faulted", "faulted_passed")}
    for name in ("failed", "recovered"):
        flat[name] = float(sum(counts[name].values()))
        flat.update({f"{name}:{kind}": float(n) for kind, n in counts[name].items()})
    return flat


def condition_intervals(
    counts: Mapping[str, Mapping[str, Any]],
    rates: TaskRates,
    conditions: Mapping[str, Any],
    pass_k: Mapping[str, float],
    weights: Mapping[str, float],
    seed: int = 0,
    bootstrap: bool = True,
) -> dict[str, Any]:
    """Intervals of the metrics in `conditions` (what `conditions_summary` gave for these
    counts and rates) and of the Reliability Score.

    `counts` holds each task's `recovery_counts` over all of the model's trials (every task
    of the model), `rates` each variant's per-task pass@1, `pass_k` the clean trials'
    per-task pass^k at the score's k, and `weights` the score's weights of its measured
    components (empty when there is no score). Without `bootstrap` every interval is None.

    Returns {"recovery": {"recovery_rate", "loop_rate", "corrective_action"},
    "by_fault": {kind: interval}, "drift": {"drift_robustness", "ratio_to_clean"},
    "load": {"completion_under_load", "ratio_to_baseline"}, "reliability_score"}, where an
    interval is [low, high] or None.
    """
    columns = {task: _recovery_columns(c) for task, c in counts.items()}
    table = _Table(sorted(counts))

    def per_task(name: str) -> dict[str, float]:
        return {task: c.get(name, 0.0) for task, c in columns.items()}

    def rate(key: str) -> _Metric:
        return table.ratio(f"rate:{key}", rates[key], dict.fromkeys(rates[key], 1.0))

    recovery_rate, loop_rate, corrective_action = RECOVERY
    metrics: dict[str, _Metric | None] = {
        recovery_rate: table.ratio("recovery", per_task("recovered"), per_task("failed")),
        loop_rate: table.ratio("loops", per_task("looped"), per_task("trials")),
        corrective_action: table.ratio(
            "corrective", per_task("faulted_passed"), per_task("faulted")
        ),
    }
    kinds = sorted({kind for c in counts.values() for kind in c["failed"]})
    for kind in kinds:
        metrics[f"fault:{kind}"] = table.ratio(
            f"fault:{kind}", per_task(f"recovered:{kind}"), per_task(f"failed:{kind}")
        )
    clean = rate("") if "" in rates else None
    drift = [rate(key) for key in drift_keys(rates).values()]
    robustness = _mean(drift) if drift else None
    metrics[DRIFT.value] = robustness
    metrics[DRIFT.ratio] = _quotient(robustness, clean) if robustness and clean else None
    peak = None
    if "load" in conditions:
        levels = load_keys(rates)
        peak = rate(levels[conditions["load"]["peak"]])
        baseline = rate(levels[conditions["load"]["baseline"]])
        metrics[LOAD.ratio] = _quotient(peak, baseline)
    metrics[LOAD.value] = peak
    components = {
        PASS_HAT.generic: table.ratio("score-pass", pass_k, dict.fromkeys(pass_k, 1.0))
        if pass_k
        else None,
        recovery_rate: metrics[recovery_rate],
        LOAD.value: peak,
        DRIFT.value: robustness,
    }
    scored = [(components[name], w) for name, w in weights.items() if w > 0]
    if scored and all(part is not None for part, _ in scored):
        metrics[RELIABILITY_SCORE.name] = _weighted([(part, w) for part, w in scored if part])
    eligible = {name: m.statistic for name, m in metrics.items() if m and m.support >= MIN_TASKS}
    table_rows = list(zip(*table.columns, strict=True))
    found = bootstrap_sums(table_rows, eligible, seed=seed) if eligible and bootstrap else {}

    def interval(name: str) -> list[float] | None:
        value = found.get(name)
        return None if value is None else list(value)

    return {
        "recovery": {n: interval(n) for n in RECOVERY},
        "by_fault": {kind: interval(f"fault:{kind}") for kind in kinds},
        "drift": {n: interval(n) for n in (DRIFT.value, DRIFT.ratio)},
        "load": {n: interval(n) for n in (LOAD.value, LOAD.ratio)},
        RELIABILITY_SCORE.name: interval(RELIABILITY_SCORE.name),
    }
