"""A run's summary: counts, metrics with confidence intervals, per-task rows, breakdowns.

Pure: it reads stored trial rows and task metadata, never an agent.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from toolproof.errors import MetricError
from toolproof.metrics.breakdown import TaskMeta, by_tag, by_tier
from toolproof.metrics.economics import economics
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
    labels: Mapping[str, str] | None = None,
    partial: bool = False,
) -> dict[str, Any]:
    """The summary printed, written as JSON and gated on: overall counts and one entry per
    model under `models`; with a single model its entry's fields are also at the top level.

    `partial` (a run stopped early) drops the k values some task has too few trials for,
    listing them under `skipped_k`, instead of failing.
    """
    counts = Counter(row["outcome"] for row in rows)
    by_model: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for row in rows:
        by_model[row.get("model", "")].append(row)
    models = [
        {
            "model": (labels or {}).get(model, model),
            **summarize_group(group, metas, ks, infra, seed, partial),
        }
        for model, group in by_model.items()
    ]
    summary: dict[str, Any] = {
        "counts": _counts(counts, len(rows)),
        "infra_errors": infra,
        "k": list(ks),
        "models": models,
    }
    if len(models) == 1:
        summary.update({key: models[0][key] for key in ("metrics", "ci", "tiers", "tags", "tasks")})
        if "skipped_k" in models[0]:
            summary["skipped_k"] = models[0]["skipped_k"]
    return summary


def _counts(counts: Mapping[str, int], total: int) -> dict[str, int]:
    return {
        "passed": counts.get("passed", 0),
        "failed": counts.get("failed", 0),
        "infra_error": counts.get("infra_error", 0),
        "total": total,
    }


def summarize_group(
    rows: Sequence[Mapping[str, Any]],
    metas: Sequence[TaskMeta],
    ks: Sequence[int],
    infra: InfraPolicy,
    seed: int,
    partial: bool,
) -> dict[str, Any]:
    """Counts, metrics (pass^k family and economics), intervals, breakdowns and task rows
    of one model's trials."""
    tasks, per_counts = task_trials(rows, infra)
    empty = [t.task_id for t in tasks if t.n == 0]
    if empty:
        raise MetricError(
            f"task '{empty[0]}' has no trial left once infra errors are excluded; "
            "resume the run or use --infra-errors fail"
        )
    out: dict[str, Any] = {"counts": _counts(Counter(row["outcome"] for row in rows), len(rows))}
    if partial:
        fewest = min((t.n for t in tasks), default=0)
        skipped = [k for k in ks if k > fewest]
        ks = [k for k in ks if k <= fewest]
        if skipped:
            out["skipped_k"] = skipped
    check_k(tasks, ks)
    per: dict[str, dict[str, float]] = {}
    for task in tasks:
        row = {"pass@1": task.c / task.n}
        for k in ks:
            row.update(per_task(task, k))
        per[task.task_id] = row
    out["metrics"] = {**(summarize(tasks, ks) if tasks else {}), **economics(rows)}
    out["ci"] = {
        name: list(bootstrap_ci([per[t.task_id][name] for t in tasks], seed=seed))
        for name in (["pass@1"] + [f"pass^{k}" for k in ks])
        if tasks
    }
    out["tiers"] = {str(t): v for t, v in by_tier(per, metas).items()}
    out["tags"] = by_tag(per, metas)
    grouped: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for trial in rows:
        grouped[trial["task_id"]].append(trial)
    out["tasks"] = [
        {
            "id": task.task_id,
            "trials": task.n,
            "passed": task.c,
            "infra_error": per_counts[task.task_id]["infra_error"],
            "metrics": {**per[task.task_id], **economics(grouped[task.task_id])},
            "failures": sorted(
                {
                    t["reason"]
                    for t in grouped[task.task_id]
                    if t["outcome"] != "passed" and t["reason"]
                }
            ),
        }
        for task in sorted(tasks, key=lambda t: t.task_id)
    ]
    return out
