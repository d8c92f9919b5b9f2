"""Cost, tokens and latency: pure functions over stored trial rows.

A cost is unknown (None) when any trial's model had no price (or a row carries no cost):
an unknown cost is never shown as zero. Infra-error trials count toward what was spent, not
toward passes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from toolproof.metrics.compute import Measured, computes, derives, unmeasured_when_imported
from toolproof.spec.metrics import COST_PER_TASK_USD, COST_USD

if TYPE_CHECKING:
    from toolproof.metrics.compute import ModelFacts
    from toolproof.metrics.summary import ModelSummary


def percentile(values: Sequence[float], p: float) -> float | None:
    """Nearest-rank percentile (p in 0..100) of the values; None when there are none."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(p / 100 * len(ordered)))
    return ordered[rank - 1]


def economics(rows: Sequence[Mapping[str, Any]], imported: bool = False) -> dict[str, float | None]:
    """cost_usd, cost_per_pass_usd, tokens, model-call and trial latency, calls and turns;
    for `imported` results what they do not tell (tokens, latencies) is None, never 0."""
    if not rows:
        return {}
    if imported:
        return unmeasured_when_imported(economics(rows))
    costs = [row.get("cost_usd") for row in rows]
    cost = None if any(c is None for c in costs) else float(sum(c for c in costs if c is not None))
    passed = sum(row["outcome"] == "passed" for row in rows)
    durations = [row["duration_s"] for row in rows if "duration_s" in row]
    calls = [latency for row in rows for latency in row.get("model_latency_s") or []]
    user_costs = [row.get("user_cost_usd", 0.0) for row in rows]
    user_cost = None if any(c is None for c in user_costs) else float(sum(user_costs))
    return {
        "cost_usd": cost,
        "cost_per_pass_usd": cost / passed if cost is not None and passed else None,
        "user_cost_usd": user_cost,
        "tokens_input": float(sum(row.get("tokens_input", 0) for row in rows)),
        "tokens_output": float(sum(row.get("tokens_output", 0) for row in rows)),
        "latency_p50_s": percentile(calls, 50),
        "latency_p95_s": percentile(calls, 95),
        "trial_latency_p50_s": percentile(durations, 50),
        "trial_latency_p95_s": percentile(durations, 95),
        "tool_calls_per_trial": sum(row.get("tool_calls", 0) for row in rows) / len(rows),
        "turns_per_trial": sum(row.get("turns", 0) for row in rows) / len(rows),
    }


@computes(
    "cost_usd",
    "cost_per_pass_usd",
    "user_cost_usd",
    "tokens_input",
    "tokens_output",
    "latency_p50_s",
    "latency_p95_s",
    "trial_latency_p50_s",
    "trial_latency_p95_s",
    "tool_calls_per_trial",
    "turns_per_trial",
)
def spend(facts: ModelFacts) -> Measured:
    """Cost, tokens, latency, calls and turns of the model's primary variant."""
    return Measured(dict(economics(facts.rows)))


@derives(COST_PER_TASK_USD.name)
def cost_per_task(entry: ModelSummary) -> Measured:
    """cost_usd / tasks, over the model's primary variant (as cost_usd)."""
    cost, tasks = entry.metrics.get(COST_USD.name), len(entry.tasks)
    return Measured({COST_PER_TASK_USD.name: cost / tasks if cost is not None and tasks else None})
