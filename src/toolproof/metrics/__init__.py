"""Metrics: pure functions over stored results."""

from toolproof.metrics.breakdown import TaskMeta, by_tag, by_tier
from toolproof.metrics.passk import (
    TaskTrials,
    pass_at_k,
    pass_hat_k,
    pass_hat_k_strict,
    summarize,
)
from toolproof.metrics.stats import bootstrap_ci
from toolproof.metrics.summary import summarize_run

__all__ = [
    "TaskMeta",
    "TaskTrials",
    "bootstrap_ci",
    "by_tag",
    "by_tier",
    "pass_at_k",
    "pass_hat_k",
    "pass_hat_k_strict",
    "summarize",
    "summarize_run",
]
