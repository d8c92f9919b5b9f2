"""The Anthropic Messages adapter through the real SDK, answered from recorded fixtures."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx2
import pytest

from toolproof.errors import UsageError
from toolproof.models.anthropic import AnthropicClient
from toolproof.models.base import (
    ContextOverflow,
    Message,
    ModelResponse,
    ModelSettings,
    ProviderError,
    ToolCall,
)
from toolproof.tools.base import ToolSchema

FIXTURES = Path(__file__).parent / "fixtures" / "anthropic"

GET_ORDER = ToolSchema(
    name="get_order",
    description="Look up an order.",
    parameters={
        "type": "object",
        "properties": {"order_id": {"type": "string", "description": "The order id."}},
        "required": ["order_id"],
    },
)
GET_USER = ToolSchema(
    name="get_user",
    description="Look up a user.",
    parameters={"type": "object", "properties": {"user_id": {"type": "string"}}},
)


class Provider:
    """Answers each request with the next fixture and keeps what was sent."""

    def __init__(self, *answers: str | Exception) -> None:
        self.answers = list(answers)
        self.requests: list[httpx2.Request] = []

    @property
    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(r.content) for r in self.requests]

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        recorded = json.loads((FIXTURES / f"{answer}.json").read_text(encoding="utf-8"))
        return httpx2.Response(
            recorded["status"], headers=recorded["headers"], json=recorded["body"]
        )

    def client(self, model: str = "claude-sonnet-4-6", **kwargs: Any) -> AnthropicClient:
        kwargs.setdefault("api_key", "sk-ant-test")
        http = httpx2.AsyncClient(transport=httpx2.MockTransport(self))
        return AnthropicClient(model, http_client=http, **kwargs)


def generate(
    client: AnthropicClient, messages: list[Message], tools: list[ToolSchema] | None = None
) -> ModelResponse:
    return asyncio.run(client.generate(messages, [GET_ORDER] if tools is None else tools))


def test_request_system_blocks_and_grouped_tool_results() -> None:
    conversation = [
        Message(role="system", content="You are a support agent."),
        Message(role="user", content="Order W1 and user u_42?"),
        Message(
            role="assistant",
            content="Looking both up.",
            tool_calls=[
                ToolCall(id="toolu_a", name="get_order", arguments={"order_id": "W1"}),
                ToolCall(id="toolu_b", name="get_user", arguments={"user_id": "u_42"}),
            ],
        ),
        Message(role="tool", content='{"status":"pending"}', tool_call_id="toolu_a"),
        Message(
            role="tool", content='{"error":"no user u_42"}', tool_call_id="toolu_b", is_error=True
        ),
        Message(role="assistant", content="W1 is pending; I found no user u_42."),
        Message(role="user", content="Cancel W1."),
        Message(
            role="assistant",
            tool_calls=[ToolCall(id="toolu_c", name="get_order", arguments={"order_id": "W1"})],
        ),
        Message(role="tool", content='{"status":"pending"}', tool_call_id="toolu_c"),
    ]
    provider = Provider("tool_use")
    client = provider.client()
    assert client.name == "anthropic/claude-sonnet-4-6"
    generate(client, conversation, [GET_ORDER, GET_USER])

    [request] = provider.requests
    assert request.url == "https://api.anthropic.com/v1/messages"
    # The SDK's choice of header for the key.
    assert request.headers.get("x-api-key") == "sk-ant-test" or (
        request.headers.get("authorization") == "Bearer sk-ant-test"
    )
    assert "anthropic-version" in request.headers
    body = json.loads(request.content)
    assert body["model"] == "claude-sonnet-4-6"
    assert body["max_tokens"] == 1024  # required by the API: a default when settings have none
    assert body["system"] == "You are a support agent."
    assert body["messages"] == [
        {"role": "user", "content": "Order W1 and user u_42?"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Looking both up."},
                {
                    "type": "tool_use",
                    "id": "toolu_a",
                    "name": "get_order",
                    "input": {"order_id": "W1"},
                },
                {
                    "type": "tool_use",
                    "id": "toolu_b",
                    "name": "get_user",
                    "input": {"user_id": "u_42"},
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_a",
                    "is_error": False,
                    "content": '{"status":"pending"}',
                },
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_b",
                    "is_error": True,
                    "content": '{"error":"no user u_42"}',
                },
            ],
        },
        {"role": "assistant", "content": "W1 is pending; I found no user u_42."},
        {"role": "user", "content": "Cancel W1."},
        {
            "role": "assistant",
            # No empty text block: the API rejects those.
            "content": [
                {
                    "type": "tool_use",
                    "id": "toolu_c",
                    "name": "get_order",
                    "input": {"order_id": "W1"},
                }
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_c",
                    "is_error": False,
                    "content": '{"status":"pending"}',
                }
            ],
        },
    ]
    assert body["tools"] == [
        {
            "name": "get_order",
            "description": "Look up an order.",
            "input_schema": GET_ORDER.parameters,
        },
        {"name": "get_user", "description": "Look up a user.", "input_schema": GET_USER.parameters},
    ]
    assert set(body) == {"model", "max_tokens", "system", "messages", "tools"}


def test_tool_use_response() -> None:
    provider = Provider("tool_use")
    response = generate(provider.client(), [Message(role="user", content="W1?")])
    assert response.message.content == "I'll look up order W1 first."
    assert response.message.tool_calls == [
        ToolCall(
            id="toolu_01A09q90qw90lq917835lq9",
            name="get_order",
            arguments={"order_id": "W1"},
            raw_arguments='{"order_id": "W1"}',
        )
    ]
    assert response.stop_reason == "tool_use"
    assert (response.usage.input_tokens, response.usage.output_tokens) == (472, 61)
    assert response.latency_s > 0


def test_parallel_tool_uses_round_trip_as_one_user_message() -> None:
    provider = Provider("parallel_tool_use", "text_cached")
    client = provider.client()
    messages = [Message(role="user", content="W1 and u_42?")]
    first = generate(client, messages, [GET_ORDER, GET_USER])
    calls = first.message.tool_calls
    assert [(c.id, c.name, c.arguments) for c in calls] == [
        ("toolu_01T1x1fJ34qAmk2tNTrN7Up6", "get_order", {"order_id": "W1"}),
        (
            "toolu_01ABCDEFGHwxyz0123456789",
            "get_user",
            {"user_id": "u_42", "fields": ["email", "tier"]},
        ),
    ]
    assert first.message.content == ""

    messages.append(first.message)
    messages += [Message(role="tool", content="{}", tool_call_id=c.id) for c in calls]
    generate(client, messages, [GET_ORDER, GET_USER])
    sent = provider.bodies[1]["messages"]
    assert len(sent) == 3
    assert [b["id"] for b in sent[1]["content"]] == [c.id for c in calls]
    assert sent[2]["role"] == "user"
    assert [b["tool_use_id"] for b in sent[2]["content"]] == [c.id for c in calls]


def test_text_blocks_joined_and_cache_usage() -> None:
    provider = Provider("text_cached")
    response = generate(provider.client(), [Message(role="user", content="Cancel W1")])
    assert response.message.content == "Your order W1 has been cancelled."
    assert response.message.tool_calls == []
    assert response.stop_reason == "end_turn"
    usage = response.usage
    # Input counts every prompt token (uncached, cache reads and cache writes); cached is a part.
    assert (usage.input_tokens, usage.cached_tokens) == (124 + 1836 + 212, 1836)
    assert (usage.output_tokens, usage.reasoning_tokens) == (37, 0)


def test_thinking_blocks_go_back_with_their_tool_calls() -> None:
    provider = Provider("thinking_tool_use", "text_cached")
    client = provider.client(
        "claude-opus-4-7",
        settings=ModelSettings(extra={"thinking": {"type": "enabled", "budget_tokens": 2048}}),
    )
    messages = [Message(role="user", content="Cancel W1")]
    first = generate(client, messages)
    assert first.message.content == ""
    [call] = first.message.tool_calls
    assert call.id == "toolu_01Th1nk1ngT00lUs3Bl0ck9Z"
    assert first.usage.reasoning_tokens == 180
    assert provider.bodies[0]["thinking"] == {"type": "enabled", "budget_tokens": 2048}

    messages += [first.message, Message(role="tool", content="{}", tool_call_id=call.id)]
    generate(client, messages)
    assistant = provider.bodies[1]["messages"][1]
    assert [b["type"] for b in assistant["content"]] == [
        "thinking",
        "redacted_thinking",
        "tool_use",
    ]
    assert assistant["content"][0]["signature"].startswith("EqQBCgIYAhIM")
    assert assistant["content"][1]["data"].startswith("EmwKAhgBEgy3")


@pytest.mark.parametrize(
    ("choice", "parallel", "expected"),
    [
        (None, None, None),
        (None, True, None),
        ("auto", None, {"type": "auto"}),
        ("required", None, {"type": "any"}),
        ("none", None, {"type": "none"}),
        ("get_order", None, {"type": "tool", "name": "get_order"}),
        (None, False, {"type": "auto", "disable_parallel_tool_use": True}),
        ("required", False, {"type": "any", "disable_parallel_tool_use": True}),
        (
            "get_order",
            False,
            {"type": "tool", "name": "get_order", "disable_parallel_tool_use": True},
        ),
    ],
)
def test_tool_choice(
    choice: str | None, parallel: bool | None, expected: dict[str, Any] | None
) -> None:
    provider = Provider("tool_use", "text_cached")
    settings = ModelSettings(tool_choice=choice, parallel_tool_calls=parallel)
    client = provider.client(settings=settings)
    generate(client, [Message(role="user", content="W1?")])
    assert provider.bodies[0].get("tool_choice") == expected
    generate(client, [Message(role="user", content="Hi")], tools=[])
    assert not {"tools", "tool_choice"} & set(provider.bodies[1])


def test_settings_become_request_parameters() -> None:
    settings = ModelSettings(
        temperature=0.3, max_tokens=4096, seed=7, extra={"top_k": 40, "metadata": {"user_id": "t1"}}
    )
    provider = Provider("tool_use")
    generate(provider.client(settings=settings), [Message(role="user", content="W1?")])
    body = provider.bodies[0]
    assert (body["temperature"], body["max_tokens"]) == (0.3, 4096)
    assert (body["top_k"], body["metadata"]) == (40, {"user_id": "t1"})
    assert "seed" not in body  # the API has none
    assert "system" not in body


@pytest.mark.parametrize(
    ("name", "status", "retryable", "retry_after", "words"),
    [
        ("error_429", 429, True, 7.0, "would exceed the rate limit"),
        ("error_500", 500, True, None, "Internal server error"),
        ("error_529", 529, True, None, "Overloaded"),
        ("error_400_bad_request", 400, False, None, "Input should be a valid dictionary"),
        ("error_401", 401, False, None, "invalid x-api-key"),
    ],
)
def test_provider_errors(
    name: str, status: int, retryable: bool, retry_after: float | None, words: str
) -> None:
    provider = Provider(name)
    with pytest.raises(ProviderError) as raised:
        generate(provider.client(), [Message(role="user", content="W1?")])
    error = raised.value
    assert (error.status, error.retryable, error.retry_after) == (status, retryable, retry_after)
    assert str(error) == f"HTTP {status}: " + str(error).split(": ", 1)[1]
    assert words in str(error)
    assert len(provider.requests) == 1  # the SDK does not retry on its own


def test_prompt_too_long_is_a_context_overflow() -> None:
    provider = Provider("error_400_prompt_too_long")
    with pytest.raises(ContextOverflow, match="prompt is too long: 208317 tokens > 200000"):
        generate(provider.client(), [Message(role="user", content="W1?")])


@pytest.mark.parametrize(
    ("failure", "words"),
    [
        (httpx2.ReadTimeout("timed out"), "request timed out"),
        (httpx2.ConnectError("[Errno 111] Connection refused"), "Connection refused"),
    ],
)
def test_timeouts_and_connection_errors_are_retryable(failure: Exception, words: str) -> None:
    provider = Provider(failure)
    with pytest.raises(ProviderError, match=words) as raised:
        generate(provider.client(), [Message(role="user", content="W1?")])
    assert (raised.value.status, raised.value.retryable) == (None, True)
    assert len(provider.requests) == 1


def test_missing_api_key_is_a_usage_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in (
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_PROFILE",
        "ANTHROPIC_CONFIG_DIR",
        "ANTHROPIC_FEDERATION_RULE_ID",
        "ANTHROPIC_ORGANIZATION_ID",
        "ANTHROPIC_IDENTITY_TOKEN",
        "ANTHROPIC_IDENTITY_TOKEN_FILE",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # no profile on disk
    with pytest.raises(UsageError, match="anthropic/claude-sonnet-4-6: no API key"):
        AnthropicClient("claude-sonnet-4-6")
    # A key given as a header (a gateway in front of the API) is enough.
    AnthropicClient("claude-sonnet-4-6", headers={"Authorization": "Bearer gw-token"})
