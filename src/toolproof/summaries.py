"""A stored run summarised: the store's rows through the pure metrics.

The store only reads and writes; the metrics only compute. This is where the two meet for
the commands, the gate, the reports and the dashboard, which all show a stored run's
`RunSummary`.
"""

from __future__ import annotations

from collections.abc import Sequence

from toolproof.metrics.breakdown import TaskMeta
from toolproof.metrics.summary import InfraPolicy, RunSummary, run_summary
from toolproof.store.journal import Store


def task_metas(store: Store, run_id: str) -> list[TaskMeta]:
    """The run's tasks as the breakdowns need them: tags, and each tool's tier and weight."""
    return [
        TaskMeta(
            task_id=row["task_id"],
            tags=tuple(row["tags"]),
            tools={name: (tier, weight) for name, (tier, weight) in row["tools"].items()},
        )
        for row in store.run_tasks(run_id)
    ]


def stored_summary(
    store: Store,
    run_id: str,
    ks: Sequence[int] | None = None,
    infra: InfraPolicy | None = None,
) -> RunSummary:
    """The summary of a stored run; k and the infra policy default to the run's own."""
    run = store.run(run_id)
    return run_summary(run, store.outcomes(run_id), task_metas(store, run_id), ks, infra)
