"""Shared capacity under load: what every concurrent trial of a load level competes for.

Each tool has a token bucket (a rate limit shared by all trials: an empty bucket answers 429)
and a simple queueing model: up to `servers` calls are served at the base latency; beyond
that, latency grows in proportion to the calls in flight. Times are in service seconds; the
gateway's time scale compresses them for CI.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from toolproof.spec.conditions import Capacity
from toolproof.tools.base import ToolResult


@dataclass
class Bucket:
    """A token bucket refilled at `rate` tokens per (scaled) second."""

    rate: float | None
    size: int
    tokens: float = field(init=False)
    stamp: float = field(default_factory=time.monotonic)

    def __post_init__(self) -> None:
        self.tokens = float(self.size)

    def take(self, now: float) -> bool:
        if self.rate is None:
            return True
        self.tokens = min(self.size, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False


@dataclass
class ToolCapacity:
    capacity: Capacity
    bucket: Bucket
    in_flight: int = 0
    calls: int = 0
    rejected: int = 0
    peak: int = 0


class SharedCapacity:
    """The capacity of every tool, shared by all trials of one load level."""

    def __init__(self, capacities: dict[str, Capacity], time_scale: float = 1.0) -> None:
        self.capacities = capacities
        self.time_scale = time_scale
        self.tools: dict[str, ToolCapacity] = {}

    def of(self, tool: str) -> ToolCapacity | None:
        if tool not in self.tools:
            capacity = self.capacities.get(tool) or self.capacities.get("*")
            if capacity is None:
                return None
            rate = None if capacity.rate_per_s is None else capacity.rate_per_s / self.time_scale
            self.tools[tool] = ToolCapacity(capacity, Bucket(rate, capacity.burst))
        return self.tools[tool]

    def admit(self, tool: str) -> tuple[float, ToolResult | None]:
        """(queueing delay in real seconds, a 429 when the shared rate limit is spent)."""
        state = self.of(tool)
        if state is None:
            return 0.0, None
        state.calls += 1
        if not state.bucket.take(time.monotonic()):
            state.rejected += 1
            return 0.0, ToolResult(
                content={
                    "error": {
                        "status": 429,
                        "message": "Too Many Requests: shared rate limit reached",
                        "retry_after_s": state.capacity.retry_after_s,
                    }
                },
                is_error=True,
                error_kind="rate_limit",
            )
        state.in_flight += 1
        state.peak = max(state.peak, state.in_flight)
        factor = max(1.0, state.in_flight / state.capacity.servers)
        return state.capacity.latency_ms / 1000 * factor * self.time_scale, None

    def release(self, tool: str) -> None:
        state = self.tools.get(tool)
        if state is not None:
            state.in_flight -= 1
