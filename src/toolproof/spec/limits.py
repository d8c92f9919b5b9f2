"""The largest values toolproof accepts, from a flag or a suite file: far above what a real
run needs, far below what would exhaust memory or overflow the store's 64-bit integers."""

from __future__ import annotations

import math
from typing import overload

from toolproof.errors import UsageError

MAX_TRIALS = 100_000
"""Trials per task."""
MAX_RUN_TRIALS = 1_000_000
"""Trials in one run: every model, variant, task and trial together (its plan is held in
memory, about 200 bytes a trial)."""
MAX_CONCURRENCY = 10_000
"""Trials at once (--concurrency, a load level): each holds a world, a transcript and a
connection."""
MAX_SEED = 2**63 - 1
"""The largest seed: the store keeps seeds as signed 64-bit integers."""
MAX_STEPS = 100_000
"""Model turns per trial."""
MAX_TOKENS = 10_000_000
"""Output tokens per model call."""
MAX_CALL_TOKENS = 1_000_000_000
"""Tokens of one kind (input, output, cached, reasoning) in one scripted model call."""
MAX_TOOL_CALLS = 10_000_000
"""Tool calls per trial (an expectation's max_tool_calls)."""
MAX_SCRIPT_LATENCY_S = 60.0
"""A scripted model's pause before each turn: it stands in for a real model's latency, and
a longer one only stalls the run."""
MAX_THREADS = 1_024
"""CPU threads of a local model."""
MAX_TURNS = 1_000
"""User turns a conversation is stretched to (--checkpoints)."""
MAX_TIME_SCALE = 1_000.0
"""--time-scale: injected latencies and waits multiplied by at most this."""
MAX_SECONDS = 86_400.0
"""A timeout: one day."""
MAX_COST_USD = 1_000_000.0
"""--max-cost."""
MAX_TRANSCRIPTS_MB = 100_000.0
"""report --transcripts-mb: the trial records embedded in one HTML page."""
MAX_TEMPERATURE = 10.0
"""A model's sampling temperature."""


@overload
def whole(name: str, value: int, low: int, high: int) -> int: ...
@overload
def whole(name: str, value: int | None, low: int, high: int) -> int | None: ...
def whole(name: str, value: int | None, low: int, high: int) -> int | None:
    """A whole number given as `name` (a flag), range-checked; None when not given."""
    if value is not None and not low <= value <= high:
        raise UsageError(f"{name} {value}: give a whole number from {low:,} to {high:,}")
    return value


@overload
def real(name: str, value: float, high: float, *, zero: bool = False) -> float: ...
@overload
def real(name: str, value: float | None, high: float, *, zero: bool = False) -> float | None: ...
def real(name: str, value: float | None, high: float, *, zero: bool = False) -> float | None:
    """A number given as `name` (a flag): finite, above 0 (or 0 itself, with `zero`) and at
    most `high`; None when not given. nan and inf are refused: a run would store them and
    could not be read back."""
    if value is None:
        return None
    if not (math.isfinite(value) and (value > 0 or (zero and value == 0)) and value <= high):
        most = f"{high:,.0f}" if high == int(high) else f"{high:g}"
        span = f"from 0 to {most}" if zero else f"above 0, at most {most}"
        raise UsageError(f"{name} {value}: give a number {span}")
    return value
