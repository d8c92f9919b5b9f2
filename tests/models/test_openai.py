"""The OpenAI Chat Completions adapter through the real SDK, answered from recorded fixtures."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx2
import pytest

from toolproof.errors import UsageError
from toolproof.models.base import (
    ContextOverflow,
    Message,
    ModelResponse,
    ModelSettings,
    ProviderError,
    ToolCall,
)
from toolproof.models.openai import OpenAIChatClient
from toolproof.tools.base import ToolSchema

FIXTURES = Path(__file__).parent / "fixtures" / "openai"

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


def fixture(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
    return data


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
        recorded = fixture(answer)
        return httpx2.Response(
            recorded["status"], headers=recorded["headers"], json=recorded["body"]
        )

    def client(self, model: str = "gpt-4o", **kwargs: Any) -> OpenAIChatClient:
        kwargs.setdefault("api_key", "sk-test")
        http = httpx2.AsyncClient(transport=httpx2.MockTransport(self))
        return OpenAIChatClient(model, http_client=http, **kwargs)


def generate(
    client: OpenAIChatClient, messages: list[Message], tools: list[ToolSchema] | None = None
) -> ModelResponse:
    return asyncio.run(client.generate(messages, [GET_ORDER] if tools is None else tools))


CONVERSATION = [
    Message(role="system", content="You are a support agent."),
    Message(role="user", content="Cancel order W1 please."),
    Message(
        role="assistant",
        tool_calls=[ToolCall(id="call_prev1", name="get_order", arguments={"order_id": "W1"})],
    ),
    Message(
        role="tool",
        content='{"status":"pending"}',
        tool_call_id="call_prev1",
        name="get_order",
    ),
    Message(role="assistant", content="It is pending. Shall I cancel it?"),
    Message(role="user", content="Yes."),
]


def test_request_messages_tools_and_a_tool_call_back() -> None:
    provider = Provider("tool_call")
    response = generate(provider.client(), CONVERSATION)

    [request] = provider.requests
    assert request.method == "POST"
    assert request.url == "https://api.openai.com/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-test"
    body = json.loads(request.content)
    assert body["model"] == "gpt-4o"
    assert body["messages"] == [
        {"role": "system", "content": "You are a support agent."},
        {"role": "user", "content": "Cancel order W1 please."},
        {
            "role": "assistant",
            "content": "",  # never null: llama.cpp's server answers 500 to that
            "tool_calls": [
                {
                    "id": "call_prev1",
                    "type": "function",
                    "function": {"name": "get_order", "arguments": '{"order_id":"W1"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_prev1", "content": '{"status":"pending"}'},
        {"role": "assistant", "content": "It is pending. Shall I cancel it?"},
        {"role": "user", "content": "Yes."},
    ]
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "get_order",
                "description": "Look up an order.",
                "parameters": GET_ORDER.parameters,
            },
        }
    ]
    # No settings: nothing but what is needed, and never a stream.
    assert set(body) == {"model", "messages", "tools"}

    assert response.message.role == "assistant"
    assert response.message.content == ""
    assert response.message.tool_calls == [
        ToolCall(
            id="call_Xk2pQ9rT4vW7yZ1bN3mD5fH8",
            name="get_order",
            arguments={"order_id": "W1"},
            raw_arguments='{"order_id":"W1"}',
        )
    ]
    assert response.stop_reason == "tool_calls"
    assert (response.usage.input_tokens, response.usage.output_tokens) == (412, 18)
    assert response.latency_s > 0
    assert response.cost_usd is None


def test_parallel_calls_and_their_ids_round_trip() -> None:
    provider = Provider("parallel_tool_calls", "text_usage")
    client = provider.client()
    messages = [Message(role="user", content="Order W1 and user u_42?")]
    first = generate(client, messages, [GET_ORDER, GET_USER])
    calls = first.message.tool_calls
    assert [(c.id, c.name, c.arguments) for c in calls] == [
        ("call_aB3cD4eF5gH6iJ7kL8mN9oP0", "get_order", {"order_id": "W1"}),
        (
            "call_qR1sT2uV3wX4yZ5aB6cD7eF8",
            "get_user",
            {"user_id": "u_42", "fields": ["email", "tier"]},
        ),
    ]

    messages.append(first.message)
    messages += [
        Message(role="tool", content=f'{{"n":{i}}}', tool_call_id=c.id, name=c.name)
        for i, c in enumerate(calls)
    ]
    generate(client, messages, [GET_ORDER, GET_USER])
    sent = provider.bodies[1]["messages"]
    assert [c["id"] for c in sent[1]["tool_calls"]] == [c.id for c in calls]
    assert [json.loads(c["function"]["arguments"]) for c in sent[1]["tool_calls"]] == [
        c.arguments for c in calls
    ]
    assert [(m["role"], m["tool_call_id"]) for m in sent[2:]] == [("tool", c.id) for c in calls]


def test_text_answer_with_cached_and_reasoning_tokens() -> None:
    provider = Provider("text_usage")
    response = generate(provider.client("o4-mini"), [Message(role="user", content="Cancel W1")])
    assert response.message.content == "Your order W1 has been cancelled."
    assert response.message.tool_calls == []
    assert response.stop_reason == "stop"
    usage = response.usage
    assert (usage.input_tokens, usage.output_tokens) == (2048, 310)
    assert (usage.cached_tokens, usage.reasoning_tokens) == (1536, 256)


def test_unparseable_arguments_are_kept_raw() -> None:
    provider = Provider("bad_arguments", "text_usage")
    client = provider.client()
    messages = [Message(role="user", content="W1?")]
    response = generate(client, messages)
    [call] = response.message.tool_calls
    assert call.id == "call_vW4xY5zA6bC7dE8fG9hI0jK1"
    assert call.arguments is None
    assert call.raw_arguments == '{"order_id": "W1"'
    assert response.message.content == "Let me check that order."

    # OpenAI gets the model's own text back, as it made it.
    messages += [
        response.message,
        Message(role="tool", content='{"error":"bad"}', tool_call_id=call.id, is_error=True),
    ]
    generate(client, messages)
    sent = provider.bodies[1]["messages"][1]
    assert sent["tool_calls"][0]["function"]["arguments"] == '{"order_id": "W1"'
    assert sent["content"] == "Let me check that order."


def test_compatible_server() -> None:
    provider = Provider("llama_cpp_tool_call", "llama_cpp_tool_call")
    client = provider.client(
        "qwen2.5-7b",
        api_key=None,
        base_url="http://127.0.0.1:8080/v1",
        headers={"X-Team": "evals"},
        provider="openai-compatible",
        settings=ModelSettings(max_tokens=256),
    )
    assert client.name == "openai-compatible/qwen2.5-7b"
    response = generate(client, [Message(role="user", content="W1?")])
    [request] = provider.requests
    assert request.url == "http://127.0.0.1:8080/v1/chat/completions"
    assert request.headers["x-team"] == "evals"
    # A placeholder key: the OpenAI key from the environment never goes to another server.
    assert request.headers["authorization"] == "Bearer none"
    body = provider.bodies[0]
    assert body["max_tokens"] == 256 and "max_completion_tokens" not in body
    assert "stream" not in body
    [call] = response.message.tool_calls
    assert (call.id, call.name, call.arguments) == (
        "Zr0sQm4u2Dj1bXhNw8PkTqYv3LcFe7Ga",
        "get_order",
        {"order_id": "W1"},
    )
    assert (response.usage.input_tokens, response.usage.output_tokens) == (318, 24)

    # Past arguments that are not a JSON object would fail the server's chat template.
    bad = ToolCall(id="c1", name="get_order", raw_arguments="{not json")
    listed = ToolCall(id="c2", name="get_order", raw_arguments="[1, 2]")
    generate(
        client,
        [
            Message(role="user", content="W1?"),
            Message(role="assistant", tool_calls=[bad, listed]),
            Message(role="tool", content="{}", tool_call_id="c1"),
            Message(role="tool", content="{}", tool_call_id="c2"),
        ],
    )
    sent = provider.bodies[1]["messages"][1]
    assert sent["content"] == ""
    assert [c["function"]["arguments"] for c in sent["tool_calls"]] == ["{}", "{}"]


def test_settings_become_request_parameters() -> None:
    settings = ModelSettings(
        temperature=0.2,
        max_tokens=512,
        tool_choice="required",
        parallel_tool_calls=False,
        seed=7,
        extra={"top_p": 0.9, "reasoning_effort": "low"},
    )
    provider = Provider("tool_call", "text_usage", "tool_call")
    client = provider.client(settings=settings)
    generate(client, [Message(role="user", content="W1?")])
    body = provider.bodies[0]
    assert body["temperature"] == 0.2
    assert body["max_completion_tokens"] == 512 and "max_tokens" not in body
    assert body["tool_choice"] == "required"
    assert body["parallel_tool_calls"] is False
    assert body["seed"] == 7
    assert (body["top_p"], body["reasoning_effort"]) == (0.9, "low")

    # Without tools, no tool parameters at all.
    generate(client, [Message(role="user", content="Hi")], tools=[])
    body = provider.bodies[1]
    assert not {"tools", "tool_choice", "parallel_tool_calls"} & set(body)
    assert body["seed"] == 7

    # A tool's name forces that tool.
    client.settings = ModelSettings(tool_choice="get_order")
    generate(client, [Message(role="user", content="W1?")])
    body = provider.bodies[2]
    assert body["tool_choice"] == {"type": "function", "function": {"name": "get_order"}}
    assert set(body) == {"model", "messages", "tools", "tool_choice"}


def test_a_compatible_server_gets_tool_choice_auto_by_default() -> None:
    # OpenAI assumes "auto"; llama-cpp-python's server never calls a tool unless it is sent.
    provider = Provider("tool_call", "tool_call", "tool_call")
    openai_client = provider.client()
    generate(openai_client, [Message(role="user", content="W1?")])
    assert "tool_choice" not in provider.bodies[0]
    compatible = provider.client(base_url="http://127.0.0.1:9/v1", provider="openai-compatible")
    generate(compatible, [Message(role="user", content="W1?")])
    assert provider.bodies[1]["tool_choice"] == "auto"
    compatible.settings = ModelSettings(tool_choice="none")
    generate(compatible, [Message(role="user", content="W1?")])
    assert provider.bodies[2]["tool_choice"] == "none"


@pytest.mark.parametrize(
    ("name", "status", "retryable", "retry_after", "words"),
    [
        ("error_429_rate_limit", 429, True, 3.0, "Rate limit reached for gpt-4o"),
        ("error_429_quota", 429, False, None, "You exceeded your current quota"),
        ("error_500", 500, True, None, "The server had an error"),
        ("error_503_overloaded", 503, True, None, "currently overloaded"),
        ("error_529_overloaded", 529, True, None, "Overloaded"),
        ("error_400_bad_request", 400, False, None, "Invalid schema for function 'get_order'"),
        ("error_401", 401, False, None, "Incorrect API key provided"),
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
    assert words in str(error)
    assert str(error).startswith(f"HTTP {status}: ")
    assert len(provider.requests) == 1  # the SDK does not retry on its own


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("error_400_context", "maximum context length is 128000 tokens"),
        ("error_400_llama_cpp_context", "exceeds the available context size"),
    ],
)
def test_context_overflow(name: str, words: str) -> None:
    provider = Provider(name)
    with pytest.raises(ContextOverflow, match=words) as raised:
        generate(provider.client(), [Message(role="user", content="W1?")])
    assert str(raised.value).startswith("openai/gpt-4o: ")


def test_retry_after_as_an_http_date() -> None:
    provider = Provider("error_429_rate_limit")
    recorded = fixture("error_429_rate_limit")
    recorded["headers"]["retry-after"] = "Wed, 21 Oct 2015 07:28:00 GMT"  # long past

    def answer(request: httpx2.Request) -> httpx2.Response:
        provider.requests.append(request)
        return httpx2.Response(429, headers=recorded["headers"], json=recorded["body"])

    http = httpx2.AsyncClient(transport=httpx2.MockTransport(answer))
    client = OpenAIChatClient("gpt-4o", api_key="sk-test", http_client=http)
    with pytest.raises(ProviderError) as raised:
        generate(client, [Message(role="user", content="W1?")])
    assert raised.value.retry_after == 0.0


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


def test_missing_api_key_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_ADMIN_KEY", raising=False)
    with pytest.raises(UsageError, match="openai/gpt-4o: Missing credentials"):
        OpenAIChatClient("gpt-4o")
