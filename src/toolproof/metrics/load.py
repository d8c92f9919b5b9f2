"""Schema drift and concurrent load: pure functions over pass rates and stored trial rows.

See docs/metrics.md, "Production conditions".
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from toolproof.errors import MetricError
from toolproof.metrics.compute import Measured, computes, derives
from toolproof.metrics.economics import percentile
from toolproof.records.run import InfraPolicy
from toolproof.spec.metrics import TRIAL_LATENCY_P50, TRIAL_LATENCY_P95

if TYPE_CHECKING:
    from toolproof.metrics.compute import ModelFacts
    from toolproof.metrics.summary import ModelSummary


def _rate(name: str, value: float) -> float:
    if not (isinstance(value, int | float) and 0.0 <= value <= 1.0):
        raise MetricError(f"{name} must be a pass rate between 0 and 1, got {value!r}")
    return float(value)


def divide(value: float | None, base: float | None) -> float | None:
    """value / base; None when either is missing or the base is 0 (a ratio not measured)."""
    return value / base if value is not None and base else None


def drift_robustness(
    clean_pass_rate: float | None, drift_pass_rates: Mapping[str, float]
) -> dict[str, Any]:
    """pass@1 under schema drift: the mean of the variants' pass@1 (`drift_robustness`),
    its ratio to the clean pass@1 (`ratio_to_clean`, None when the clean rate is 0 or
    missing), and both per variant. With no variant, `drift_robustness` is None.

    Returns {"drift_robustness", "ratio_to_clean", "clean_pass_rate",
    "variants": {name: {"pass_rate", "ratio_to_clean"}}}.
    """
    clean = None if clean_pass_rate is None else _rate("clean pass rate", clean_pass_rate)
    rates = {name: _rate(f"pass rate of '{name}'", r) for name, r in drift_pass_rates.items()}
    mean = sum(rates.values()) / len(rates) if rates else None
    return {
        "drift_robustness": mean,
        "ratio_to_clean": divide(mean, clean),
        "clean_pass_rate": clean,
        "variants": {
            name: {"pass_rate": rate, "ratio_to_clean": divide(rate, clean)}
            for name, rate in rates.items()
        },
    }


def completion_under_load(levels: Mapping[int, float | None], peak: int) -> dict[str, Any]:
    """pass@1 at the peak load level (`completion_under_load`) and its ratio to the pass@1 at
    the baseline level: level 1, or the lowest level present (`ratio_to_baseline`, None when
    the baseline rate is 0). A peak that was not run is an error; a level whose trials were
    all left out (infra errors, `--infra-errors exclude`) has no rate (None), never 0.

    Returns {"completion_under_load", "ratio_to_baseline", "peak", "baseline",
    "baseline_pass_rate", "levels": {level: pass_rate}}.
    """
    rates = {
        level: None if r is None else _rate(f"pass rate at load {level}", r)
        for level, r in levels.items()
    }
    if peak not in rates:
        raise MetricError(f"no pass rate at the peak load level {peak}; levels: {sorted(rates)}")
    baseline = 1 if 1 in rates else min(rates)
    return {
        "completion_under_load": rates[peak],
        "ratio_to_baseline": divide(rates[peak], rates[baseline]),
        "peak": peak,
        "baseline": baseline,
        "baseline_pass_rate": rates[baseline],
        "levels": dict(sorted(rates.items())),
    }


def _instant(text: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text)
    except (TypeError, ValueError):
        raise MetricError(f"started_at is not an ISO-8601 time: {text!r}") from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def load_level_stats(
    rows: Sequence[Mapping[str, Any]], infra: InfraPolicy = "fail"
) -> dict[str, Any]:
    """The trials of one load level: pass rate, throughput, trial latency and tool errors.

    Rows are stored trials with `outcome`, `started_at` (ISO-8601; UTC when it names no zone),
    `duration_s`, `tool_calls` and `tool_errors`. `infra` decides whether `infra_error`
    trials count as failures (`fail`) or are left out of the pass rate (`exclude`);
    throughput, latency and tool errors always take every trial.

    Returns {"trials", "passed", "infra_error", "pass_rate", "throughput_per_min",
    "trial_latency_p50_s", "trial_latency_p95_s", "tool_calls", "tool_errors",
    "tool_error_rate"}; a value with nothing to measure is None.
    """
    counted = [r for r in rows if infra == "fail" or r["outcome"] != "infra_error"]
    passed = sum(r["outcome"] == "passed" for r in rows)
    throughput = None
    if rows:
        moments = [_instant(r["started_at"]) for r in rows]
        first = min(moments)
        # seconds from the first start to the last end
        window = max(
            (m - first).total_seconds() + float(r["duration_s"])
            for m, r in zip(moments, rows, strict=True)
        )
        if window > 0 and math.isfinite(window):
            throughput = len(rows) / (window / 60.0)
    durations = [float(r["duration_s"]) for r in rows]
    calls = sum(int(r["tool_calls"]) for r in rows)
    errors = sum(int(r["tool_errors"]) for r in rows)
    if not 0 <= errors <= calls:
        raise MetricError(f"tool errors ({errors}) must be between 0 and tool calls ({calls})")
    return {
        "trials": len(rows),
        "passed": passed,
        "infra_error": sum(r["outcome"] == "infra_error" for r in rows),
        "pass_rate": passed / len(counted) if counted else None,
        "throughput_per_min": throughput,
        TRIAL_LATENCY_P50.name: percentile(durations, 50),
        TRIAL_LATENCY_P95.name: percentile(durations, 95),
        "tool_calls": calls,
        "tool_errors": errors,
        "tool_error_rate": errors / calls if calls else None,
    }


@computes("drift_robustness", "completion_under_load")
def under_drift_and_load(facts: ModelFacts) -> Measured:
    """Drift robustness and completion under load over the model's variants, with their
    intervals; None where no drift variant or load level was run."""
    drift, load = facts.conditions.drift, facts.conditions.load
    return Measured(
        {
            "drift_robustness": drift.drift_robustness if drift else None,
            "completion_under_load": load.completion_under_load if load else None,
        },
        {
            "drift_robustness": drift.ci.drift_robustness if drift and drift.ci else None,
            "completion_under_load": load.ci.completion_under_load if load and load.ci else None,
        },
    )


@derives("ratio_to_clean", "ratio_to_baseline")
def ratios(entry: ModelSummary) -> Measured:
    """The pass rate under drift against clean, and at the peak load against the baseline
    level, with their intervals."""
    drift, load = entry.conditions.drift, entry.conditions.load
    return Measured(
        {
            "ratio_to_clean": drift.ratio_to_clean if drift else None,
            "ratio_to_baseline": load.ratio_to_baseline if load else None,
        },
        {
            "ratio_to_clean": drift.ci.ratio_to_clean if drift and drift.ci else None,
            "ratio_to_baseline": load.ci.ratio_to_baseline if load and load.ci else None,
        },
    )
