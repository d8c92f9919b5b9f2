"""The SDK methods the bridge stands in front of.

`install` replaces `create` on the official clients' resources once per process (sync and
async: OpenAI's chat completions and responses, Anthropic's messages) with a wrapper that
asks for the active bridge: outside a trial's agent there is none and the call is the SDK's
own, untouched; inside, the trial's bridge answers it or records it. A call that goes where
the agent sent it and fails on the provider's side after the SDK's own retries (no
connection, a timeout, a rate limit, a 5xx) ends the trial as `infra_error`, as the run's
own model calls do: the agent's code sees the SDK's exception, and the trial is not counted
against it.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any

from toolproof.agents.bridge.core import Bridge, Wire, active
from toolproof.errors import InfraError

_installed = False


def install() -> None:
    """Put the bridge in front of the SDKs installed (idempotent)."""
    global _installed
    if _installed:
        return
    _installed = True
    try:
        from openai.resources.chat.completions import AsyncCompletions, Completions
        from openai.resources.responses import AsyncResponses, Responses

        from toolproof.agents.bridge.openai_wire import ChatWire, ResponsesWire
    except ImportError:
        pass
    else:
        import openai

        failures = _failures(openai)
        for sync, async_, wire in (
            (Completions, AsyncCompletions, ChatWire()),
            (Responses, AsyncResponses, ResponsesWire()),
        ):
            _wrap(sync, async_, wire, _openai_provider, failures)
    try:
        from anthropic.resources.messages import AsyncMessages, Messages

        from toolproof.agents.bridge.anthropic_wire import MessagesWire
    except ImportError:
        return
    import anthropic

    _wrap(
        Messages, AsyncMessages, MessagesWire(), lambda resource: "anthropic", _failures(anthropic)
    )


def _failures(sdk: Any) -> tuple[type[BaseException], ...]:
    """The SDK's exceptions for a provider that failed, not a request the agent got wrong."""
    names = ("APIConnectionError", "RateLimitError", "InternalServerError")
    return tuple(getattr(sdk, name) for name in names if hasattr(sdk, name))


def _failed(bridge: Bridge, model: str, exc: BaseException) -> None:
    """Mark the trial's infra failure: the provider failed after the SDK's retries."""
    bridge.fail(InfraError(f"{model}: {type(exc).__name__} after the SDK's retries: {exc}"))


Provider = Callable[[Any], str]
"""Names the provider a resource's client calls (for the recorded model and its price)."""


def _openai_provider(resource: Any) -> str:
    client = getattr(resource, "_client", None)
    host = str(getattr(getattr(client, "base_url", None), "host", ""))
    return "openai" if host in ("", "api.openai.com") else "openai-compatible"


def _wrap(
    sync: type,
    async_: type,
    wire: Wire,
    provider: Provider,
    failures: tuple[type[BaseException], ...],
) -> None:
    original_sync: Callable[..., Any] = sync.create  # type: ignore[attr-defined]
    original_async: Callable[..., Any] = async_.create  # type: ignore[attr-defined]

    @functools.wraps(original_sync)
    def create(self: Any, *args: Any, **params: Any) -> Any:
        bridge = active()
        if bridge is None:
            return original_sync(self, *args, **params)
        if bridge.model is not None:
            return bridge.run_blocking(lambda: bridge.route(wire, params))
        _, started = bridge.begin()
        clock = time.perf_counter()
        model = _model(self, params, provider)
        try:
            answer = original_sync(self, *args, **params)
        except failures as exc:
            _failed(bridge, model, exc)
            raise
        bridge.passed(wire, model, answer, started, clock)
        return answer

    @functools.wraps(original_async)
    async def acreate(self: Any, *args: Any, **params: Any) -> Any:
        bridge = active()
        if bridge is None:
            return await original_async(self, *args, **params)
        if bridge.model is not None:
            return await bridge.route(wire, params)
        _, started = bridge.begin()
        clock = time.perf_counter()
        model = _model(self, params, provider)
        try:
            answer = await original_async(self, *args, **params)
        except failures as exc:
            _failed(bridge, model, exc)
            raise
        bridge.passed(wire, model, answer, started, clock)
        return answer

    sync.create = create  # type: ignore[attr-defined]
    async_.create = acreate  # type: ignore[attr-defined]


def _model(resource: Any, params: dict[str, Any], provider: Provider) -> str:
    return f"{provider(resource)}/{params.get('model', '')}"
