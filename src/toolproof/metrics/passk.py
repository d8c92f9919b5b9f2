"""pass@k, pass^k and friends: pure functions of per-task trial outcomes.

For a task with n trials of which c passed:
- pass@k (Chen et al. 2021, unbiased): 1 - C(n-c, k) / C(n, k), the chance that at least
  one of k fresh trials passes;
- pass^k (tau-bench): C(c, k) / C(n, k), the chance that k fresh trials all pass;
- pass^k_strict: 1 when the first k trials (by index) all passed, else 0.
Each is averaged over tasks. k larger than a task's n is an error, never a number.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from math import comb
from typing import TYPE_CHECKING

from toolproof.errors import MetricError
from toolproof.metrics.compute import Interval, Measured, computes
from toolproof.metrics.stats import bootstrap_means
from toolproof.spec.metrics import PASS_AT, PASS_HAT, PASS_HAT_STRICT, RELIABILITY_TAX

if TYPE_CHECKING:
    from toolproof.metrics.compute import ModelFacts


@dataclass(frozen=True)
class TaskTrials:
    """One task's outcomes in trial order (True = passed)."""

    task_id: str
    outcomes: tuple[bool, ...]

    @property
    def n(self) -> int:
        return len(self.outcomes)

    @property
    def c(self) -> int:
        return sum(self.outcomes)


def _check(n: int, c: int, k: int) -> None:
    if k < 1:
        raise MetricError(f"k must be at least 1, got {k}")
    if not 0 <= c <= n:
        raise MetricError(f"passed trials ({c}) must be between 0 and n ({n})")
    if k > n:
        raise MetricError(f"k={k} needs at least {k} trials per task, but a task has {n}")


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k for one task."""
    _check(n, c, k)
    return 1.0 - comb(n - c, k) / comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """pass^k for one task: all of k trials drawn without replacement pass."""
    _check(n, c, k)
    return comb(c, k) / comb(n, k)


def pass_hat_k_strict(outcomes: Sequence[bool], k: int) -> float:
    """1.0 when the first k trials all passed."""
    _check(len(outcomes), sum(outcomes), k)
    return 1.0 if all(outcomes[:k]) else 0.0


@lru_cache(maxsize=256)
def k_names(k: int) -> tuple[str, str, str]:
    """pass@k, pass^k and pass^k_strict at one k (named once: a summary asks per task)."""
    return PASS_AT.at(k=k), PASS_HAT.at(k=k), PASS_HAT_STRICT.at(k=k)


def per_task(task: TaskTrials, k: int) -> dict[str, float]:
    """The k-metrics of one task."""
    at, hat, strict = k_names(k)
    return {
        at: pass_at_k(task.n, task.c, k),
        hat: pass_hat_k(task.n, task.c, k),
        strict: pass_hat_k_strict(task.outcomes, k),
    }


def task_row(task: TaskTrials, ks: Sequence[int]) -> dict[str, float]:
    """One task's pass@1 and its k-metrics at each k (at k=1, pass@1 as pass@k gives it)."""
    row = {k_names(1)[0]: task.c / task.n}
    for k in ks:
        row.update(per_task(task, k))
    return row


def check_k(tasks: Sequence[TaskTrials], ks: Sequence[int]) -> None:
    """Raise when some k exceeds some task's number of trials, naming the task."""
    for task in tasks:
        for k in ks:
            if k > task.n:
                raise MetricError(
                    f"k={k} needs at least {k} trials per task, but task '{task.task_id}' "
                    f"has {task.n}; run more trials or lower k"
                )


def mean(values: Sequence[float]) -> float:
    if not values:
        raise MetricError("no tasks to average over")
    return sum(values) / len(values)


def summarize(tasks: Sequence[TaskTrials], ks: Sequence[int]) -> dict[str, float]:
    """Overall metrics, averaged over tasks: pass@1, and for each k pass@k, pass^k,
    pass^k_strict and reliability_tax@k (pass@1 - pass^k)."""
    check_k(tasks, ks)
    once = PASS_AT.at(k=1)
    out: dict[str, float] = {once: mean([t.c / t.n for t in tasks])}
    for k in ks:
        rows = [per_task(t, k) for t in tasks]
        for name in k_names(k):
            out[name] = mean([r[name] for r in rows])
        out[RELIABILITY_TAX.at(k=k)] = out[once] - out[PASS_HAT.at(k=k)]
    return out


@computes(PASS_AT.name, PASS_HAT.name, PASS_HAT_STRICT.name, RELIABILITY_TAX.name)
def pass_rates(facts: ModelFacts) -> Measured:
    """The pass^k family over the model's primary variant; pass@1 and each pass^k with a
    bootstrap interval over tasks. An interval needs two tasks at least: over one it would
    be a point, and show a certainty the run does not have; then it is null."""
    tasks, ks = facts.tasks, facts.ks
    names = [PASS_AT.at(k=1), *(PASS_HAT.at(k=k) for k in ks)]
    table = [[row[name] for name in names] for row in facts.task_rows]
    drawn = bootstrap_means(table, seed=facts.seed) if len(tasks) >= 2 and facts.intervals else []
    intervals: dict[str, Interval] = dict.fromkeys(names)
    intervals.update((name, list(found)) for name, found in zip(names, drawn, strict=False))
    return Measured(dict(summarize(tasks, ks)) if tasks else {}, intervals)
