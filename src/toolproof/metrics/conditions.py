"""One model's production conditions: recovery, drift robustness and completion under load,
over all of its trials, per task and per tier. The recovery metrics are taken from each
trial's stored stats (`conditions`, written by `metrics.recovery.trial_stats` from its
transcript): reading a run needs no transcript.

Pure: it reads stored trial rows and per-task pass rates. See docs/metrics.md, "Production
conditions".
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from toolproof.metrics.breakdown import TaskMeta, by_tier
from toolproof.metrics.compute import Measured, computes
from toolproof.metrics.load import completion_under_load, divide, drift_robustness
from toolproof.spec.metrics import (
    COMPLETION_UNDER_LOAD,
    DRIFT_ROBUSTNESS,
    RATIO_TO_BASELINE,
    RATIO_TO_CLEAN,
)
from toolproof.spec.variants import VariantKey

if TYPE_CHECKING:
    from toolproof.metrics.compute import ModelFacts

TaskRates = Mapping[str, Mapping[str, float]]
"""Per variant key (`""` for clean, `drift:v2`, `load:20`, ...): each task's pass@1."""

NO_STATS: Mapping[str, Any] = {"failed": {}, "recovered": {}, "looped": False, "faulted": False}
"""The recovery stats of a trial stored without any (no tool call failed)."""


class RatioNames(NamedTuple):
    """The keys of a pass rate under a condition, its ratio to a base rate, and the base."""

    value: str
    ratio: str
    base: str


DRIFT = RatioNames(DRIFT_ROBUSTNESS.name, RATIO_TO_CLEAN.name, "clean_pass_rate")
LOAD = RatioNames(COMPLETION_UNDER_LOAD.name, RATIO_TO_BASELINE.name, "baseline_pass_rate")


def mean_rate(rates: Mapping[str, float]) -> float | None:
    """A variant's pass@1: the mean of its tasks' pass rates; None with no task (every trial
    an infra error left out): not measured, never 0."""
    return sum(rates.values()) / len(rates) if rates else None


def drift_keys(rates: TaskRates) -> dict[str, str]:
    """Drift variant name -> its variant key, for the plain (uncombined) drift variants."""
    parsed = {key: VariantKey.parse(key) for key in rates}
    return {part.drift or "": key for key, part in parsed.items() if part.only("drift")}


def load_keys(rates: TaskRates) -> dict[int, str]:
    """Load level -> its variant key; when level 1 was not run, the clean trials stand for it.
    Empty when no plain load level was run."""
    parsed = {key: VariantKey.parse(key) for key in rates}
    levels = {part.load or 0: key for key, part in parsed.items() if part.only("load")}
    if levels and 1 not in levels and "" in rates:
        levels[1] = ""
    return levels


