"""The Reliability Score: a weighted mean of the production-condition metrics that were measured.

A component that was not measured (None) is never counted as 0 or 1: it is left out, listed
under `missing`, and the weights of the measured components are renormalised to sum to 1
(`weights_used`). See docs/metrics.md, "Production conditions".
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from toolproof.errors import MetricError

COMPONENTS: tuple[str, ...] = (
    "pass^k",
    "recovery_rate",
    "completion_under_load",
    "drift_robustness",
)


def reliability_score(
    components: Mapping[str, float | None], weights: Mapping[str, float]
) -> dict[str, Any]:
    """Σ w_i·c_i / Σ w_i over the measured components (c_i not None) of the weighted ones.

    The components scored are the names in `weights`; one absent from `components` is
    missing. A component without a weight, an unknown name, a value outside [0, 1] or a
    negative weight is an error. The score is None when no component with a positive
    weight was measured. Names are listed in the order of `COMPONENTS`.

    Returns {"reliability_score", "components": {name: value or None}, "weights": {given},
    "weights_used": {measured name: renormalised weight}, "missing": [names]}.
    """
    unknown = sorted((set(weights) | set(components)) - set(COMPONENTS))
    if unknown:
        raise MetricError(f"unknown score components {unknown}; use {sorted(COMPONENTS)}")
    unweighted = sorted(set(components) - set(weights))
    if unweighted:
        raise MetricError(f"score components without a weight: {unweighted}")
    for name, weight in weights.items():
        if not (math.isfinite(weight) and weight >= 0):
            raise MetricError(f"the weight of {name} must be a non-negative number, got {weight}")
    values = {name: components.get(name) for name in COMPONENTS if name in weights}
    for name, value in values.items():
        if value is not None and not (math.isfinite(value) and 0.0 <= value <= 1.0):
            raise MetricError(f"{name} must be between 0 and 1 or not measured, got {value}")
    measured = {name: v for name, v in values.items() if v is not None}
    total = sum(weights[name] for name in measured)
    used = {name: weights[name] / total for name in measured} if total > 0 else {}
    score = None
    if total > 0:
        counted = [v for name, v in measured.items() if weights[name] > 0]
        raw = sum(weights[name] * v for name, v in measured.items()) / total
        # a weighted mean lies within its values; clamp away the last bit of rounding
        score = min(max(raw, min(counted)), max(counted))
    return {
        "reliability_score": score,
        "components": values,
        "weights": dict(weights),
        "weights_used": used,
        "missing": [name for name, v in values.items() if v is None],
    }


CONDITIONS = {
    "recovery_rate": ("faults", "fault profile", "no faults injected and no tool call failed"),
    "drift_robustness": ("drift", "drift variant", "no drift variant run"),
    "completion_under_load": ("load", "load levels", "no load level run"),
}
"""The parts measured under a condition: its variant kind (its suite.yaml section), what the
suite declares for it, and why the part is missing when the run had none of it."""


def score_notes(
    reliability: Mapping[str, Any],
    why_not: str = "",
    variants: Sequence[str] = (),
    conditions: Sequence[str] | None = None,
) -> list[str]:
    """What a reader of the score must know: each part it was not built from and why, and
    how to measure it. `variants` are the run's; `conditions` the variants the parts are
    measured under on the suite (None: the run did not store them, so nothing is
    suggested): `--profile full` is suggested only for a part the suite can measure, and
    the suite.yaml section to add for one it cannot."""
    notes = []
    missing = reliability["missing"]
    if why_not and "pass^k" in missing:
        notes.append(f"pass^k is missing: {why_not}")
    others = [name for name in missing if name in CONDITIONS]
    if reliability["reliability_score"] is None or not others:
        return notes
    measured = list(reliability["weights_used"])
    head = (
        f"built from {measured[0]} alone"
        if len(measured) == 1
        else "weights renormalised over the parts measured"
    )
    why = ", ".join(f"{name} ({_why_missing(name, variants)})" for name in others)
    hints = [] if conditions is None else _how_to_measure(others, variants, conditions)
    notes.append("; ".join([f"{head}; not measured: {why}", *hints]))
    return notes


def _kinds(variants: Iterable[str]) -> set[str]:
    """The condition kinds in variant keys: `faults:production+load:200` → faults, load."""
    return {part.partition(":")[0] for key in variants for part in key.split("+") if part}


def _why_missing(name: str, variants: Sequence[str]) -> str:
    kind, _, never_run = CONDITIONS[name]
    if kind not in _kinds(variants):
        return never_run
    if kind == "faults":
        return "no tool call failed"
    return f"no trial under {kind} was counted"


def _how_to_measure(
    missing: Sequence[str], variants: Sequence[str], conditions: Sequence[str]
) -> list[str]:
    ran, declared = _kinds(variants), _kinds(conditions)
    runnable = [n for n in missing if CONDITIONS[n][0] in declared - ran]
    absent = [n for n in missing if CONDITIONS[n][0] not in declared]
    notes = []
    if runnable:
        notes.append(f"run with --profile full to measure {_listed(runnable, 'and')}")
    if absent:
        nouns = _listed([CONDITIONS[n][1] for n in absent], "or")
        sections = _listed([f"`{CONDITIONS[n][0]}:`" for n in absent], "and")
        notes.append(
            f"the suite declares no {nouns}: add {sections} to suite.yaml to measure "
            f"{_listed(absent, 'and')} (docs/conditions.md)"
        )
    return notes


def _listed(items: Sequence[str], last: str) -> str:
    """`a`, `a and b`, `a, b and c`."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} {last} {items[-1]}"
