"""The Reliability Score: a weighted mean of the production-condition metrics that were measured.

A component that was not measured (None) is never counted as 0 or 1: it is left out, listed
under `missing`, and the weights of the measured components are renormalised to sum to 1
(`weights_used`). See docs/metrics.md, "Production conditions".
"""

from __future__ import annotations

import math
from collections.abc import Mapping
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
