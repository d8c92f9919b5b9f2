"""Reading a stored run back as the data metrics and reports need."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from toolproof.metrics.breakdown import TaskMeta
from toolproof.metrics.summary import InfraPolicy, summarize_run
from toolproof.store.journal import Store


def task_metas(store: Store, run_id: str) -> list[TaskMeta]:
    return [
        TaskMeta(
            task_id=row["task_id"],
            tags=tuple(row["tags"]),
            tools={name: (tier, weight) for name, (tier, weight) in row["tools"].items()},
        )
        for row in store.run_tasks(run_id)
    ]


def run_summary(
    store: Store,
    run_id: str,
    ks: Sequence[int] | None = None,
    infra: InfraPolicy | None = None,
) -> dict[str, Any]:
    """The summary of a stored run; k and the infra policy default to the run's own."""
    run = store.run(run_id)
    config = run["config"]
    chosen_k = list(ks) if ks else list(config.get("k", [1]))
    policy: InfraPolicy = infra or config.get("infra_errors", "fail")
    summary = summarize_run(
        store.outcomes(run_id),
        task_metas(store, run_id),
        chosen_k,
        policy,
        seed=config.get("seed", 0),
        labels={"": run["agent"]},
        partial=run["status"] != "finished",
        score=config.get("score"),
    )
    return {
        "run_id": run_id,
        "suite": {
            "name": run["suite_name"],
            "version": run["suite_version"],
            "hash": run["suite_hash"],
        },
        "agent": run["agent"],
        "status": run["status"],
        **({"stopped": config["stopped"]} if "stopped" in config else {}),
        **({"stopped": config["stopped"]} if "stopped" in config else {}),
        **summary,
    }
