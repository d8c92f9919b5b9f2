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
from math import comb

from toolproof.errors import MetricError


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


def per_task(task: TaskTrials, k: int) -> dict[str, float]:
    """The k-metrics of one task."""
    return {
        f"pass@{k}": pass_at_k(task.n, task.c, k),
        f"pass^{k}": pass_hat_k(task.n, task.c, k),
        f"pass^{k}_strict": pass_hat_k_strict(task.outcomes, k),
    }


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
    out: dict[str, float] = {"pass@1": mean([t.c / t.n for t in tasks])}
    for k in ks:
        rows = [per_task(t, k) for t in tasks]
        for name in (f"pass@{k}", f"pass^{k}", f"pass^{k}_strict"):
            out[name] = mean([r[name] for r in rows])
        out[f"reliability_tax@{k}"] = out["pass@1"] - out[f"pass^{k}"]
    return out
