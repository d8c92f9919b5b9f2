"""Turn checkpoints: pass rates with every task stretched to a conversation length, and how
fast they fall as conversations grow.

Pure: reads stored rows (their `conversation` statistics, metrics/personas.py). A task whose
scripted conversation is already longer than a checkpoint is left out of that checkpoint
(listed under `too_long`), never cut short or counted. See docs/metrics.md, "Personas and
long conversations".
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from toolproof.metrics.compute import Measured, computes, derives
from toolproof.metrics.personas import Outcomes, pass_rates, rates_by_name
from toolproof.metrics.stats import bootstrap_means
from toolproof.spec.variants import VariantKey

if TYPE_CHECKING:
    from toolproof.metrics.compute import ModelFacts
    from toolproof.metrics.summary import ModelSummary

PER_TURNS = 10
"""The degradation is pass@1 lost per this many more user turns."""


def _stats(row: Mapping[str, Any]) -> Mapping[str, Any]:
    return (row.get("conditions") or {}).get("conversation") or {}


def too_long(rows: Sequence[Mapping[str, Any]]) -> set[str]:
    """Tasks some trial of which planned more user turns than its checkpoint's target."""
    return {
        row["task_id"]
        for row in rows
        if (stretch := _stats(row).get("stretch")) and stretch["planned"] > stretch["target"]
    }


def mean_user_turns(rows: Sequence[Mapping[str, Any]]) -> float | None:
    """User turns the trials measured, the mean over tasks of each task's mean."""
    turns: dict[str, list[int]] = defaultdict(list)
    for row in rows:
        if row["outcome"] != "infra_error" and "user_turns" in _stats(row):
            turns[row["task_id"]].append(_stats(row)["user_turns"])
    means = [sum(v) / len(v) for v in turns.values()]
    return sum(means) / len(means) if means else None


def checkpoints_summary(
    by_variant: Mapping[str, Sequence[Mapping[str, Any]]],
    primary: str,
    ks: Sequence[int],
    outcomes: Outcomes,
    seed: int,
) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """Per checkpoint (keyed by its length) run on the primary variant's conditions: pass
    rates with intervals, the user turns measured, the tasks left out; and the degradation
    rate. None when no checkpoint was run."""
    section: dict[str, Any] = {}
    rates: dict[int, dict[str, float]] = {}
    for key, rows in sorted(by_variant.items(), key=lambda item: _turns(item[0])):
        part = VariantKey.parse(key)
        if part.turns is None or part.persona is not None or part.without("turns").key != primary:
            continue
        turns = str(part.turns)
        skipped = too_long(rows)
        kept = [row for row in rows if row["task_id"] not in skipped]
        tasks = [t for t in outcomes(kept) if t.n]
        section[turns] = {
            **pass_rates(tasks, ks, seed),
            "user_turns": mean_user_turns(kept),
            "too_long": sorted(skipped),
        }
        if tasks:
            rates[int(turns)] = {t.task_id: t.c / t.n for t in tasks}
    if not section:
        return None
    return section, degradation(rates, seed)


def _turns(key: str) -> int:
    return VariantKey.parse(key).turns or 0


def degradation(rates: Mapping[int, Mapping[str, float]], seed: int) -> dict[str, Any]:
    """pass@1 lost per PER_TURNS more user turns: minus the least-squares slope of pass@1 on
    the checkpoints' lengths, times PER_TURNS, over the tasks measured at every checkpoint
    (the mean of their own slopes, which is the slope of their mean), with a bootstrap
    interval over those tasks. Positive: longer conversations fail more. Null, with the
    reason, when fewer than two checkpoints were measured or no task is in all of them."""
    out: dict[str, Any] = {"value": None, "ci": None, "per_turns": PER_TURNS, "n_tasks": 0}
    if len(rates) < 2:
        out["reason"] = f"needs two checkpoints or more; {len(rates)} measured"
        return out
    lengths = sorted(rates)
    common = sorted(set.intersection(*(set(rates[n]) for n in lengths)))
    if not common:
        out["reason"] = "no task was measured at every checkpoint"
        return out
    centre = sum(lengths) / len(lengths)
    spread = sum((n - centre) ** 2 for n in lengths)
    drops = [
        -PER_TURNS * sum((n - centre) * rates[n][task] for n in lengths) / spread for task in common
    ]
    out["value"] = sum(drops) / len(drops)
    out["n_tasks"] = len(common)
    if len(common) >= 2:
        out["ci"] = list(bootstrap_means([[d] for d in drops], seed=seed)[0])
    return out


@computes("checkpoint_degradation")
def degradation_rate(facts: ModelFacts) -> Measured:
    """The degradation over the checkpoints run, with its interval; none without them."""
    trend = facts.degradation
    if trend is None:
        return Measured()
    return Measured({"checkpoint_degradation": trend.value}, {"checkpoint_degradation": trend.ci})


@derives("checkpoint.{turns}.pass@1", "checkpoint.{turns}.pass^{k}")
def checkpoint_metrics(entry: ModelSummary) -> Measured:
    """Per checkpoint: pass@1 and pass^K with every conversation at its length."""
    out: dict[str, float | None] = {}
    for turns, row in (entry.checkpoints or {}).items():
        out.update(rates_by_name("checkpoint", turns, row))
    return Measured(out)
