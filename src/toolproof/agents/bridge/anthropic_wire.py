"""The Anthropic SDK's Messages API, as the bridge speaks it.

Content blocks map onto toolproof's messages: `tool_use` blocks are the assistant's tool
calls, each `tool_result` block of a user message is a `tool` message; the answer is the
SDK's own `Message`, so agent code that walks `.content` for `tool_use` blocks works.
"""

from __future__ import annotations

import json
from typing import Any

from anthropic.types import Message as AnthropicMessage

from toolproof.agents.bridge.core import Bridge, RequestError
from toolproof.agents.bridge.shapes import items, schema, text_of, tool_call
from toolproof.models.base import Message, ModelResponse, ToolCall, Usage
from toolproof.tools.base import ToolSchema


class MessagesWire:
    """`client.messages.create(...)`."""

    api = "messages"

    def request(
        self, params: dict[str, Any], bridge: Bridge
    ) -> tuple[list[Message], list[ToolSchema]]:
        messages: list[Message] = []
        system = params.get("system")
        if system:
            messages.append(Message(role="system", content=text_of(system)))
        for m in items(params.get("messages"), "messages"):
            messages += _messages(m)
        tools = [
            schema(t.get("name"), t.get("description"), t.get("input_schema"))
            for t in items(params.get("tools"), "tools")
            if t.get("type", "custom") == "custom"
        ]
        return messages, tools

    def answer(
        self, response: ModelResponse, model: str, messages: list[Message], bridge: Bridge
    ) -> AnthropicMessage:
        message = response.message
        content: list[dict[str, Any]] = []
        if message.content:
            content.append({"type": "text", "text": message.content})
        content += [
            {"type": "tool_use", "id": c.id, "name": c.name, "input": _input(c)}
            for c in message.tool_calls
        ]
        if message.tool_calls:
            stop = "tool_use"
        elif response.stop_reason in ("length", "max_tokens"):
            stop = "max_tokens"
        else:
            stop = "end_turn"
        usage = response.usage
        return AnthropicMessage.model_validate(
            {
                "id": f"msg_toolproof_{next(bridge.ids)}",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": content,
                "stop_reason": stop,
                "stop_sequence": None,
                "usage": {
                    "input_tokens": usage.input_tokens - usage.cached_tokens,
                    "output_tokens": usage.output_tokens,
                    "cache_read_input_tokens": usage.cached_tokens,
                },
            }
        )

    def read(self, answer: Any) -> ModelResponse | None:
        if not isinstance(answer, AnthropicMessage):
            return None
        texts, calls = [], []
        for block in answer.content:
            if block.type == "text":
                texts.append(block.text)
            elif block.type == "tool_use":
                calls.append(tool_call(block.id, block.name, block.input))
        u = answer.usage
        cached = u.cache_read_input_tokens or 0
        usage = Usage(
            # all prompt tokens, the cached ones included (as toolproof counts them)
            input_tokens=u.input_tokens + cached + (u.cache_creation_input_tokens or 0),
            output_tokens=u.output_tokens,
            cached_tokens=cached,
        )
        message = Message(role="assistant", content="".join(texts), tool_calls=calls)
        return ModelResponse(message=message, usage=usage, stop_reason=answer.stop_reason or "")


def _messages(m: dict[str, Any]) -> list[Message]:
    """One Anthropic message as toolproof's: a user turn's tool results come first, each its
    own `tool` message, then its text (if any)."""
    role, content = m.get("role"), m.get("content")
    if role not in ("user", "assistant"):
        raise RequestError(f"a message has role {role!r}")
    if isinstance(content, str):
        return [Message(role=role, content=content)]
    texts: list[str] = []
    calls: list[ToolCall] = []
    results: list[Message] = []
    for block in items(content, "content"):
        kind = block.get("type")
        if kind == "text":
            texts.append(str(block.get("text", "")))
        elif kind == "tool_use":
            calls.append(tool_call(block.get("id"), block.get("name"), block.get("input")))
        elif kind == "tool_result":
            result = block.get("content")
            results.append(
                Message(
                    role="tool",
                    content=result if isinstance(result, str) else text_of(result),
                    tool_call_id=block.get("tool_use_id"),
                    is_error=bool(block.get("is_error")),
                )
            )
    if role == "assistant":
        return [Message(role="assistant", content="".join(texts), tool_calls=calls)]
    text = "".join(texts)
    return results + ([Message(role="user", content=text)] if text or not results else [])


def _input(call: ToolCall) -> dict[str, Any]:
    """A tool_use block's input: the arguments, or what of unparsed ones reads as an object."""
    if call.arguments is not None:
        return call.arguments
    try:
        parsed = json.loads(call.raw_arguments)
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}
