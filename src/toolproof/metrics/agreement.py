"""How far the automated graders agree with people, and people with each other.

Each labelled item is one criterion of one trial: `outcome` (the code graders' verdict, the
trial's outcome) or a rubric criterion (the judge model's verdict). Per grader, over every
(item, labeller) pair: Cohen's kappa, Krippendorff's alpha (nominal; the grader and each
labeller are coders of the item), and the true- and false-positive rates with the human label
as the truth ("pass" is positive). Between people, over items two or more labelled: kappa over
every pair of their labels (labellers in name order) and alpha, pooled over every criterion
and per criterion (people may agree on the outcome and not on politeness). Intervals are
percentile bootstraps over tasks, seeded: a task's trials share what makes them easy or hard.
A statistic the labels cannot support is None, with the reason beside it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

from toolproof.metrics.stats import CONFIDENCE, RESAMPLES, percentile_interval, resample_indices

MIN_PAIRS = 5
"""Fewer paired labels than this give no statistic: a kappa over three pairs is noise."""
MIN_TASKS = 2
"""Tasks needed for an interval: with one, every resample repeats it."""

Pair = tuple[bool, bool]
"""(one coder's verdict, the other's): the grader's and a person's, or two people's."""


@dataclass(frozen=True)
class Item:
    """One labelled criterion of one trial: its task, the automated verdict (None where the
    grader gave none: an infra error) and each labeller's label."""

    task: str
    grader: str
    automated: bool | None
    humans: Mapping[str, bool]


def cohen_kappa(pairs: Sequence[Pair]) -> float | None:
    """(observed − chance agreement) / (1 − chance); None when chance agreement is 1 (both
    coders always gave the one same answer) or there are no pairs."""
    n = len(pairs)
    if n == 0:
        return None
    observed = sum(a == b for a, b in pairs) / n
    first = sum(a for a, _ in pairs) / n
    second = sum(b for _, b in pairs) / n
    chance = first * second + (1 - first) * (1 - second)
    if chance >= 1:
        return None
    return (observed - chance) / (1 - chance)


def krippendorff_alpha(units: Sequence[Sequence[bool]]) -> float | None:
    """Nominal alpha, 1 − (n − 1)·Σ_{c≠k} o_ck / Σ_{c≠k} n_c·n_k over the units with two or
    more values; None when every value is the same (no disagreement is possible)."""
    coincide = {(c, k): 0.0 for c in (True, False) for k in (True, False)}
    for values in units:
        m = len(values)
        if m < 2:
            continue
        for i, a in enumerate(values):
            for j, b in enumerate(values):
                if i != j:
                    coincide[(a, b)] += 1 / (m - 1)
    n = sum(coincide.values())
    passes = coincide[(True, True)] + coincide[(True, False)]
    fails = n - passes
    expected = 2 * passes * fails
    if expected == 0:
        return None
    return 1 - (n - 1) * (coincide[(True, False)] + coincide[(False, True)]) / expected


def positive_rate(pairs: Sequence[Pair], truth: bool) -> float | None:
    """The share of pairs the grader passed among those whose human label is `truth`: the
    true-positive rate (truth pass) or the false-positive rate (truth fail)."""
    chosen = [grader for grader, human in pairs if human == truth]
    return sum(chosen) / len(chosen) if chosen else None


Statistic = Callable[[Sequence[Pair]], float | None]


def task_interval(
    by_task: Mapping[str, Sequence[Pair]],
    statistic: Statistic,
    *,
    seed: int = 0,
    resamples: int = RESAMPLES,
) -> list[float] | None:
    """A percentile bootstrap interval of the statistic, drawing tasks with replacement (a
    draw where it is undefined is left out), widened to reach the point value."""
    tasks = sorted(by_task)
    point = statistic([p for t in tasks for p in by_task[t]])
    if point is None or len(tasks) < MIN_TASKS:
        return None
    draws = []
    for positions in resample_indices(len(tasks), resamples=resamples, seed=seed):
        value = statistic([p for i in positions for p in by_task[tasks[i]]])
        if value is not None:
            draws.append(value)
    if not draws:
        return None
    low, high = percentile_interval(draws, CONFIDENCE)
    return [min(low, point), max(high, point)]


