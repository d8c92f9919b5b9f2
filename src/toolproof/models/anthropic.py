"""Anthropic's Messages API with tool use.

System messages go to `system`; an assistant Message becomes content blocks (text, then one
`tool_use` per call); the `tool` Messages answering one turn become one user message of
`tool_result` blocks. Consecutive messages of one role are merged, and empty text is left out,
as the API requires. `max_tokens` is required by the API: 1024 unless the settings say
otherwise. The API has no seed; `temperature` and `extra` go into the request body as they are.

With extended thinking (`extra: {thinking: ...}`) the API wants a turn's thinking blocks back
with its tool calls: the client keeps them, by tool call id, and sends them back.

The answer is read straight into our types (`models/sdk.py` says why). Errors become
`ProviderError` (429, 5xx, 529 overloaded, timeouts, connection errors and malformed answers
are retryable), except "prompt is too long", which is the agent's: `ContextOverflow`.
"""

from __future__ import annotations

import json
import re
from collections import OrderedDict
from typing import Any, Literal, TypeAlias, Unpack

import anthropic
from anthropic import Omit, omit
from anthropic.types import (
    MessageParam,
    RedactedThinkingBlockParam,
    TextBlockParam,
    ThinkingBlockParam,
    ToolChoiceParam,
    ToolParam,
    ToolResultBlockParam,
    ToolUseBlockParam,
)

from toolproof.errors import UsageError
from toolproof.models import read
from toolproof.models.base import (
    ContextOverflow,
    Message,
    ModelClient,
    ModelResponse,
    ModelSettings,
    ProviderError,
    ToolCall,
    Usage,
)
from toolproof.models.retry import parse_retry_after, retryable_status
from toolproof.models.sdk import Channel, Endpoint, body_text, sdk_options
from toolproof.tools.base import ToolSchema

DEFAULT_MAX_TOKENS = 1024

Block: TypeAlias = (
    TextBlockParam
    | ToolUseBlockParam
    | ToolResultBlockParam
    | ThinkingBlockParam
    | RedactedThinkingBlockParam
)
Thinking: TypeAlias = ThinkingBlockParam | RedactedThinkingBlockParam

_OVERFLOW = re.compile(
    r"prompt is too long|exceeds? (?:the )?context (?:limit|window)|context window",
    re.IGNORECASE,
)
# 429s that no wait will cure.
_SPEND_LIMIT_CODES = {"contract_spend_limit_reached", "enforced_spend_limit_reached"}
_KEPT_THINKING = 4096


