"""The seeded percentile bootstrap over per-task values."""

from __future__ import annotations

import random

import pytest

from toolproof.metrics.stats import bootstrap_ci


def _typical(count: int, seed: int) -> list[float]:
    rng = random.Random(seed)
    return [rng.random() for _ in range(count)]


def test_same_seed_gives_the_same_interval() -> None:
    values = _typical(30, seed=1)
    assert bootstrap_ci(values, seed=7) == bootstrap_ci(values, seed=7)


def test_different_seeds_resample_differently() -> None:
    values = _typical(30, seed=1)
    assert bootstrap_ci(values, seed=1) != bootstrap_ci(values, seed=2)


def test_interval_contains_the_mean_of_typical_data() -> None:
    for seed in range(5):
        values = _typical(40, seed=seed)
        low, high = bootstrap_ci(values, seed=seed)
        mean = sum(values) / len(values)
        assert low < mean < high


def test_interval_lies_within_the_range_of_the_values() -> None:
    values = [0.0, 0.25, 1.0, 1.0, 0.5, 0.0]
    low, high = bootstrap_ci(values)
    assert 0.0 <= low <= high <= 1.0


def test_constant_values_give_a_point_interval() -> None:
    # every resample of [0.5] * 9 has mean 4.5 / 9 = 0.5 exactly
    assert bootstrap_ci([0.5] * 9) == (0.5, 0.5)
    assert bootstrap_ci([1.0] * 3) == (1.0, 1.0)
    assert bootstrap_ci([0.0]) == (0.0, 0.0)


def test_interval_narrows_with_more_tasks() -> None:
    # half the tasks pass, half fail: the standard error of the mean is 0.5 / sqrt(n), so the
    # 95% width is about 3.92 * 0.5 / sqrt(n): ~0.62 for n=10 and ~0.06 for n=1000
    few = [1.0, 0.0] * 5
    many = [1.0, 0.0] * 500
    few_low, few_high = bootstrap_ci(few, seed=3, resamples=500)
    many_low, many_high = bootstrap_ci(many, seed=3, resamples=500)
    assert few_high - few_low > 0.4
    assert many_high - many_low < 0.1
    assert many_low < 0.5 < many_high


def test_lower_confidence_gives_a_narrower_interval() -> None:
    values = _typical(50, seed=4)
    low95, high95 = bootstrap_ci(values, confidence=0.95, seed=0)
    low50, high50 = bootstrap_ci(values, confidence=0.5, seed=0)
    assert low95 <= low50 <= high50 <= high95
    assert high50 - low50 < high95 - low95


def test_no_values_is_an_error() -> None:
    with pytest.raises(ValueError, match="no values"):
        bootstrap_ci([])
