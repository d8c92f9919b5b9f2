"""Confidence intervals: a seeded percentile bootstrap over tasks; and the tests that compare
two runs: a paired sign-flip permutation test over tasks, Fisher's exact test per task with
Holm's correction over the tasks.

Tasks are the unit resampled: the trials of a task, and the tool calls within a trial, are
correlated, so resampling them one by one would make intervals too narrow.
"""

from __future__ import annotations

import math
import random
from array import array
from collections.abc import Callable, Iterator, Mapping, Sequence
from fractions import Fraction
from functools import lru_cache

RESAMPLES = 2000
"""Bootstrap resamples per interval."""

CONFIDENCE = 0.95

Statistic = Callable[[Sequence[float]], float | None]
"""A metric as a function of column sums over (resampled) tasks; None where undefined."""


def resample_indices(
    n: int, *, resamples: int = RESAMPLES, seed: int = 0
) -> Iterator[Sequence[int]]:
    """The bootstrap's draws: `resamples` lists of n task positions drawn with replacement.

    The same (n, seed) always gives the same draws, and the i-th draw picks the same positions
    as `random.Random(seed).choices(values, k=n)` would pick values. A summary bootstraps many
    metrics over the same tasks with the same seed, so the draws are made once and kept."""
    return iter(_draws(n, resamples, seed))


@lru_cache(maxsize=4)
def _draws(n: int, resamples: int, seed: int) -> tuple[array[int], ...]:
    # Packed as machine integers: 2,000 draws of 1,000 tasks is 16 MB, not ~70 MB of ints.
    rng = random.Random(seed)
    population = range(n)
    return tuple(array("l", rng.choices(population, k=n)) for _ in range(resamples))


def percentile_interval(values: Sequence[float], confidence: float) -> tuple[float, float]:
    """The (1 - confidence) / 2 and (1 + confidence) / 2 percentiles of the values."""
    ordered = sorted(values)
    last = len(ordered) - 1
    tail = (1.0 - confidence) / 2
    return ordered[int(tail * last)], ordered[round((1.0 - tail) * last)]


def bootstrap_sums(
    table: Sequence[Sequence[float]],
    statistics: Mapping[str, Statistic],
    *,
    confidence: float = CONFIDENCE,
    resamples: int = RESAMPLES,
    seed: int = 0,
) -> dict[str, tuple[float, float] | None]:
    """Percentile intervals of several statistics bootstrapped jointly over tasks.

    `table` has one row of numbers per task. Each resample draws the rows with replacement,
    sums every column once and evaluates every statistic on those sums, so statistics that
    share columns move together. A resample in which a statistic is None (nothing to divide
    by) is left out of that statistic's interval; a statistic never defined gets None. An
    interval is widened to reach the statistic on all tasks when that falls outside it.
    """
    if not table:
        raise ValueError("no values")
    draws: dict[str, list[float]] = {name: [] for name in statistics}
    for positions in resample_indices(len(table), resamples=resamples, seed=seed):
        sums = [sum(column) for column in zip(*map(table.__getitem__, positions), strict=True)]
        for name, statistic in statistics.items():
            value = statistic(sums)
            if value is not None:
                draws[name].append(value)
    whole = [sum(column) for column in zip(*table, strict=True)]
    out: dict[str, tuple[float, float] | None] = {}
    for name, values in draws.items():
        point = statistics[name](whole)
        if not values or point is None:
            out[name] = None
            continue
        low, high = percentile_interval(values, confidence)
        out[name] = (min(low, point), max(high, point))
    return out


def bootstrap_means(
    table: Sequence[Sequence[float]],
    *,
    confidence: float = CONFIDENCE,
    resamples: int = RESAMPLES,
    seed: int = 0,
) -> list[tuple[float, float]]:
    """Percentile intervals of the mean of each column of per-task values (one row per task),
    the columns resampled together."""
    n = len(table)

    def mean_of(column: int) -> Statistic:
        return lambda sums: sums[column] / n

    width = len(table[0]) if table else 0
    intervals = bootstrap_sums(
        table,
        {str(column): mean_of(column) for column in range(width)},
        confidence=confidence,
        resamples=resamples,
        seed=seed,
    )
    # a mean of at least one value is always defined
    return [interval for interval in intervals.values() if interval is not None]


