"""The OpenAI SDK's Chat Completions and Responses APIs, as the bridge speaks them.

A request is read into toolproof's messages and tools; a model's answer is written as the
SDK's own `ChatCompletion` or `Response`, so agent code that reads
`.choices[0].message.tool_calls` or `.output` works unchanged.
"""

from __future__ import annotations

import time
from typing import Any

from openai.types.chat import ChatCompletion
from openai.types.responses import Response

from toolproof.agents.bridge.core import Bridge, RequestError
from toolproof.agents.bridge.shapes import arguments_text, items, plain, schema, text_of, tool_call
from toolproof.models.base import Message, ModelResponse, Usage
from toolproof.tools.base import ToolSchema

_ROLES = {"system": "system", "developer": "system", "user": "user", "assistant": "assistant"}


def _finish(response: ModelResponse) -> str:
    if response.message.tool_calls:
        return "tool_calls"
    return "length" if response.stop_reason in ("length", "max_tokens") else "stop"


class ChatWire:
    """`client.chat.completions.create(...)`."""

    api = "chat.completions"

    def request(
        self, params: dict[str, Any], bridge: Bridge
    ) -> tuple[list[Message], list[ToolSchema]]:
        messages = [_chat_message(m) for m in items(params.get("messages"), "messages")]
        tools = [
            schema(f.get("name"), f.get("description"), f.get("parameters"))
            for t in items(params.get("tools"), "tools")
            if t.get("type", "function") == "function"
            for f in [plain(t.get("function"), "tools[].function")]
        ]
        return messages, tools

    def answer(
        self, response: ModelResponse, model: str, messages: list[Message], bridge: Bridge
    ) -> ChatCompletion:
        message = response.message
        calls = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": arguments_text(c)},
            }
            for c in message.tool_calls
        ]
        body: dict[str, Any] = {"role": "assistant", "content": message.content or None}
        if calls:
            body["tool_calls"] = calls
        usage = response.usage
        return ChatCompletion.model_validate(
            {
                "id": f"chatcmpl-toolproof-{next(bridge.ids)}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": model,
                "choices": [{"index": 0, "message": body, "finish_reason": _finish(response)}],
                "usage": {
                    "prompt_tokens": usage.input_tokens,
                    "completion_tokens": usage.output_tokens,
                    "total_tokens": usage.input_tokens + usage.output_tokens,
                    "prompt_tokens_details": {"cached_tokens": usage.cached_tokens},
                    "completion_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
                },
            }
        )

    def read(self, answer: Any) -> ModelResponse | None:
        if not isinstance(answer, ChatCompletion) or not answer.choices:
            return None
        choice = answer.choices[0]
        calls = [
            tool_call(c.id, c.function.name, c.function.arguments)
            for c in choice.message.tool_calls or []
            if c.type == "function"
        ]
        usage = Usage()
        if answer.usage is not None:
            details = answer.usage.prompt_tokens_details
            reasoning = answer.usage.completion_tokens_details
            usage = Usage(
                input_tokens=answer.usage.prompt_tokens,
                output_tokens=answer.usage.completion_tokens,
                cached_tokens=(details.cached_tokens or 0) if details else 0,
                reasoning_tokens=(reasoning.reasoning_tokens or 0) if reasoning else 0,
            )
        content = choice.message.content or ""
        message = Message(role="assistant", content=content, tool_calls=calls)
        return ModelResponse(message=message, usage=usage, stop_reason=choice.finish_reason)


def _chat_message(m: dict[str, Any]) -> Message:
    role = m.get("role")
    if role == "tool":
        return Message(
            role="tool", content=text_of(m.get("content")), tool_call_id=m.get("tool_call_id")
        )
    if role not in _ROLES:
        raise RequestError(f"a message has role {role!r}")
    calls = [
        tool_call(c.get("id"), f.get("name"), f.get("arguments"))
        for c in items(m.get("tool_calls"), "tool_calls")
        for f in [plain(c.get("function"), "tool_calls[].function")]
    ]
    content = text_of(m.get("content"))
    return Message(role=_ROLES[role], content=content, tool_calls=calls)