class AnthropicClient(ModelClient):
    """A Claude model behind the Messages API."""

    def __init__(
        self, model: str, *, settings: ModelSettings | None = None, **endpoint: Unpack[Endpoint]
    ) -> None:
        self.model = model
        self.name = f"anthropic/{model}"
        self.settings = settings or ModelSettings()
        self.client = anthropic.AsyncAnthropic(**sdk_options(endpoint))
        headers = endpoint.get("headers") or {}
        given = {k.lower() for k in headers} & {"x-api-key", "authorization"}
        c = self.client
        if not (c.api_key or c.auth_token or c.credentials or given):
            raise UsageError(f"{self.name}: no API key: pass one or set ANTHROPIC_API_KEY")
        self.channel = Channel(
            self.client, "v1/messages", endpoint, name=self.name, on_status=self._status_error
        )
        self._thinking: OrderedDict[str, list[Thinking]] = OrderedDict()

    async def generate(
        self, messages: list[Message], tools: list[ToolSchema], *, seed: int | None = None
    ) -> ModelResponse:
        data, latency = await self.channel.post(self.request(messages, tools))
        return self._response(data, latency)

    def request(self, messages: list[Message], tools: list[ToolSchema]) -> dict[str, object]:
        """The request body in the wire format, posted as JSON bytes (the SDK's typed
        `create` would copy every value of it, each tool's schema included, on every call)."""
        s = self.settings
        system = "\n\n".join(m.content for m in messages if m.role == "system" and m.content)
        body: dict[str, object] = {
            "model": self.model,
            "max_tokens": DEFAULT_MAX_TOKENS if s.max_tokens is None else s.max_tokens,
            "messages": self._messages(messages),
        }
        if system:
            body["system"] = system
        if tools:
            body["tools"] = [_tool(t) for t in tools]
            choice = self._tool_choice()
            if not isinstance(choice, Omit):
                body["tool_choice"] = choice
        if s.temperature is not None:
            body["temperature"] = s.temperature
        body.update(s.extra)
        return body

    def _messages(self, messages: list[Message]) -> list[MessageParam]:
        turns: list[tuple[Literal["user", "assistant"], list[Block]]] = []
        for message in messages:
            role: Literal["user", "assistant"]
            blocks: list[Block] = []
            if message.role == "system":
                continue
            if message.role == "assistant":
                role = "assistant"
                if message.tool_calls:
                    blocks.extend(self._thinking.get(message.tool_calls[0].id, []))
                if message.content:
                    blocks.append({"type": "text", "text": message.content})
                blocks.extend(_tool_use(c) for c in message.tool_calls)
            elif message.role == "tool":
                role = "user"
                result: ToolResultBlockParam = {
                    "type": "tool_result",
                    "tool_use_id": message.tool_call_id or "",
                    "is_error": message.is_error,
                }
                if message.content:
                    result["content"] = message.content
                blocks.append(result)
            else:
                role = "user"
                if message.content:
                    blocks.append({"type": "text", "text": message.content})
            if not blocks:
                continue
            if turns and turns[-1][0] == role:
                turns[-1][1].extend(blocks)
            else:
                turns.append((role, blocks))
        wire: list[MessageParam] = []
        for role, blocks in turns:
            only = blocks[0]
            content = only["text"] if len(blocks) == 1 and only["type"] == "text" else blocks
            if role == "user":
                wire.append({"role": "user", "content": content})
            else:
                wire.append({"role": "assistant", "content": content})
        return wire

    def _tool_choice(self) -> ToolChoiceParam | Omit:
        s = self.settings
        single = s.parallel_tool_calls is False
        match s.tool_choice:
            case "none":
                return {"type": "none"}
            case "required":
                if single:
                    return {"type": "any", "disable_parallel_tool_use": True}
                return {"type": "any"}
            case None | "auto":
                if single:
                    return {"type": "auto", "disable_parallel_tool_use": True}
                return {"type": "auto"} if s.tool_choice else omit
            case name:  # the name of one tool, to force it
                if single:
                    return {"type": "tool", "name": name, "disable_parallel_tool_use": True}
                return {"type": "tool", "name": name}

    def _response(self, data: dict[str, Any], latency: float) -> ModelResponse:
        """A Message object read into our types; what does not read is malformed."""
        if data.get("type") == "error":
            error = read.mapping(data.get("error"), "error", optional=True)
            raise read.malformed(f"an error object: {error.get('message') or error}")
        texts: list[str] = []
        calls: list[ToolCall] = []
        thinking: list[Thinking] = []
        if data.get("content") is None:
            raise read.malformed("no content")
        for index, item in enumerate(read.items(data["content"], "content")):
            block = read.mapping(item, f"content[{index}]")
            where = f"content[{index}]"
            kind = block.get("type")
            if kind == "text":
                texts.append(read.string(block.get("text"), f"{where}.text"))
            elif kind == "tool_use":
                calls.append(_tool_call(block, where))
            elif kind == "thinking":
                thinking.append(
                    {
                        "type": "thinking",
                        "thinking": read.string(block.get("thinking"), f"{where}.thinking"),
                        "signature": read.string(block.get("signature"), f"{where}.signature"),
                    }
                )
            elif kind == "redacted_thinking":
                redacted = read.string(block.get("data"), f"{where}.data")
                thinking.append({"type": "redacted_thinking", "data": redacted})
        if thinking and calls:
            self._thinking[calls[0].id] = thinking
            while len(self._thinking) > _KEPT_THINKING:
                self._thinking.popitem(last=False)
        stop = data.get("stop_reason")
        return ModelResponse(
            message=Message(role="assistant", content="".join(texts), tool_calls=calls),
            usage=_usage(read.mapping(data.get("usage"), "usage", optional=True)),
            latency_s=latency,
            stop_reason=stop if isinstance(stop, str) else "",
        )

    def _status_error(self, exc: anthropic.APIStatusError) -> Exception:
        status = exc.status_code
        kind = exc.type or ""
        text = exc.api_message or body_text(exc.body, exc.message)
        if 400 <= status < 500 and status != 429 and _OVERFLOW.search(text):
            return ContextOverflow(f"{self.name}: {text}")
        overloaded = kind == "overloaded_error" or status == 529
        retryable = (retryable_status(status) or overloaded) and (
            exc.error_code not in _SPEND_LIMIT_CODES
        )
        return ProviderError(
            f"HTTP {status}: {text}",
            status=status,
            retryable=retryable,
            retry_after=parse_retry_after(exc.response.headers),
        )


def _tool_call(block: dict[str, Any], where: str) -> ToolCall:
    name = block.get("name")
    if not isinstance(name, str) or not name:
        raise read.malformed(f"{where} is a tool_use without a name")
    arguments = block.get("input")
    return ToolCall(
        id=read.string(block.get("id"), f"{where}.id"),
        name=name,
        arguments=arguments if isinstance(arguments, dict) else None,
        raw_arguments=json.dumps(arguments, ensure_ascii=False),
    )


def _usage(usage: dict[str, Any]) -> Usage:
    cache_read = read.count(usage.get("cache_read_input_tokens"), "usage.cache_read_input_tokens")
    created = read.count(
        usage.get("cache_creation_input_tokens"), "usage.cache_creation_input_tokens"
    )
    details = read.mapping(
        usage.get("output_tokens_details"), "usage.output_tokens_details", optional=True
    )
    return Usage(
        # Input counts all prompt tokens, the cached ones included (as OpenAI counts them).
        input_tokens=read.count(usage.get("input_tokens"), "usage.input_tokens")
        + cache_read
        + created,
        output_tokens=read.count(usage.get("output_tokens"), "usage.output_tokens"),
        cached_tokens=cache_read,
        reasoning_tokens=read.count(details.get("thinking_tokens"), "usage.thinking_tokens"),
    )


def _tool(tool: ToolSchema) -> ToolParam:
    return {"name": tool.name, "description": tool.description, "input_schema": tool.parameters}


def _tool_use(call: ToolCall) -> ToolUseBlockParam:
    arguments = call.arguments
    if arguments is None:  # only a call made elsewhere can be unparseable: send what parses
        try:
            parsed = json.loads(call.raw_arguments)
        except ValueError:
            parsed = None
        arguments = parsed if isinstance(parsed, dict) else {}
    return {"type": "tool_use", "id": call.id, "name": call.name, "input": arguments}
