"""The per-task regression test: Fisher's exact test (one-sided), Holm's correction over the
tasks, and the exact power of the two, all checked against values computed by hand.

SciPy is not installed with toolproof, so the p-values are checked against the
hypergeometric sums written out below; the power function is checked against hand sums and
against a plain enumeration of every pair of pass counts.
"""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

from toolproof.metrics.power import (
    collapse_detectable,
    regression_power,
    trials_for_power,
    trials_needed,
    trials_to_detect_collapse,
)
from toolproof.metrics.stats import exact, fisher_regression_p, holm_adjusted

ALPHA = Fraction(1, 20)


@pytest.mark.parametrize(
    ("passed_a", "trials_a", "passed_b", "trials_b", "expected"),
    [
        (6, 6, 0, 6, Fraction(1, 924)),  # 1 / C(12, 6): the one table as extreme
        (3, 3, 0, 3, Fraction(1, 20)),  # 1 / C(6, 3)
        (6, 6, 3, 6, Fraction(20, 220)),  # s = 9: C(6, 3) · C(6, 6) / C(12, 9)
        (6, 6, 5, 6, Fraction(6, 12)),  # s = 11: C(6, 5) · C(6, 6) / C(12, 11)
        (5, 6, 1, 6, Fraction(1 + 36, 924)),  # s = 6: (C(6,0)C(6,6) + C(6,1)C(6,5)) / C(12,6)
        (10, 10, 0, 6, Fraction(1, 8008)),  # unequal trials: 1 / C(16, 6)
        (0, 6, 6, 6, Fraction(1)),  # B passed more: no evidence of a regression
        (3, 6, 3, 6, Fraction(1 + 36 + 225 + 400, 924)),  # equal: P[X ≤ 3], s = 6
        (0, 0, 0, 0, Fraction(1)),  # no trials
    ],
)
def test_fisher_regression_p_is_the_hypergeometric_lower_tail(
    passed_a: int, trials_a: int, passed_b: int, trials_b: int, expected: Fraction
) -> None:
    assert fisher_regression_p(passed_a, trials_a, passed_b, trials_b) == expected


def test_fisher_regression_p_by_hand_for_unequal_trials() -> None:
    # A 4/4, B 1/2: s = 5 passes among 6 trials, B's 2 trials hold at least 1 of them;
    # P[X ≤ 1] = C(2, 1) · C(4, 4) / C(6, 5) = 2/6 (X = 0 is impossible: A has only 4 trials).
    assert fisher_regression_p(4, 4, 1, 2) == Fraction(2, 6)


def test_fisher_regression_p_rejects_impossible_counts() -> None:
    for counts in ((7, 6, 0, 6), (1, 6, -1, 6), (1, 6, 3, 2)):
        with pytest.raises(ValueError):
            fisher_regression_p(*counts)


def test_fisher_regression_p_falls_with_the_baseline_and_rises_with_the_candidate() -> None:
    """The monotony `regression_power` relies on, over every table with up to 8 trials."""
    for n in range(1, 9):
        for x in range(n + 1):
            for y in range(n + 1):
                p = fisher_regression_p(x, n, y, n)
                if y < n:
                    assert p <= fisher_regression_p(x, n, y + 1, n)
                if x < n:
                    assert fisher_regression_p(x + 1, n, y, n) <= p


def test_holm_adjusts_step_down_in_the_order_given() -> None:
    p = [Fraction(1, 100), Fraction(4, 100), Fraction(3, 100), Fraction(5, 1000)]
    # sorted: 0.005 · 4 = 0.02, 0.01 · 3 = 0.03, 0.03 · 2 = 0.06, 0.04 · 1 = 0.04 → 0.06
    assert holm_adjusted(p) == [
        Fraction(3, 100),
        Fraction(6, 100),
        Fraction(6, 100),
        Fraction(2, 100),
    ]
    assert holm_adjusted([Fraction(1, 2), Fraction(3, 5)]) == [Fraction(1), Fraction(1)]
    assert holm_adjusted([Fraction(1, 924)] * 5 + [Fraction(1)] * 25) == (
        [Fraction(30, 924)] * 5 + [Fraction(1)] * 25
    )
    assert holm_adjusted([]) == []


