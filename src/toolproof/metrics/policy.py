"""Policy adherence: how often the agent kept the suite's policy rules, and which it broke.

A trial counts when its policy was checked: it was graded (passed or failed; an infra error
was never graded) under at least one of the suite's `policy_rules`. Its stored condition
statistics list the rules it broke (`policy_violations`). A run whose suite checks no rule,
or whose results were stored before rules were recorded, has no adherence to show (None),
never 1.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from toolproof.metrics.compute import Measured, computes
from toolproof.metrics.stats import bootstrap_ci

if TYPE_CHECKING:
    from toolproof.metrics.compute import ModelFacts


def checked(row: Mapping[str, Any]) -> list[str] | None:
    """The rules a trial broke, or None when its policy was not checked."""
    if row["outcome"] == "infra_error":
        return None
    broken = (row.get("conditions") or {}).get("policy_violations")
    return list(broken) if isinstance(broken, list) else None


def policy_summary(rows: Sequence[Mapping[str, Any]], seed: int = 0) -> dict[str, Any] | None:
    """Over the trials whose policy was checked: how many, how many broke a rule, the trials
    that broke each rule, and `policy_adherence`: per task the share of its checked trials
    with no violation, averaged over tasks, with a bootstrap interval over tasks (none with
    fewer than two tasks). None when no trial's policy was checked."""
    kept: dict[str, list[bool]] = defaultdict(list)
    rules: Counter[str] = Counter()
    for row in rows:
        broken = checked(row)
        if broken is None:
            continue
        kept[row["task_id"]].append(not broken)
        rules.update(set(broken))
    if not kept:
        return None
    per_task = {task: sum(flags) / len(flags) for task, flags in sorted(kept.items())}
    shares = list(per_task.values())
    interval = bootstrap_ci(shares, seed=seed) if len(shares) >= 2 else None
    return {
        "trials": sum(len(flags) for flags in kept.values()),
        "violating_trials": sum(flags.count(False) for flags in kept.values()),
        "violations": dict(sorted(rules.items())),
        "policy_adherence": sum(shares) / len(shares),
        "ci": {"policy_adherence": list(interval) if interval else None},
        "tasks": per_task,
    }


@computes("policy_adherence")
def adherence(facts: ModelFacts) -> Measured:
    """Policy adherence of the model's primary variant, with its interval; None when no
    trial's policy was checked."""
    policy = facts.policy
    if policy is None:
        return Measured({"policy_adherence": None}, {"policy_adherence": None})
    return Measured(
        {"policy_adherence": policy.policy_adherence},
        {"policy_adherence": policy.ci.policy_adherence},
    )
