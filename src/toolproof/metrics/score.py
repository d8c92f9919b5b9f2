"""The Reliability Score: a weighted mean of the production-condition metrics that were measured.

A component that was not measured (None) is never counted as 0 or 1: it is left out, listed
under `missing`, and the weights of the measured components are renormalised to sum to 1
(`weights_used`). See docs/metrics.md, "Production conditions".
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from toolproof.errors import MetricError
from toolproof.metrics.compute import RECORDED, Measured, computes
from toolproof.spec.metrics import CATALOGUE, DECLARED, PASS_HAT, Condition, MetricDef
from toolproof.spec.variants import VariantKey

if TYPE_CHECKING:
    from toolproof.metrics.compute import ModelFacts


def part_names() -> list[str]:
    """The score's parts as suite.yaml's `score.weights` names them, heaviest default first."""
    return [part.generic for part in CATALOGUE.score_parts()]


def measured_parts(facts: ModelFacts, pass_k: float | None) -> dict[str, float | None]:
    """Each part of the score as measured: pass^k as given (taken on the clean trials at
    the score's k), every other part as its compute function gives it."""
    out: dict[str, float | None] = {}
    for part in CATALOGUE.score_parts():
        if part.per_k:
            out[part.generic] = pass_k
            continue
        computation = RECORDED.computation(part.name)
        found = computation.compute(facts).values if computation is not None else {}
        out[part.generic] = found.get(part.name)
    return out


def reliability_score(
    components: Mapping[str, float | None], weights: Mapping[str, float]
) -> dict[str, Any]:
    """Σ w_i·c_i / Σ w_i over the measured components (c_i not None) of the weighted ones.

    The components scored are the names in `weights`; one absent from `components` is
    missing. A component without a weight, an unknown name, a value outside [0, 1] or a
    negative weight is an error. The score is None when no component with a positive
    weight was measured. Names are listed in the order of `part_names()`.

    Returns {"reliability_score", "components": {name: value or None}, "weights": {given},
    "weights_used": {measured name: renormalised weight}, "missing": [names]}.
    """
    names = part_names()
    unknown = sorted((set(weights) | set(components)) - set(names))
    if unknown:
        raise MetricError(f"unknown score components {unknown}; use {sorted(names)}")
    unweighted = sorted(set(components) - set(weights))
    if unweighted:
        raise MetricError(f"score components without a weight: {unweighted}")
    for name, weight in weights.items():
        if not (math.isfinite(weight) and weight >= 0):
            raise MetricError(f"the weight of {name} must be a non-negative number, got {weight}")
    values = {name: components.get(name) for name in names if name in weights}
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


@computes("reliability_score")
def reliability_score_of(facts: ModelFacts) -> Measured:
    """The Reliability Score (docs/metrics.md) with its interval."""
    reliability = facts.reliability
    if reliability is None:
        raise MetricError("the Reliability Score is computed after its parts")
    return Measured(
        {"reliability_score": reliability.reliability_score},
        {"reliability_score": reliability.ci.reliability_score},
    )


NEVER_RUN: Mapping[Condition, str] = {
    "faults": "no faults injected and no tool call failed",
    "drift": "no drift variant run",
    "load": "no load level run",
}
"""Why a part measured under a condition is missing when the run had none of it."""


def _under(name: str) -> Condition | None:
    """The condition (variant kind) a score part is measured under; None for pass^k."""
    part: MetricDef | None = next((d for d in CATALOGUE.score_parts() if d.generic == name), None)
    return part.under if part is not None else None


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
    if why_not and PASS_HAT.generic in missing:
        notes.append(f"pass^k is missing: {why_not}")
    others = [name for name in missing if _under(name)]
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
    return {kind for key in variants for kind in VariantKey.parse(key).kinds()}


def _why_missing(name: str, variants: Sequence[str]) -> str:
    kind = _under(name)
    if kind is None:
        return ""
    if kind not in _kinds(variants):
        return NEVER_RUN[kind]
    if kind == "faults":
        return "no tool call failed"
    return f"no trial under {kind} was counted"


def _how_to_measure(
    missing: Sequence[str], variants: Sequence[str], conditions: Sequence[str]
) -> list[str]:
    ran, declared = _kinds(variants), _kinds(conditions)
    runnable = [n for n in missing if _under(n) in declared - ran]
    absent = [n for n in missing if _under(n) not in declared]
    notes = []
    if runnable:
        notes.append(f"run with --profile full to measure {_listed(runnable, 'and')}")
    if absent:
        kinds = [kind for n in absent if (kind := _under(n))]
        nouns = _listed([DECLARED[kind] for kind in kinds], "or")
        sections = _listed([f"`{kind}:`" for kind in kinds], "and")
        notes.append(
            f"the suite declares no {nouns}: add {sections} to suite.yaml to measure "
            f"{_listed(absent, 'and')} (docs/conditions.md)"
        )
    return notes


def _listed(items: Sequence[str], last: str) -> str:
    """`a`, `a and b`, `a, b and c`."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} {last} {items[-1]}"
