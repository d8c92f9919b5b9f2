"""Confidence intervals: a seeded percentile bootstrap over tasks."""

from __future__ import annotations

import random
from collections.abc import Sequence


def bootstrap_ci(
    values: Sequence[float], *, confidence: float = 0.95, resamples: int = 2000, seed: int = 0
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of per-task values (tasks resampled)."""
    if not values:
        raise ValueError("no values")
    n = len(values)
    rng = random.Random(seed)
    means = sorted(sum(rng.choices(values, k=n)) / n for _ in range(resamples))
    tail = (1.0 - confidence) / 2
    low = means[int(tail * (resamples - 1))]
    high = means[round((1.0 - tail) * (resamples - 1))]
    return low, high
