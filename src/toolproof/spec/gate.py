"""`gate:` in suite.yaml, and the one grammar of metric names a gate may hold a run to.

The same names serve `toolproof gate --min/--max` and `toolproof run --fail-under` (which is
shorthand for `--min`): every gateable metric of the catalogue (`toolproof.spec.metrics`), a
family by its template (pass^K, persona.NAME.pass@1, checkpoint.N.pass^K, ...).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, Field, StrictInt

from toolproof.spec.base import Strict
from toolproof.spec.metrics import (
    CATALOGUE,
    COST_PER_TASK_USD,
    INFRA_ERROR_SHARE,
    UnknownMetric,
)


def check_metric(name: str) -> str:
    """A metric name a gate may use, or ValueError saying which ones exist."""
    try:
        definition = CATALOGUE.read(name).definition
    except UnknownMetric:
        raise ValueError(f"unknown metric '{name}'; use {CATALOGUE.grammar()}") from None
    if not definition.gateable:
        raise ValueError(f"{name} is shown, not gated; use {CATALOGUE.grammar()}")
    return name


def k_of(name: str) -> int | None:
    """The k a metric name is computed at (pass^5 -> 5), if any."""
    try:
        return CATALOGUE.read(name).k
    except UnknownMetric:
        return None


GateMetric = Annotated[str, AfterValidator(check_metric)]


class GateSpec(Strict):
    """`gate:` in suite.yaml: what a run must show before its model may ship."""

    min: dict[GateMetric, float] = Field(
        default_factory=dict,
        description="Metric -> floor: every model's value must be at least this.",
    )
    max: dict[GateMetric, float] = Field(
        default_factory=dict,
        description="Metric -> ceiling: every model's value must be at most this.",
    )
    max_regression: float | None = Field(
        None,
        ge=0,
        le=1,
        description="Against a baseline run: the largest drop of pass@1 or pass^k allowed "
        "when the paired test over tasks finds it significant (default 0.03 with --baseline).",
    )
    max_regressed_tasks: StrictInt | None = Field(
        None,
        ge=0,
        description="Against a baseline run: how many tasks may regress significantly (Fisher's "
        "exact test per task, Holm-corrected over the tasks; default 0 with --baseline).",
    )
    max_infra_error_share: float | None = Field(
        None, ge=0, le=1, description="Share of trials that may end as infra errors."
    )
    max_cost_per_task: float | None = Field(
        None, ge=0, description="USD per task: the model's cost_usd divided by its tasks."
    )
    alpha: float = Field(
        0.05, gt=0, lt=1, description="Significance level of the regression tests."
    )

    def floors(self) -> dict[str, float]:
        return dict(self.min)

    def ceilings(self) -> dict[str, float]:
        out = dict(self.max)
        if self.max_cost_per_task is not None:
            out.setdefault(COST_PER_TASK_USD.name, self.max_cost_per_task)
        if self.max_infra_error_share is not None:
            out.setdefault(INFRA_ERROR_SHARE.name, self.max_infra_error_share)
        return out

    def is_empty(self) -> bool:
        return not (
            self.floors()
            or self.ceilings()
            or self.max_regression is not None
            or self.max_regressed_tasks is not None
        )

    def ks(self) -> list[int]:
        """The k values the gate's metrics name, so the summary computes them."""
        names = list(self.floors()) + list(self.ceilings())
        return sorted({k for name in names if (k := k_of(name)) is not None})