def bootstrap_ci(
    values: Sequence[float],
    *,
    confidence: float = CONFIDENCE,
    resamples: int = RESAMPLES,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of per-task values (tasks resampled): the
    same draws and the same interval as `bootstrap_means` gives for one column."""
    if not values:
        raise ValueError("no values")
    n = len(values)
    rng = random.Random(seed)
    # drawing the values themselves picks the positions `resample_indices` gives, faster
    means = [sum(rng.choices(values, k=n)) / n for _ in range(resamples)]
    low, high = percentile_interval(means, confidence)
    point = sum(values) / n
    return min(low, point), max(high, point)


def exact(value: float) -> Fraction:
    """A level such as alpha as the decimal it was written as (0.05 is 1/20, not the binary
    float just above it), so a p-value equal to it is never called below it."""
    return Fraction(repr(value))


def fisher_regression_p(passed_a: int, trials_a: int, passed_b: int, trials_b: int) -> Fraction:
    """One-sided p-value of Fisher's exact test that B passes less often than A.

    The two runs' trials of a task are two samples; given how many passed in both together
    (s), under "the same pass rate" B's share of them is hypergeometric: of the
    trials_a + trials_b trials, s passes fall at random, trials_b of the trials are B's. The
    p-value is the chance that B got passed_b passes or fewer. Exact, with integers: 6/6
    against 0/6 gives 1/C(12, 6) = 1/924. The trials need not be matched.
    """
    if not (0 <= passed_a <= trials_a and 0 <= passed_b <= trials_b):
        raise ValueError("passes must be between 0 and the number of trials")
    total = trials_a + trials_b
    passes = passed_a + passed_b
    tail = sum(
        math.comb(trials_b, i) * math.comb(trials_a, passes - i)
        for i in range(max(0, passes - trials_a), passed_b + 1)
    )
    return Fraction(tail, math.comb(total, passes))


def holm_adjusted(p_values: Sequence[Fraction]) -> list[Fraction]:
    """Holm's step-down adjusted p-values, in the order given.

    The i-th smallest of m p-values is multiplied by m − i + 1 (the smallest by m), capped
    at 1, and never adjusted below the one before it. A hypothesis is rejected at level
    alpha when its adjusted p is below alpha; the chance of rejecting any true one is then
    at most alpha, however the tests depend on each other.
    """
    count = len(p_values)
    order = sorted(range(count), key=p_values.__getitem__)
    adjusted = [Fraction(1)] * count
    running = Fraction(0)
    for rank, index in enumerate(order):
        running = max(running, min(Fraction(1), (count - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


def paired_bootstrap(
    a: Sequence[float],
    b: Sequence[float],
    *,
    confidence: float = 0.95,
    resamples: int = RESAMPLES,
    seed: int = 0,
) -> tuple[float, float, float]:
    """(mean of b − a, low, high): the percentile bootstrap interval of the mean paired
    difference, resampling the pairs (tasks) with replacement, seeded."""
    if len(a) != len(b):
        raise ValueError("paired samples must have the same length")
    if not a:
        raise ValueError("no pairs")
    diffs = [y - x for x, y in zip(a, b, strict=True)]
    low, high = bootstrap_ci(diffs, confidence=confidence, resamples=resamples, seed=seed)
    return sum(diffs) / len(diffs), low, high


PERMUTATIONS = 10_000
"""Random sign flips of a permutation test with too many non-zero differences to enumerate."""

EXACT_UP_TO = 14
"""Up to this many non-zero differences, every sign assignment is enumerated (2^14)."""


def paired_permutation(
    a: Sequence[float],
    b: Sequence[float],
    *,
    resamples: int = PERMUTATIONS,
    seed: int = 0,
) -> float:
    """Two-sided p-value of a paired sign-flip permutation test of mean(b − a) = 0, with
    the pair (a task) as the unit.

    Under "no difference" each task's difference d_i = b_i − a_i is as likely to have come
    out with the other sign, so p is the share of the 2^m sign assignments of the m non-zero
    differences whose |Σ d| is at least the observed one: enumerated exactly for m up to
    EXACT_UP_TO, else estimated from `resamples` seeded random assignments as
    (1 + hits) / (1 + resamples), which never reports 0. Tasks that did not change carry no
    evidence either way; with none changed, p = 1.
    """
    if len(a) != len(b):
        raise ValueError("paired samples must have the same length")
    diffs = [y - x for x, y in zip(a, b, strict=True) if y != x]
    if not diffs:
        return 1.0
    observed = abs(sum(diffs)) - 1e-12
    if len(diffs) <= EXACT_UP_TO:
        hits = 0
        for signs in range(1 << len(diffs)):
            total = sum(-d if signs >> i & 1 else d for i, d in enumerate(diffs))
            hits += abs(total) >= observed
        return hits / (1 << len(diffs))
    rng = random.Random(seed)
    hits = 0
    for _ in range(resamples):
        total = sum(d if rng.random() < 0.5 else -d for d in diffs)
        hits += abs(total) >= observed
    return (1 + hits) / (1 + resamples)
