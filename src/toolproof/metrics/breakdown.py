"""Breakdowns of per-task values by tier (weighted by production weights) and by tag."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class TaskMeta:
    """What a summary needs of a task: its tags, the tools it uses with tier and weight, and
    why nothing it checks can fail when that is so (`ungradable`: the summary leaves it out)."""

    task_id: str
    tags: tuple[str, ...] = ()
    tools: Mapping[str, tuple[int, float | None]] = field(default_factory=dict)
    ungradable: str | None = None


def tier_weight(meta: TaskMeta, tier: int) -> float:
    """A task's weight in a tier: the production weights of its tools of that tier.

    Tools without a weight count as 1, so unweighted suites give plain means.
    """
    return sum(1.0 if w is None else w for t, w in meta.tools.values() if t == tier)


def by_tier(
    values: Mapping[str, Mapping[str, float]], metas: Sequence[TaskMeta]
) -> dict[int, dict[str, float]]:
    """For each tier: tasks using it, their total weight, and each metric's weighted mean."""
    out: dict[int, dict[str, float]] = {}
    metas = [m for m in metas if m.task_id in values]
    for tier in sorted({t for m in metas for t, _ in m.tools.values()}):
        weights = {m.task_id: tier_weight(m, tier) for m in metas if tier_weight(m, tier) > 0}
        total = sum(weights.values())
        if not weights or total <= 0:
            continue
        names = next(iter(values.values())).keys() if values else []
        row: dict[str, float] = {"tasks": float(len(weights)), "weight": total}
        for name in names:
            row[name] = sum(values[t][name] * w for t, w in weights.items()) / total
        out[tier] = row
    return out


def by_tag(
    values: Mapping[str, Mapping[str, float]], metas: Sequence[TaskMeta]
) -> dict[str, dict[str, float]]:
    """For each tag: the number of tasks and each metric's plain mean over them."""
    out: dict[str, dict[str, float]] = {}
    for tag in sorted({tag for m in metas for tag in m.tags}):
        ids = [m.task_id for m in metas if tag in m.tags and m.task_id in values]
        if not ids:
            continue
        names = values[ids[0]].keys()
        row: dict[str, float] = {"tasks": float(len(ids))}
        for name in names:
            row[name] = sum(values[t][name] for t in ids) / len(ids)
        out[tag] = row
    return out
