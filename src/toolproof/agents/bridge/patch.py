"""The SDK methods the bridge stands in front of.

`install` replaces `create` on the official clients' resources once per process (sync and
async: OpenAI's chat completions and responses, Anthropic's messages) with a wrapper that
asks for the active bridge: outside a trial's agent there is none and the call is the SDK's
own, untouched; inside, the trial's bridge answers it or records it.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any

from toolproof.agents.bridge.core import Wire, active

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
        for sync, async_, wire in (
            (Completions, AsyncCompletions, ChatWire()),
            (Responses, AsyncResponses, ResponsesWire()),
        ):
            _wrap(sync, async_, wire, _openai_provider)
    try:
        from anthropic.resources.messages import AsyncMessages, Messages

        from toolproof.agents.bridge.anthropic_wire import MessagesWire
    except ImportError:
        return
    _wrap(Messages, AsyncMessages, MessagesWire(), lambda resource: "anthropic")


Provider = Callable[[Any], str]
"""Names the provider a resource's client calls (for the recorded model and its price)."""


def _openai_provider(resource: Any) -> str:
    client = getattr(resource, "_client", None)
    host = str(getattr(getattr(client, "base_url", None), "host", ""))
    return "openai" if host in ("", "api.openai.com") else "openai-compatible"


def _wrap(sync: type, async_: type, wire: Wire, provider: Provider) -> None:
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
        answer = original_sync(self, *args, **params)
        bridge.passed(wire, _model(self, params, provider), answer, started, clock)
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
        answer = await original_async(self, *args, **params)
        bridge.passed(wire, _model(self, params, provider), answer, started, clock)
        return answer

    sync.create = create  # type: ignore[attr-defined]
    async_.create = acreate  # type: ignore[attr-defined]


def _model(resource: Any, params: dict[str, Any], provider: Provider) -> str:
    return f"{provider(resource)}/{params.get('model', '')}"
