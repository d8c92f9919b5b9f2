"""A run's summary: counts, metrics with confidence intervals, per-task rows, breakdowns.

Pure: it reads stored trial rows and task metadata, never an agent.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from toolproof.errors import MetricError
from toolproof.metrics.breakdown import TaskMeta, by_tag, by_tier
from toolproof.metrics.passk import TaskTrials, check_k, per_task, summarize
from toolproof.metrics.stats import bootstrap_ci

InfraPolicy = Literal["fail", "exclude"]


def task_trials(
    rows: Sequence[Mapping[str, Any]], infra: InfraPolicy
) -> tuple[list[TaskTrials], dict[str, Counter[str]]]:
    """Per-task outcomes in trial order under the infra-error policy, and raw counts."""
    grouped: dict[str, list[tuple[int, str]]] = defaultdict(list)
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for row in rows:
        grouped[row["task_id"]].append((row["trial"], row["outcome"]))
        counts[row["task_id"]][row["outcome"]] += 1
    tasks = []
    for task_id, items in grouped.items():
        ordered = [outcome for _, outcome in sorted(items)]
        if infra == "exclude":
            ordered = [o for o in ordered if o != "infra_error"]
        tasks.append(TaskTrials(task_id, tuple(o == "passed" for o in ordered)))
    return tasks, counts


def summarize_run(
    rows: Sequence[Mapping[str, Any]],
    metas: Sequence[TaskMeta],
    ks: Sequence[int],
    infra: InfraPolicy = "fail",
    seed: int = 0,
) -> dict[str, Any]:
    """The summary printed, written as JSON and gated on."""
    counts = Counter(row["outcome"] for row in rows)
    tasks, per_counts = task_trials(rows, infra)
    summary: dict[str, Any] = {
        "counts": {
            "passed": counts["passed"],
            "failed": counts["failed"],
            "infra_error": counts["infra_error"],
            "total": len(rows),
        },
        "infra_errors": infra,
        "k": list(ks),
    }
    empty = [t.task_id for t in tasks if t.n == 0]
    if empty:
        raise MetricError(
            f"task '{empty[0]}' has no trial left once infra errors are excluded; "
            "resume the run or use --infra-errors fail"
        )
    check_k(tasks, ks)
    summary["metrics"] = summarize(tasks, ks) if tasks else {}
    per: dict[str, dict[str, float]] = {}
    for task in tasks:
        row = {"pass@1": task.c / task.n}
        for k in ks:
            row.update(per_task(task, k))
        per[task.task_id] = row
    summary["ci"] = {
        name: list(bootstrap_ci([per[t.task_id][name] for t in tasks], seed=seed))
        for name in (["pass@1"] + [f"pass^{k}" for k in ks])
        if tasks
    }
    summary["tiers"] = {str(t): v for t, v in by_tier(per, metas).items()}
    summary["tags"] = by_tag(per, metas)
    reasons: dict[str, list[str]] = defaultdict(list)
    for trial in rows:
        if trial["outcome"] != "passed" and trial.get("reason"):
            reasons[trial["task_id"]].append(trial["reason"])
    summary["tasks"] = [
        {
            "id": task.task_id,
            "trials": task.n,
            "passed": task.c,
            "infra_error": per_counts[task.task_id]["infra_error"],
            "metrics": per[task.task_id],
            "failures": sorted(set(reasons[task.task_id])),
        }
        for task in sorted(tasks, key=lambda t: t.task_id)
    ]
    return summary