def task_recovery_counts(rows: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each task's `recovery_counts` over its trial rows, the tasks sorted."""
    grouped: dict[str, list[tuple[str, Mapping[str, Any]]]] = defaultdict(list)
    for row in rows:
        grouped[row["task_id"]].append((row["outcome"], row.get("conditions") or NO_STATS))
    return {task: recovery_counts(grouped[task]) for task in sorted(grouped)}


def conditions_summary(
    counts: Mapping[str, Mapping[str, Any]], rates: TaskRates, metas: Sequence[TaskMeta]
) -> dict[str, Any]:
    """Recovery over all of a model's trials (from each task's `recovery_counts`); drift
    robustness and completion under load (from each variant's per-task pass rates) when
    drift variants and load levels were run; each of them also per task and per tier."""
    pass_rates = {key: mean_rate(r) for key, r in rates.items()}
    drift, levels = drift_keys(rates), load_keys(rates)
    out: dict[str, Any] = {"recovery": recovery_rates(merge_counts(counts.values()))}
    if drift:
        variants = {
            name: rate for name, key in drift.items() if (rate := pass_rates[key]) is not None
        }
        out["drift"] = drift_robustness(pass_rates.get(""), variants)
    if levels:
        load = completion_under_load({lv: pass_rates[k] for lv, k in levels.items()}, max(levels))
        out["load"] = load
    out["recovery_by_task"] = {task: _brief(c) for task, c in counts.items()}
    tasks_by_tier: dict[str, list[str]] = defaultdict(list)
    for meta in metas:
        if meta.task_id in counts:
            for tier in sorted({t for t, _ in meta.tools.values()}):
                tasks_by_tier[str(tier)].append(meta.task_id)
    out["recovery_by_tier"] = {
        tier: _brief(merge_counts(counts[t] for t in tasks))
        for tier, tasks in sorted(tasks_by_tier.items())
    }
    if drift:
        by_task = per_task_ratio([rates[key] for key in drift.values()], rates.get(""), DRIFT)
        out["drift_by_task"] = by_task
        out["drift_by_tier"] = per_tier_ratio(by_task, metas, DRIFT)
    if levels:
        peak, baseline = rates[levels[load["peak"]]], rates[levels[load["baseline"]]]
        by_task = per_task_ratio([peak], baseline, LOAD)
        out["load_by_task"] = by_task
        out["load_by_tier"] = per_tier_ratio(by_task, metas, LOAD)
    return out


def _brief(counts: Mapping[str, Any]) -> dict[str, Any]:
    """recovery_rate, loop_rate, corrective_action and failed_calls of a task or tier."""
    names = ("recovery_rate", "loop_rate", "corrective_action", "failed_calls")
    return {name: value for name, value in recovery_rates(counts).items() if name in names}


def per_task_ratio(
    conditions: Sequence[Mapping[str, float]],
    bases: Mapping[str, float] | None,
    names: RatioNames,
) -> dict[str, dict[str, float | None]]:
    """Per task: the mean of its pass rates under the conditions it was run under, its base
    pass rate (None when the task has none) and their ratio (None when the base is 0 or
    missing)."""
    out: dict[str, dict[str, float | None]] = {}
    for task in sorted({task for rates in conditions for task in rates}):
        values = [rates[task] for rates in conditions if task in rates]
        value = sum(values) / len(values)
        base = bases.get(task) if bases is not None else None
        out[task] = {names.value: value, names.ratio: divide(value, base), names.base: base}
    return out


def per_tier_ratio(
    by_task: Mapping[str, Mapping[str, float | None]],
    metas: Sequence[TaskMeta],
    names: RatioNames,
) -> dict[str, dict[str, float | None]]:
    """Per tier: the tasks using it and their weight, the production-weighted mean of the
    tasks' values and of their base rates (over the tasks that have one), and the ratio of
    the two."""
    values, bases = (
        by_tier({t: {name: v} for t, row in by_task.items() if (v := row[name]) is not None}, metas)
        for name in (names.value, names.base)
    )
    out: dict[str, dict[str, float | None]] = {}
    for tier, row in values.items():
        base = bases.get(tier, {}).get(names.base)
        out[str(tier)] = {
            "tasks": row["tasks"],
            "weight": row["weight"],
            names.value: row[names.value],
            names.ratio: divide(row[names.value], base),
            names.base: base,
        }
    return out


def recovery_counts(rows: Sequence[tuple[str, Mapping[str, Any]]]) -> dict[str, Any]:
    """What the recovery metrics divide, from (outcome, trial_stats) pairs; `infra_error`
    trials are left out of everything but `infra_error_excluded`.

    Returns {"failed": Counter by fault kind, "recovered": Counter by fault kind, "trials",
    "looped", "faulted", "faulted_passed", "infra_error_excluded"}.
    """
    failed: Counter[str] = Counter()
    recovered: Counter[str] = Counter()
    trials = looped = faulted = faulted_passed = 0
    for outcome, stats in rows:
        if outcome == "infra_error":
            continue
        trials += 1
        if stats["failed"]:
            failed.update(stats["failed"])
            recovered.update(stats["recovered"])
        looped += bool(stats["looped"])
        if stats["faulted"]:
            faulted += 1
            faulted_passed += outcome == "passed"
    return {
        "failed": failed,
        "recovered": recovered,
        "trials": trials,
        "looped": looped,
        "faulted": faulted,
        "faulted_passed": faulted_passed,
        "infra_error_excluded": len(rows) - trials,
    }


def merge_counts(parts: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The `recovery_counts` of several groups of trials taken together."""
    out: dict[str, Any] = recovery_counts([])
    for part in parts:
        out["failed"].update(part["failed"])
        out["recovered"].update(part["recovered"])
        for name in ("trials", "looped", "faulted", "faulted_passed", "infra_error_excluded"):
            out[name] += part[name]
    return out


def recovery_rates(counts: Mapping[str, Any]) -> dict[str, Any]:
    """recovery_rate, loop_rate and corrective_action from `recovery_counts`; a rate with
    nothing to count is None ("not measured"), never 0 or 1.

    Returns {"recovery_rate", "loop_rate", "corrective_action", "failed_calls",
    "recovered_calls", "trials", "faulted_trials", "infra_error_excluded",
    "by_fault": {kind: {"failed", "recovered", "rate"}}}.
    """
    failed, recovered = counts["failed"], counts["recovered"]
    n_failed, n_recovered = sum(failed.values()), sum(recovered.values())
    trials, faulted = counts["trials"], counts["faulted"]
    return {
        "recovery_rate": n_recovered / n_failed if n_failed else None,
        "loop_rate": counts["looped"] / trials if trials else None,
        "corrective_action": counts["faulted_passed"] / faulted if faulted else None,
        "failed_calls": n_failed,
        "recovered_calls": n_recovered,
        "trials": trials,
        "faulted_trials": faulted,
        "infra_error_excluded": counts["infra_error_excluded"],
        "by_fault": {
            kind: {
                "failed": failed[kind],
                "recovered": recovered[kind],
                "rate": recovered[kind] / failed[kind],
            }
            for kind in sorted(failed)
        },
    }


def pool(rows: Sequence[tuple[str, Mapping[str, Any]]]) -> dict[str, Any]:
    """recovery_rate, loop_rate and corrective_action from (outcome, trial_stats) pairs;
    `infra_error` trials are left out of all three (see `recovery_rates`)."""
    return recovery_rates(recovery_counts(rows))


@computes("recovery_rate", "loop_rate", "corrective_action")
def recovery(facts: ModelFacts) -> Measured:
    """Recovery over all of the model's trials (every variant), with the intervals."""
    rates, ci = facts.conditions.recovery, facts.conditions.recovery.ci
    return Measured(
        {
            "recovery_rate": rates.recovery_rate,
            "loop_rate": rates.loop_rate,
            "corrective_action": rates.corrective_action,
        },
        {
            "recovery_rate": ci.recovery_rate if ci else None,
            "loop_rate": ci.loop_rate if ci else None,
            "corrective_action": ci.corrective_action if ci else None,
        },
    )