class ResponsesWire:
    """`client.responses.create(...)`, `previous_response_id` included: the bridge keeps each
    answered conversation by its response id."""

    api = "responses"

    def request(
        self, params: dict[str, Any], bridge: Bridge
    ) -> tuple[list[Message], list[ToolSchema]]:
        messages: list[Message] = []
        instructions = params.get("instructions")
        if isinstance(instructions, str) and instructions:
            messages.append(Message(role="system", content=instructions))
        earlier = params.get("previous_response_id")
        if earlier:
            if earlier not in bridge.conversations:
                raise RequestError(f"previous_response_id {earlier!r} was not answered here")
            messages += bridge.conversations[earlier]
        given = params.get("input")
        if isinstance(given, str):
            messages.append(Message(role="user", content=given))
        else:
            for item in items(given, "input"):
                _add_item(messages, item)
        tools = [
            schema(t.get("name"), t.get("description"), t.get("parameters"))
            for t in items(params.get("tools"), "tools")
            if t.get("type") == "function"
        ]
        return messages, tools

    def answer(
        self, response: ModelResponse, model: str, messages: list[Message], bridge: Bridge
    ) -> Response:
        number = next(bridge.ids)
        message = response.message
        output: list[dict[str, Any]] = []
        if message.content:
            text = {"type": "output_text", "text": message.content, "annotations": []}
            output.append(
                {
                    "type": "message",
                    "id": f"msg_toolproof_{number}",
                    "role": "assistant",
                    "status": "completed",
                    "content": [text],
                }
            )
        output += [
            {
                "type": "function_call",
                "id": f"fc_{c.id}",
                "call_id": c.id,
                "name": c.name,
                "arguments": arguments_text(c),
                "status": "completed",
            }
            for c in message.tool_calls
        ]
        answer_id = f"resp_toolproof_{number}"
        kept = [m for m in messages if m.role != "system"]
        bridge.conversations[answer_id] = [*kept, message]
        usage = response.usage
        return Response.model_validate(
            {
                "id": answer_id,
                "object": "response",
                "created_at": time.time(),
                "model": model,
                "output": output,
                "parallel_tool_calls": True,
                "tool_choice": "auto",
                "tools": [],
                "status": "completed",
                "usage": {
                    "input_tokens": usage.input_tokens,
                    "output_tokens": usage.output_tokens,
                    "total_tokens": usage.input_tokens + usage.output_tokens,
                    "input_tokens_details": {
                        "cached_tokens": usage.cached_tokens,
                        "cache_write_tokens": 0,
                    },
                    "output_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
                },
            }
        )

    def read(self, answer: Any) -> ModelResponse | None:
        if not isinstance(answer, Response):
            return None
        calls = [
            tool_call(item.call_id, item.name, item.arguments)
            for item in answer.output
            if item.type == "function_call"
        ]
        usage = Usage()
        if answer.usage is not None:
            usage = Usage(
                input_tokens=answer.usage.input_tokens,
                output_tokens=answer.usage.output_tokens,
                cached_tokens=answer.usage.input_tokens_details.cached_tokens,
                reasoning_tokens=answer.usage.output_tokens_details.reasoning_tokens,
            )
        message = Message(role="assistant", content=answer.output_text, tool_calls=calls)
        stop = "tool_calls" if calls else str(answer.status or "")
        return ModelResponse(message=message, usage=usage, stop_reason=stop)


def _add_item(messages: list[Message], item: dict[str, Any]) -> None:
    """One input item onto the conversation: a function call joins the assistant message
    just before it, as one model turn with several calls."""
    kind = item.get("type", "message")
    if kind == "function_call":
        call = tool_call(item.get("call_id"), item.get("name"), item.get("arguments"))
        last = messages[-1] if messages else None
        if last is not None and last.role == "assistant":
            messages[-1] = last.model_copy(update={"tool_calls": [*last.tool_calls, call]})
        else:
            messages.append(Message(role="assistant", tool_calls=[call]))
    elif kind == "function_call_output":
        output = item.get("output")
        content = output if isinstance(output, str) else text_of(output)
        messages.append(Message(role="tool", content=content, tool_call_id=item.get("call_id")))
    elif kind == "message":
        role = item.get("role")
        if role not in _ROLES:
            raise RequestError(f"an input message has role {role!r}")
        content = text_of(item.get("content"))
        messages.append(Message(role=_ROLES[role], content=content))