def _measure(
    name: str,
    statistic: Statistic,
    by_task: Mapping[str, Sequence[Pair]],
    out: dict[str, Any],
    why_none: str,
    seed: int,
) -> None:
    """Put the statistic and its interval into `out`, or None and the reason."""
    pairs = [p for task in by_task.values() for p in task]
    value = statistic(pairs)
    out[name] = value
    out[f"{name}_interval"] = task_interval(by_task, statistic, seed=seed)
    if value is None:
        out["not_measured"][name] = why_none
    elif out[f"{name}_interval"] is None:
        out["not_measured"][f"{name}_interval"] = f"needs labels on at least {MIN_TASKS} tasks"


def _few(out: dict[str, Any], names: Sequence[str], reason: str) -> dict[str, Any]:
    for name in names:
        out[name] = None
        out["not_measured"][name] = reason
    return out


def grader_agreement(items: Sequence[Item], *, seed: int = 0) -> dict[str, Any]:
    """One grader against the people who labelled its items."""
    by_task: dict[str, list[Pair]] = {}
    units: list[list[bool]] = []
    for item in items:
        if item.automated is None or not item.humans:
            continue
        by_task.setdefault(item.task, []).extend(
            (item.automated, label) for label in item.humans.values()
        )
        units.append([item.automated, *item.humans.values()])
    pairs = sum(len(p) for p in by_task.values())
    out: dict[str, Any] = {"items": len(units), "pairs": pairs, "not_measured": {}}
    names = ("cohen_kappa", "krippendorff_alpha", "true_positive_rate", "false_positive_rate")
    if pairs < MIN_PAIRS:
        shown = f"{pairs} labelled pair" + ("" if pairs == 1 else "s")
        return _few(out, names, f"only {shown}; at least {MIN_PAIRS} needed")
    same = "the grader and the people gave one same answer throughout"
    _measure("cohen_kappa", cohen_kappa, by_task, out, same, seed)
    out["krippendorff_alpha"] = krippendorff_alpha(units)
    if out["krippendorff_alpha"] is None:
        out["not_measured"]["krippendorff_alpha"] = "every verdict and label is the same"
    _measure(
        "true_positive_rate",
        lambda p: positive_rate(p, True),
        by_task,
        out,
        "no item a person passed",
        seed,
    )
    _measure(
        "false_positive_rate",
        lambda p: positive_rate(p, False),
        by_task,
        out,
        "no item a person failed",
        seed,
    )
    return out


def human_agreement(items: Sequence[Item], *, seed: int = 0) -> dict[str, Any]:
    """People against each other, on the items two or more of them labelled."""
    by_task: dict[str, list[Pair]] = {}
    units: list[list[bool]] = []
    for item in items:
        if len(item.humans) < 2:
            continue
        ordered = [item.humans[name] for name in sorted(item.humans)]
        by_task.setdefault(item.task, []).extend(combinations(ordered, 2))
        units.append(ordered)
    pairs = sum(len(p) for p in by_task.values())
    out: dict[str, Any] = {"items": len(units), "pairs": pairs, "not_measured": {}}
    if pairs < MIN_PAIRS:
        return _few(
            out,
            ("cohen_kappa", "krippendorff_alpha"),
            f"only {pairs} pairs of labels by two people on one item; at least {MIN_PAIRS} needed",
        )
    _measure("cohen_kappa", cohen_kappa, by_task, out, "everyone gave one same answer", seed)
    out["krippendorff_alpha"] = krippendorff_alpha(units)
    if out["krippendorff_alpha"] is None:
        out["not_measured"]["krippendorff_alpha"] = "every label is the same"
    return out


def agreement(items: Sequence[Item], *, seed: int = 0) -> dict[str, Any]:
    """Every grader's agreement with people (by grader name, `outcome` first), and people's
    with each other: pooled over the criteria (`humans`) and per criterion
    (`humans_by_criterion`, in the graders' order)."""
    graders = sorted({item.grader for item in items}, key=lambda g: (g != "outcome", g))
    by_grader = {grader: [i for i in items if i.grader == grader] for grader in graders}
    return {
        "labellers": sorted({name for item in items for name in item.humans}),
        "graders": {
            grader: grader_agreement(chosen, seed=seed) for grader, chosen in by_grader.items()
        },
        "humans": human_agreement(items, seed=seed),
        "humans_by_criterion": {
            grader: human_agreement(chosen, seed=seed) for grader, chosen in by_grader.items()
        },
    }
