"""OpenAI Chat Completions with tools, and the servers that speak it (vLLM, Ollama, llama.cpp).

Our messages map to the wire format one to one: an assistant Message becomes an assistant
message with `tool_calls` (arguments as JSON text), a `tool` Message a tool message with its
`tool_call_id`. Requests are never streamed, and an assistant message always carries a string
`content` ("" rather than null): llama.cpp's server rejects the one and returns no chunks for
the other. With tools and no tool_choice set, a compatible server is sent tool_choice "auto"
(what OpenAI assumes; llama-cpp-python's server otherwise never calls a tool). The answer
is read straight into our types (`models/sdk.py` says why); a `content` given as a list of
text parts is joined. `RetryingClient` retries.

Errors become `ProviderError` (429, 5xx, overload, timeouts, connection errors and malformed
answers are retryable), except a context window overflow, which is the agent's:
`ContextOverflow`.
"""

from __future__ import annotations

import json
import re
from typing import Any, Unpack

import openai
import orjson
from openai.types.chat import (
    ChatCompletionFunctionToolParam,
    ChatCompletionMessageFunctionToolCallParam,
    ChatCompletionMessageParam,
    ChatCompletionToolChoiceOptionParam,
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

# Wording of context overflows: OpenAI and vLLM ("maximum context length"), llama.cpp
# ("exceeds the available context size"), and others ("context window", "prompt is too long").
_OVERFLOW = re.compile(
    r"maximum context length|context[ _-]?(?:length|window|size)|prompt is too long"
    r"|too many tokens|exceed_context_size",
    re.IGNORECASE,
)
_OVERFLOW_CODES = {
    "context_length_exceeded",
    "exceed_context_size_error",
    "string_above_max_length",
}
# 429s that no wait will cure.
_QUOTA_CODES = {"insufficient_quota", "billing_hard_limit_reached"}


class OpenAIChatClient(ModelClient):
    """A model behind an OpenAI-style /chat/completions endpoint."""

    def __init__(
        self,
        model: str,
        *,
        settings: ModelSettings | None = None,
        provider: str = "openai",
        **endpoint: Unpack[Endpoint],
    ) -> None:
        self.model = model
        self.name = f"{provider}/{model}"
        self.settings = settings or ModelSettings()
        options = sdk_options(endpoint)
        # An OpenAI-compatible server: never send it the OpenAI key from the environment.
        self.compatible = options["base_url"] is not None
        if options["api_key"] is None and self.compatible:
            options["api_key"] = "none"
        try:
            self.client = openai.AsyncOpenAI(**options)
        except openai.OpenAIError as exc:
            raise UsageError(f"{self.name}: {exc}") from None
        self.channel = Channel(
            self.client,
            "chat/completions",
            endpoint,
            name=self.name,
            on_status=self._status_error,
        )

    async def generate(
        self, messages: list[Message], tools: list[ToolSchema], *, seed: int | None = None
    ) -> ModelResponse:
        data, latency = await self.channel.post(self.request(messages, tools, seed))
        return _response(data, latency)

    def request(
        self, messages: list[Message], tools: list[ToolSchema], seed: int | None = None
    ) -> dict[str, Any]:
        """The request body, in the wire format; `seed` is sent unless the settings fix one.

        It is built here and posted as JSON bytes: the SDK's typed `create` would first walk
        every value of its arguments (each tool's JSON Schema included) to apply aliases and
        formats that chat requests do not use, ~5 ms a call with 17 tools.
        """
        s = self.settings
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [self._message(m) for m in messages],
        }
        if tools:
            body["tools"] = [_tool(t) for t in tools]
            # OpenAI assumes "auto"; llama-cpp-python's server never calls a tool without it.
            choice = s.tool_choice or ("auto" if self.compatible else None)
            if choice:
                body["tool_choice"] = _tool_choice(choice)
            if s.parallel_tool_calls is not None:
                body["parallel_tool_calls"] = s.parallel_tool_calls
        if s.temperature is not None:
            body["temperature"] = s.temperature
        if s.max_tokens is not None:
            # OpenAI's reasoning models take only the newer name of the limit; others the older.
            body["max_tokens" if self.compatible else "max_completion_tokens"] = s.max_tokens
        if s.seed is not None or seed is not None:
            body["seed"] = s.seed if s.seed is not None else seed
        body.update(s.extra)
        return body

    def _message(self, message: Message) -> ChatCompletionMessageParam:
        if message.role == "system":
            return {"role": "system", "content": message.content}
        if message.role == "user":
            return {"role": "user", "content": message.content}
        if message.role == "tool":
            return {
                "role": "tool",
                "tool_call_id": message.tool_call_id or "",
                "content": message.content,
            }
        if not message.tool_calls:
            return {"role": "assistant", "content": message.content}
        return {
            "role": "assistant",
            "content": message.content,
            "tool_calls": [self._call(c) for c in message.tool_calls],
        }

    def _call(self, call: ToolCall) -> ChatCompletionMessageFunctionToolCallParam:
        if call.arguments is not None:
            arguments = orjson.dumps(call.arguments).decode()
        elif self.compatible and not _is_json_object(call.raw_arguments):
            # vLLM and llama.cpp parse past arguments to render their chat templates and fail
            # the whole request on text that is not a JSON object.
            arguments = "{}"
        else:
            arguments = call.raw_arguments
        return {
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": arguments},
        }

    def _status_error(self, exc: openai.APIStatusError) -> Exception:
        status = exc.status_code
        error = exc.body if isinstance(exc.body, dict) else {}
        code = str(error.get("code") or "")
        kind = str(error.get("type") or "")
        detail = error.get("message")
        text = detail if isinstance(detail, str) and detail else body_text(exc.body, exc.message)
        if (
            400 <= status < 500
            and status != 429
            and (code in _OVERFLOW_CODES or kind in _OVERFLOW_CODES or _OVERFLOW.search(text))
        ):
            return ContextOverflow(f"{self.name}: {text}")
        overloaded = "overloaded" in kind.lower() or "overloaded" in text.lower()
        retryable = (retryable_status(status) or overloaded) and code not in _QUOTA_CODES
        retry_after = parse_retry_after(exc.response.headers)
        return ProviderError(
            f"HTTP {status}: {text}", status=status, retryable=retryable, retry_after=retry_after
        )


