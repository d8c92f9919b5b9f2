"""How many trials per task the per-task regression test needs.

The test is Fisher's exact test, one-sided, with Holm's correction over the tasks
(`toolproof.metrics.stats`). Its power is computed exactly, by enumerating the binomial
outcomes of both runs. The gate warns with `trials_needed` when a run is too
small for any task to be flagged; `bench/regression_power.py` prints the power table of
docs/ci.md with `trials_for_power`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from itertools import accumulate

from toolproof.metrics.stats import fisher_regression_p

POWER = Fraction(4, 5)
"""The power the table asks for: a real regression is flagged four times in five."""


def collapse_detectable(trials: int, tasks: int, alpha: Fraction) -> bool:
    """Whether a task going from all passes to none, with `trials` trials in each run, is
    flagged among `tasks` tasks. It is the strongest evidence one task can give, and Holm's
    correction multiplies the smallest p by the number of tasks: when this is not below
    alpha, no regression of any task can be flagged."""
    if trials < 1:
        return False
    return tasks * fisher_regression_p(trials, trials, 0, trials) < alpha


def trials_to_detect_collapse(tasks: int, alpha: Fraction) -> int:
    """The fewest trials per task (in each run) at which a task going from all passes to
    none is flagged among `tasks` tasks: 4 for one task at alpha 0.05, 6 for thirty."""
    trials = 1
    while not collapse_detectable(trials, tasks, alpha):
        trials += 1
    return trials


def trials_needed(trials: Sequence[int], alpha: Fraction) -> int | None:
    """For tasks with these numbers of trials (one count per task): None when even the task
    with the fewest could be flagged by going from all passes to none, else the trials per
    task that would let it."""
    if not trials or collapse_detectable(min(trials), len(trials), alpha):
        return None
    return trials_to_detect_collapse(len(trials), alpha)


def regression_power(
    before: Fraction, after: Fraction, trials: int, tasks: int, alpha: Fraction
) -> Fraction:
    """The chance that a task whose pass rate drops from `before` to `after` is flagged,
    with `trials` trials in each run and the other tasks unchanged: that its Fisher p times
    the number of tasks is below alpha (Holm's first step; Holm flags it at least this
    often). Exact: the sum over every pair of pass counts of their binomial probability.

    Fisher's p falls as the baseline's passes rise and rises with the candidate's, so for
    each baseline count the flagged candidate counts are 0 up to a largest one, and that
    largest one never falls as the baseline count rises."""
    level = alpha / tasks
    candidate = list(accumulate(_binomial(trials, k, after) for k in range(trials + 1)))
    power = Fraction(0)
    largest = -1
    for passed in range(trials + 1):
        while largest < trials and fisher_regression_p(passed, trials, largest + 1, trials) < level:
            largest += 1
        if largest >= 0:
            power += _binomial(trials, passed, before) * candidate[largest]
    return power


def trials_for_power(
    before: Fraction,
    after: Fraction,
    tasks: int,
    alpha: Fraction,
    power: Fraction = POWER,
) -> int:
    """The fewest trials per task (in each run) at which a drop from `before` to `after` is
    flagged with at least `power` among `tasks` tasks. Exact tests are discrete, so one
    more trial can lower the power a little: this is the first count that reaches it."""
    if not 0 <= after < before <= 1:
        raise ValueError("a regression needs 0 <= after < before <= 1")
    trials = trials_to_detect_collapse(tasks, alpha)
    while regression_power(before, after, trials, tasks, alpha) < power:
        trials += 1
    return trials


def _binomial(trials: int, passed: int, rate: Fraction) -> Fraction:
    return math.comb(trials, passed) * rate**passed * (1 - rate) ** (trials - passed)
