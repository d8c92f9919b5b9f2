"""`gate:` in suite.yaml, and the one grammar of metric names a gate may hold a run to.

The same names serve `toolproof gate --min/--max` and `toolproof run --fail-under` (which is
shorthand for `--min`): pass@K, pass^K, pass^K_strict, reliability_tax@K, the named metrics
below, and those of personas and turn checkpoints: persona.NAME.pass@1, persona.NAME.pass^K,
persona.NAME.recovery_turns, checkpoint.N.pass@1, checkpoint.N.pass^K.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, Field, StrictInt

from toolproof.spec.base import Strict

K_METRIC = re.compile(r"^(?:pass@|pass\^|reliability_tax@)([1-9][0-9]*)(?:_strict)?$")
"""A metric computed at some k; group 1 is k."""

CONVERSATION_METRIC = re.compile(
    r"^(?:persona\.[a-z][a-z0-9_-]*\.(?:pass@1|pass\^(?P<k>[1-9][0-9]*)|recovery_turns)"
    r"|checkpoint\.[1-9][0-9]*\.(?:pass@1|pass\^(?P<ck>[1-9][0-9]*)))$"
)
"""A persona's or a turn checkpoint's metric (docs/metrics.md, "Personas and long
conversations"); group k or ck is the k of a pass^K."""

NAMED_METRICS = frozenset(
    {
        "reliability_score",
        "recovery_rate",
        "loop_rate",
        "corrective_action",
        "drift_robustness",
        "completion_under_load",
        "policy_adherence",
        "cost_usd",
        "cost_per_pass_usd",
        "cost_per_task_usd",
        "user_cost_usd",
        "tokens_input",
        "tokens_output",
        "latency_p50_s",
        "latency_p95_s",
        "trial_latency_p50_s",
        "trial_latency_p95_s",
        "tool_calls_per_trial",
        "turns_per_trial",
        "infra_error_share",
        "checkpoint_degradation",
    }
)


def check_metric(name: str) -> str:
    """A metric name a gate may use, or ValueError saying which ones exist."""
    if name in NAMED_METRICS or K_METRIC.match(name) or CONVERSATION_METRIC.match(name):
        return name
    raise ValueError(
        f"unknown metric '{name}'; use pass@K, pass^K, pass^K_strict, reliability_tax@K, "
        "persona.NAME.(pass@1|pass^K|recovery_turns), checkpoint.N.(pass@1|pass^K) or "
        + ", ".join(sorted(NAMED_METRICS))
    )


def k_of(name: str) -> int | None:
    """The k a metric name is computed at (pass^5 -> 5), if any."""
    match = K_METRIC.match(name)
    if match:
        return int(match.group(1))
    found = CONVERSATION_METRIC.match(name)
    k = found and (found.group("k") or found.group("ck"))
    return int(k) if k else None


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
            out.setdefault("cost_per_task_usd", self.max_cost_per_task)
        if self.max_infra_error_share is not None:
            out.setdefault("infra_error_share", self.max_infra_error_share)
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