def _tool(tool: ToolSchema) -> ChatCompletionFunctionToolParam:
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
        },
    }


def _tool_choice(choice: str) -> ChatCompletionToolChoiceOptionParam:
    match choice:
        case "auto":
            return "auto"
        case "required":
            return "required"
        case "none":
            return "none"
        case _:  # the name of one tool, to force it
            return {"type": "function", "function": {"name": choice}}


def _response(data: dict[str, Any], latency: float) -> ModelResponse:
    """A chat.completion object read into our types; what does not read is malformed."""
    choices = read.items(data.get("choices"), "choices")
    if not choices:
        raise read.malformed("no choices")
    choice = read.mapping(choices[0], "choices[0]")
    if choice.get("message") is None:
        raise read.malformed("choices[0] has no message")
    message = read.mapping(choice["message"], "choices[0].message")
    calls: list[ToolCall] = []
    for index, item in enumerate(read.items(message.get("tool_calls"), "message.tool_calls")):
        call = read.mapping(item, f"tool_calls[{index}]")
        if call.get("type", "function") != "function":
            continue  # a kind of call only other tool types make; none are sent
        function = read.mapping(call.get("function"), f"tool_calls[{index}].function")
        name = function.get("name")
        if not isinstance(name, str) or not name:
            raise read.malformed(f"tool_calls[{index}] has no function name")
        raw = function.get("arguments")
        if raw is None:
            raw = ""
        elif not isinstance(raw, str):  # a server that sends an object rather than JSON text
            raw = json.dumps(raw)
        ident = call.get("id")
        calls.append(
            ToolCall(
                id=ident if isinstance(ident, str) and ident else f"call_{index}",
                name=name,
                arguments=_arguments(raw),
                raw_arguments=raw,
            )
        )
    finish = choice.get("finish_reason")
    return ModelResponse(
        message=Message(role="assistant", content=_content(message), tool_calls=calls),
        usage=_usage(read.mapping(data.get("usage"), "usage", optional=True)),
        latency_s=latency,
        stop_reason=finish if isinstance(finish, str) else "",
    )


def _content(message: dict[str, Any]) -> str:
    """The message's text: a string, or the text of its parts (as some servers send it)."""
    content = message.get("content")
    if content is None or isinstance(content, str):
        return content or ""
    texts = []
    for index, item in enumerate(read.items(content, "message.content")):
        part = read.mapping(item, f"message.content[{index}]")
        if part.get("type") in ("text", "output_text"):
            texts.append(read.string(part.get("text"), f"message.content[{index}].text"))
    return "".join(texts)


def _usage(usage: dict[str, Any]) -> Usage:
    prompt = read.mapping(
        usage.get("prompt_tokens_details"), "usage.prompt_tokens_details", optional=True
    )
    output = read.mapping(
        usage.get("completion_tokens_details"), "usage.completion_tokens_details", optional=True
    )
    return Usage(
        input_tokens=read.count(usage.get("prompt_tokens"), "usage.prompt_tokens"),
        output_tokens=read.count(usage.get("completion_tokens"), "usage.completion_tokens"),
        cached_tokens=read.count(prompt.get("cached_tokens"), "usage.cached_tokens"),
        reasoning_tokens=read.count(output.get("reasoning_tokens"), "usage.reasoning_tokens"),
    )


def _arguments(raw: str) -> dict[str, Any] | None:
    """Arguments as an object; None when the text is not a JSON object."""
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _is_json_object(raw: str) -> bool:
    try:
        return isinstance(json.loads(raw), dict)
    except ValueError:
        return False
