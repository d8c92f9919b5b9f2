"""Retries with backoff, and an adaptive concurrency limit, around any ModelClient.

Adapters raise `ProviderError` (retryable or not) and `ContextOverflow`. `RetryingClient`
retries the retryable ones with exponential backoff and jitter, honouring a provider's
Retry-After as a floor; when the budget is spent, or at once for a non-retryable error (a bad
key, a bad request: a configuration problem, not the agent's fault), it raises `InfraError`.
`ContextOverflow` is the agent's failure and passes through untouched.

`AdaptiveLimiter` bounds the calls in flight to one model: it halves its limit on a 429 and
grows it back by one after a run of successes, up to where it started. Share one limiter
between all the clients of one model in a run.
"""

from __future__ import annotations

import asyncio
import email.utils
import math
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import Literal

from toolproof.errors import InfraError
from toolproof.models.base import Message, ModelClient, ModelResponse, ProviderError
from toolproof.tools.base import ToolSchema


def retryable_status(status: int) -> bool:
    """Whether an HTTP status is worth retrying: timeouts, conflicts, 429 and 5xx (not 501)."""
    return status in (408, 409, 429) or (status >= 500 and status != 501)


def parse_retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds a provider asks us to wait: `retry-after-ms`, or `retry-after` in seconds or
    as an HTTP date. None when absent or unreadable."""
    value = headers.get("retry-after-ms")
    if value is not None:
        try:
            seconds = float(value) / 1000
        except ValueError:
            seconds = math.nan
        if math.isfinite(seconds) and seconds >= 0:
            return seconds
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        current = time.time() if now is None else now
        return max(0.0, when.timestamp() - current)
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


@dataclass(frozen=True)
class RetryPolicy:
    """How many attempts a model call gets, and how long to wait between them.

    The wait after failed attempt n is `base_delay_s * 2**(n-1)`, capped at `max_delay_s`,
    then jittered: "full" draws from [0, cap], "equal" from [cap/2, cap], "none" waits the cap.
    A provider's Retry-After is a floor under that, itself capped at `max_retry_after_s`.
    """

    max_attempts: int = 6
    base_delay_s: float = 0.5
    max_delay_s: float = 30.0
    jitter: Literal["full", "equal", "none"] = "full"
    max_retry_after_s: float = 120.0

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        if self.base_delay_s < 0 or self.max_delay_s < 0 or self.max_retry_after_s < 0:
            raise ValueError("delays must not be negative")

    def delay(self, attempt: int, retry_after: float | None, rng: random.Random) -> float:
        """Seconds to wait after failed attempt `attempt` (1-based)."""
        cap = min(self.max_delay_s, self.base_delay_s * 2 ** min(attempt - 1, 60))
        if self.jitter == "full":
            wait = rng.uniform(0, cap)
        elif self.jitter == "equal":
            wait = cap / 2 + rng.uniform(0, cap / 2)
        else:
            wait = cap
        if retry_after is not None:
            wait = max(wait, min(retry_after, self.max_retry_after_s))
        return wait


class AdaptiveLimiter:
    """A concurrency limit for one model that backs off on rate limits.

    `async with limiter as epoch:` holds one slot. `record_rate_limit(epoch)` halves the
    limit (not below `min_limit`), once per burst: a 429 from a call that started before the
    last reduction is already accounted for. `record_success()` grows the limit by one after
    `grow_after` successes in a row, up to the initial limit. Changes to the limit take
    effect as slots are released.
    """

    def __init__(self, limit: int = 16, *, grow_after: int = 20, min_limit: int = 1) -> None:
        if limit < 1 or min_limit < 1 or min_limit > limit:
            raise ValueError("need 1 <= min_limit <= limit")
        if grow_after < 1:
            raise ValueError("grow_after must be at least 1")
        self.max_limit = limit
        self.min_limit = min_limit
        self.limit = limit
        self.grow_after = grow_after
        self.in_flight = 0
        self.peak_in_flight = 0
        self.epoch = 0
        self._successes = 0
        self._waiting = 0
        self._changed: asyncio.Condition | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def _condition(self) -> asyncio.Condition:
        """The condition slots wait on, made for the running event loop."""
        loop = asyncio.get_running_loop()
        if self._changed is None or self._loop is not loop:
            self._changed, self._loop = asyncio.Condition(), loop
        return self._changed

    async def __aenter__(self) -> int:
        # A free slot and no one waiting: taken at once (nothing else runs between the check
        # and the count on one event loop); otherwise wait in turn.
        if self.in_flight >= self.limit or self._waiting:
            changed = self._condition()
            self._waiting += 1
            try:
                async with changed:
                    await changed.wait_for(lambda: self.in_flight < self.limit)
            finally:
                self._waiting -= 1
        self.in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        return self.epoch

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.in_flight -= 1
        if self._waiting:
            changed = self._condition()
            async with changed:
                changed.notify_all()

    def record_rate_limit(self, epoch: int | None = None) -> None:
        """A call was rate limited; `epoch` is what `async with` gave that call."""
        self._successes = 0
        if epoch is not None and epoch != self.epoch:
            return
        self.limit = max(self.min_limit, self.limit // 2)
        self.epoch += 1

    def record_success(self) -> None:
        self._successes += 1
        if self._successes >= self.grow_after:
            self._successes = 0
            self.limit = min(self.max_limit, self.limit + 1)


Sleep = Callable[[float], Awaitable[object]]


class RetryingClient(ModelClient):
    """Wraps a ModelClient with retries, backoff and an adaptive concurrency limit.

    `attempts` lists the attempts each finished generate() call took (successful or not);
    `retries` counts the retries over all calls; `delays` the waits, in seconds.
    """

    def __init__(
        self,
        inner: ModelClient,
        *,
        policy: RetryPolicy | None = None,
        limiter: AdaptiveLimiter | None = None,
        rng: random.Random | None = None,
        sleep: Sleep | None = None,
    ) -> None:
        self.inner = inner
        self.name = inner.name
        self.policy = policy or RetryPolicy()
        self.limiter = limiter or AdaptiveLimiter()
        self.rng = rng or random.Random()
        self._sleep: Sleep = sleep or asyncio.sleep
        self.attempts: list[int] = []
        self.retries = 0
        self.delays: list[float] = []

    async def generate(
        self, messages: list[Message], tools: list[ToolSchema], *, seed: int | None = None
    ) -> ModelResponse:
        attempt = 0
        while True:
            attempt += 1
            async with self.limiter as epoch:
                try:
                    response = await self.inner.generate(messages, tools, seed=seed)
                except ProviderError as exc:
                    if exc.status == 429:
                        self.limiter.record_rate_limit(epoch)
                    error = exc
                else:
                    self.limiter.record_success()
                    self.attempts.append(attempt)
                    return response
            if not error.retryable:
                self.attempts.append(attempt)
                raise InfraError(f"{self.name}: {error}") from error
            if attempt >= self.policy.max_attempts:
                self.attempts.append(attempt)
                raise InfraError(f"{self.name}: {error} after {attempt} attempts") from error
            wait = self.policy.delay(attempt, error.retry_after, self.rng)
            self.retries += 1
            self.delays.append(wait)
            await self._sleep(wait)
