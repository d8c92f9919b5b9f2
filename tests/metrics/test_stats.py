"""The seeded percentile bootstrap over per-task values."""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest

from toolproof.metrics.stats import (
    bootstrap_ci,
    bootstrap_means,
    bootstrap_sums,
    resample_indices,
)


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


# ---------------------------------------------------------------- several statistics, jointly


def test_columns_bootstrapped_together_match_each_column_alone() -> None:
    a, b = _typical(25, seed=5), _typical(25, seed=6)
    together = bootstrap_means(list(zip(a, b, strict=True)), seed=9)
    assert together == [bootstrap_ci(a, seed=9), bootstrap_ci(b, seed=9)]


def test_resample_indices_pick_what_drawing_the_values_picks() -> None:
    values = _typical(12, seed=2)
    rng = random.Random(4)
    for positions in resample_indices(12, resamples=5, seed=4):
        assert [values[i] for i in positions] == rng.choices(values, k=12)


def test_a_statistic_undefined_in_a_resample_leaves_that_resample_out() -> None:
    # the ratio is undefined when neither of the two tasks with a denominator is drawn
    table = [(1.0, 2.0), (0.0, 0.0), (0.0, 0.0), (3.0, 4.0)]

    def ratio(sums: Sequence[float]) -> float | None:
        return sums[0] / sums[1] if sums[1] else None

    [interval] = bootstrap_sums(table, {"ratio": ratio}, seed=1).values()
    assert interval is not None
    # every defined resample mixes the rates 1/2 and 3/4
    assert 0.5 <= interval[0] <= interval[1] <= 0.75


def test_a_statistic_never_defined_has_no_interval() -> None:
    table = [(1.0, 0.0), (2.0, 0.0)]
    intervals = bootstrap_sums(table, {"ratio": lambda s: s[0] / s[1] if s[1] else None})
    assert intervals == {"ratio": None}


def test_an_interval_is_widened_to_reach_the_value_on_all_tasks() -> None:
    # six distinct powers of two sum to 63 only when every task is drawn once: in
    # 6!/6^6 = 1.5% of resamples, below the 2.5% tail, so both percentiles are 0
    table = [(float(2**i),) for i in range(6)]
    intervals = bootstrap_sums(table, {"all": lambda s: 10.0 if s[0] == 63 else 0.0})
    assert intervals == {"all": (0.0, 10.0)}
