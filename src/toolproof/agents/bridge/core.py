"""The bridge of one trial: where its agent's SDK calls go, and how each is recorded.

A `Bridge` belongs to one trial of a Python agent. While the agent runs, `bridging` makes it
the active bridge of the running context (a context variable, so trials that run at once on
one event loop never see each other's), and the patched SDK methods (`bridge/patch.py`) hand
it every call. With a model of the run's it answers the call itself (`route`); without one
the call goes where the agent sent it and the bridge records what came back.
"""

from __future__ import annotations

import asyncio
import contextvars
import itertools
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from toolproof.errors import AgentFailure, InfraError
from toolproof.models.base import ContextOverflow, Message, ModelClient, ModelResponse
from toolproof.models.pricing import PriceTable
from toolproof.seeds import stream_seed
from toolproof.tools.base import ToolSchema
from toolproof.transcript import ModelCallEvent, Transcript

T = TypeVar("T")


class RequestError(Exception):
    """The agent's request cannot be read: a message without a role, a tool without a name."""


class Wire(Protocol):
    """One SDK API as the bridge speaks it: its request read into toolproof's types, a model
    response written as the SDK's own response type, and the SDK's response read back."""

    api: str

    def request(
        self, params: dict[str, Any], bridge: Bridge
    ) -> tuple[list[Message], list[ToolSchema]]: ...

    def answer(
        self, response: ModelResponse, model: str, messages: list[Message], bridge: Bridge
    ) -> Any: ...

    def read(self, answer: Any) -> ModelResponse | None: ...


@dataclass
class Bridge:
    """One trial's model calls made by its agent's own SDK clients."""

    transcript: Transcript
    seed: int
    max_steps: int
    model: ModelClient | None = None
    """The run's model, which answers every call; None: calls go where the agent sends them."""
    prices: PriceTable = field(default_factory=PriceTable)
    steps: int = 0
    failure: AgentFailure | InfraError | None = None
    """What ended the trial inside an SDK call: raised again when the agent returns, even if
    its own code caught it."""
    conversations: dict[str, list[Message]] = field(default_factory=dict)
    """The Responses API's conversations by response id (for `previous_response_id`)."""
    loop: asyncio.AbstractEventLoop | None = None
    ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    def fail(self, exc: AgentFailure | InfraError) -> AgentFailure | InfraError:
        self.failure = self.failure or exc
        return exc

    def begin(self) -> tuple[int, float]:
        """Count a model turn against `max_steps`; (its number, its start on the trial clock)."""
        if self.steps >= self.max_steps:
            raise self.fail(
                AgentFailure("max_steps", f"cut after {self.steps} model turns (max_steps)")
            )
        self.steps += 1
        return self.steps, self.transcript.now()

    def record(self, started: float, model: str, response: ModelResponse) -> None:
        message = response.message
        self.transcript.add(
            ModelCallEvent(
                t=started,
                model=model,
                content=message.content,
                tool_calls=message.tool_calls,
                usage=response.usage,
                latency_s=response.latency_s,
                cost_usd=response.cost_usd,
                stop_reason=response.stop_reason,
            )
        )

    async def route(self, wire: Wire, params: dict[str, Any]) -> Any:
        """Answer an SDK call with the run's model, as the SDK's own response type."""
        model = self.model
        assert model is not None, "route() needs the run's model"
        if params.get("stream"):
            raise self.fail(
                AgentFailure(
                    "agent_error",
                    f"the model bridge answers {wire.api} without streaming: call create() "
                    "without stream=True",
                )
            )
        try:
            messages, tools = wire.request(params, self)
        except (RequestError, KeyError, TypeError, ValueError, AttributeError) as exc:
            raise self.fail(
                AgentFailure(
                    "agent_error", f"the model bridge cannot read the {wire.api} request: {exc}"
                )
            ) from None
        step, started = self.begin()
        try:
            response = await model.generate(
                messages, tools, seed=stream_seed(self.seed, "model", step)
            )
        except ContextOverflow as exc:
            raise self.fail(
                AgentFailure("context_overflow", f"context window exceeded: {exc}")
            ) from None
        except InfraError as exc:
            raise self.fail(exc) from None
        self.record(started, model.name, response)
        return wire.answer(response, model.name, messages, self)

    def passed(self, wire: Wire, model: str, answer: Any, started: float, clock: float) -> None:
        """Record a call that went where the agent sent it, from the SDK's own answer."""
        response = wire.read(answer)
        if response is None:  # a stream: nothing to read until the agent has read it
            return
        latency = round(time.perf_counter() - clock, 6)
        cost = self.prices.cost(model, response.usage)
        timed = response.model_copy(update={"latency_s": latency, "cost_usd": cost})
        self.record(started, model, timed)

    def run_blocking(self, call: Callable[[], Awaitable[T]]) -> T:
        """Run a routed call for a sync SDK client: on the trial's loop when called from
        another thread, else (a sync client blocking the loop itself) on the bridge's own
        loop in its own thread, which the caller's context follows."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            if self.loop is not None and self.loop.is_running():
                return asyncio.run_coroutine_threadsafe(_awaited(call), self.loop).result()
            return asyncio.run(_awaited(call))
        return asyncio.run_coroutine_threadsafe(_awaited(call), _side_loop()).result()


_side: asyncio.AbstractEventLoop | None = None
_side_lock = threading.Lock()


def _side_loop() -> asyncio.AbstractEventLoop:
    """One event loop on a daemon thread for the process, started on first use: where a sync
    client's call runs while it blocks its own loop. Kept, not made per call, because a new
    thread and loop per call cost more than the rest of the bridge (~0.5 ms)."""
    global _side
    with _side_lock:
        if _side is None:
            loop = asyncio.new_event_loop()
            thread = threading.Thread(target=loop.run_forever, name="model-bridge", daemon=True)
            thread.start()
            _side = loop
    return _side


async def _awaited(call: Callable[[], Awaitable[T]]) -> T:
    return await call()


_ACTIVE: contextvars.ContextVar[Bridge | None] = contextvars.ContextVar(
    "toolproof_bridge", default=None
)


def active() -> Bridge | None:
    """The bridge of the trial whose agent is running here, if any."""
    return _ACTIVE.get()


@contextmanager
def bridging(bridge: Bridge) -> Iterator[Bridge]:
    """Route the SDK calls made inside (and in tasks started inside) through `bridge`."""
    try:
        bridge.loop = asyncio.get_running_loop()
    except RuntimeError:
        bridge.loop = None
    token = _ACTIVE.set(bridge)
    try:
        yield bridge
    finally:
        _ACTIVE.reset(token)
