"""The production conditions a run measured, per task and per tier: the columns the
terminal shows next to each task's and each tier's pass rates."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Literal, TypeVar

from toolproof.metrics.sections import ConditionStats

By = Literal["task", "tier"]
Cell = Callable[[By, str], float | None]
"""A column's value for one task or one tier (None where it has none)."""

Row = TypeVar("Row")


def condition_columns(conditions: ConditionStats) -> dict[str, Cell]:
    """Header -> value, for each condition measured: recovery (when a tool call failed),
    drift robustness and its ratio to clean, completion under load and its ratio to the
    baseline level."""
    columns: dict[str, Cell] = {}
    if conditions.recovery.failed_calls:
        recovery = _rows(conditions.recovery_by_task, conditions.recovery_by_tier)
        columns["recovery"] = lambda by, key: _of(recovery(by, key), lambda r: r.recovery_rate)
    if conditions.drift is not None:
        drift = _rows(conditions.drift_by_task, conditions.drift_by_tier)
        columns["drift"] = lambda by, key: _of(drift(by, key), lambda r: r.drift_robustness)
        columns["×clean"] = lambda by, key: _of(drift(by, key), lambda r: r.ratio_to_clean)
    if conditions.load is not None:
        load = _rows(conditions.load_by_task, conditions.load_by_tier)
        columns["load"] = lambda by, key: _of(load(by, key), lambda r: r.completion_under_load)
        columns["×base"] = lambda by, key: _of(load(by, key), lambda r: r.ratio_to_baseline)
    return columns


def _rows(
    by_task: Mapping[str, Row] | None, by_tier: Mapping[str, Row] | None
) -> Callable[[By, str], Row | None]:
    def row(by: By, key: str) -> Row | None:
        return ((by_task if by == "task" else by_tier) or {}).get(key)

    return row


def _of(row: Row | None, value: Callable[[Row], float | None]) -> float | None:
    return None if row is None else value(row)
