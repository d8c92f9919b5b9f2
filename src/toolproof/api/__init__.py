"""The library API: run a suite, validate it, re-grade and gate a run, from a notebook or a
test, with typed results. The command line calls these same functions."""

from toolproof.api.calls import (
    agate,
    aregrade,
    arun,
    avalidate,
    gate,
    regrade,
    run,
    validate,
)
from toolproof.api.results import (
    GateVerdict,
    Measure,
    RegradeResult,
    RunResult,
    ValidationResult,
)

__all__ = [
    "GateVerdict",
    "Measure",
    "RegradeResult",
    "RunResult",
    "ValidationResult",
    "agate",
    "aregrade",
    "arun",
    "avalidate",
    "gate",
    "regrade",
    "run",
    "validate",
]