def test_exact_reads_a_level_as_the_decimal_written() -> None:
    assert exact(0.05) == Fraction(1, 20)
    assert exact(1e-5) == Fraction(1, 100_000)
    # 1/20 is not below 0.05, though it is below the binary float nearest 0.05
    assert not fisher_regression_p(3, 3, 0, 3) < exact(0.05)


@pytest.mark.parametrize(("tasks", "trials"), [(1, 4), (10, 5), (30, 6), (100, 7)])
def test_trials_to_detect_collapse(tasks: int, trials: int) -> None:
    """A task going n/n → 0/n has p = 1/C(2n, n); Holm multiplies it by the tasks:
    C(8,4) = 70 > 20, C(10,5) = 252 > 200, C(12,6) = 924 > 600, C(14,7) = 3432 > 2000."""
    assert trials_to_detect_collapse(tasks, ALPHA) == trials
    assert collapse_detectable(trials, tasks, ALPHA)
    assert not collapse_detectable(trials - 1, tasks, ALPHA)
    assert math.comb(2 * trials, trials) > 20 * tasks >= math.comb(2 * trials - 2, trials - 1)


def test_trials_needed_looks_at_the_task_with_fewest_trials() -> None:
    assert trials_needed([2] * 30, ALPHA) == 6
    assert trials_needed([6] * 30, ALPHA) is None
    assert trials_needed([6] * 29 + [2], ALPHA) == 6
    assert trials_needed([3], ALPHA) == 4  # p = 1/20 exactly is not below 0.05
    assert trials_needed([], ALPHA) is None


def test_regression_power_by_hand() -> None:
    half = Fraction(1, 2)
    # 4 trials, 1.0 → 0.5: only 4/4 → 0/4 is significant (p = 1/70; 1/4 gives 4/56)
    assert regression_power(Fraction(1), half, 4, 1, ALPHA) == Fraction(1, 16)
    # 5 trials: 5/5 → 0/5 (1/252) and 5/5 → 1/5 (5/210) are, 2/5 (10/120) is not
    assert regression_power(Fraction(1), half, 5, 1, ALPHA) == Fraction(1 + 5, 32)
    # the same among 10 tasks: 5/210 · 10 is no longer below 0.05
    assert regression_power(Fraction(1), half, 5, 10, ALPHA) == Fraction(1, 32)
    assert regression_power(Fraction(1), Fraction(0), 6, 30, ALPHA) == 1
    assert regression_power(Fraction(1), Fraction(0), 5, 30, ALPHA) == 0


@pytest.mark.parametrize(
    ("before", "after", "tasks"),
    [("1", "0.5", 1), ("0.9", "0.5", 1), ("0.8", "0.4", 10), ("0.9", "0.7", 3), ("0.5", "0", 2)],
)
def test_regression_power_is_the_sum_over_every_pair_of_pass_counts(
    before: str, after: str, tasks: int
) -> None:
    b, a = Fraction(before), Fraction(after)

    def binomial(n: int, k: int, rate: Fraction) -> Fraction:
        return math.comb(n, k) * rate**k * (1 - rate) ** (n - k)

    for n in range(1, 11):
        enumerated = sum(
            (
                binomial(n, x, b) * binomial(n, y, a)
                for x in range(n + 1)
                for y in range(n + 1)
                if tasks * fisher_regression_p(x, n, y, n) < ALPHA
            ),
            Fraction(0),
        )
        assert regression_power(b, a, n, tasks, ALPHA) == enumerated


def test_trials_for_power_is_the_first_count_reaching_it() -> None:
    one, half = Fraction(1), Fraction(1, 2)
    n = trials_for_power(one, half, 1, ALPHA)
    assert n == 10
    assert regression_power(one, half, 10, 1, ALPHA) >= Fraction(4, 5)
    assert all(regression_power(one, half, k, 1, ALPHA) < Fraction(4, 5) for k in range(1, 10))
    assert trials_for_power(one, Fraction(0), 30, ALPHA) == 6
    with pytest.raises(ValueError):
        trials_for_power(half, half, 1, ALPHA)
