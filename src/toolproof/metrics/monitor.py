"""Production against a baseline, one dimension at a time, with the conversation as the unit:
per-conversation values in, a one-sided permutation test of "worse by more than the margin"
out. Pure: what the values are is decided in `toolproof.ci.monitor`."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import fmean
from typing import Literal

PERMUTATIONS = 10_000
Worse = Literal["higher", "lower"]
Margin = Literal["absolute", "relative"]


@dataclass(frozen=True)
class Dimension:
    """A measure of one conversation, which way is worse, and how its margin is read: in
    points for a rate, as a share of the baseline for an amount."""

    name: str
    worse: Worse
    margin: Margin
    meaning: str


@dataclass(frozen=True)
class Comparison:
    """One dimension of production against the baseline. Values are None when a side
    could not measure it (then nothing is tested and the status says so)."""

    dimension: str
    meaning: str
    baseline: float | None
    current: float | None
    baseline_n: int
    current_n: int
    allowed: float | None
    p_value: float | None
    status: Literal["ok", "regressed", "not measured"]

    @property
    def delta(self) -> float | None:
        if self.baseline is None or self.current is None:
            return None
        return self.current - self.baseline


def worse_by_more_than(
    baseline: Sequence[float],
    current: Sequence[float],
    shift: float,
    worse: Worse,
    *,
    permutations: int = PERMUTATIONS,
    seed: int = 0,
) -> float:
    """One-sided permutation p-value of H0 "current is at most `shift` worse than the
    baseline" (difference of means; conversations exchangeable under H0 once current is
    moved back by `shift`). Small p: current is worse by more than the margin."""
    sign = 1.0 if worse == "higher" else -1.0
    moved = [sign * v - shift for v in current]
    base = [sign * v for v in baseline]
    observed = fmean(moved) - fmean(base)
    pooled = base + moved
    n, m, total = len(base), len(moved), sum(pooled)
    rng = random.Random(seed)
    extreme = 0
    for _ in range(permutations):
        rng.shuffle(pooled)
        first = sum(pooled[:n])
        if (total - first) / m - first / n >= observed - 1e-12:
            extreme += 1
    return (extreme + 1) / (permutations + 1)


def compare_dimension(
    dimension: Dimension,
    baseline: Sequence[float | None],
    current: Sequence[float | None],
    max_regression: float,
    alpha: float,
) -> Comparison:
    """Compare the conversations that measured the dimension on each side."""
    base = [v for v in baseline if v is not None]
    now = [v for v in current if v is not None]
    if not base or not now:
        return Comparison(
            dimension.name,
            dimension.meaning,
            fmean(base) if base else None,
            fmean(now) if now else None,
            len(base),
            len(now),
            None,
            None,
            "not measured",
        )
    mean = fmean(base)
    allowed = max_regression if dimension.margin == "absolute" else max_regression * abs(mean)
    p_value = worse_by_more_than(base, now, allowed, dimension.worse)
    return Comparison(
        dimension.name,
        dimension.meaning,
        mean,
        fmean(now),
        len(base),
        len(now),
        allowed,
        p_value,
        "regressed" if p_value < alpha else "ok",
    )
