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
    """The run's tasks as the summary needs them: tags, each tool's tier and weight, and why a
    task cannot be graded (none for a run stored before that was recorded)."""
    return [
        TaskMeta(
            task_id=row["task_id"],
            tags=tuple(row["tags"]),
            tools={name: (tier, weight) for name, (tier, weight) in row["tools"].items()},
            ungradable=row.get("ungradable"),
        )
        for row in store.run_tasks(run_id)
    ]


def stored_summary(
    store: Store,
    run_id: str,
    ks: Sequence[int] | None = None,
    infra: InfraPolicy | None = None,
    include_ungradable: bool = False,
) -> RunSummary:
    """The summary of a stored run; k and the infra policy default to the run's own, and
    ungradable tasks are left out unless `include_ungradable`."""
    run = store.run(run_id)
    rows, metas = store.outcomes(run_id), task_metas(store, run_id)
    return run_summary(run, rows, metas, ks, infra, include_ungradable=include_ungradable)
