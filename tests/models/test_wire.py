"""The adapters on the wire, against real misbehaving local HTTP servers: malformed answers
are retried provider errors and then infra errors, hung servers time out, connections are
kept alive and shared, and what HTTP allows (chunks, gzip, credentials in the URL) is read."""

from __future__ import annotations

import asyncio
import base64
import gzip
import json
import time
from typing import Any

import pytest
from servers import HANG, Raw, completion, model_server

from toolproof.errors import InfraError, UsageError
from toolproof.models.anthropic import AnthropicClient
from toolproof.models.base import Message, ModelClient, ModelResponse, ProviderError
from toolproof.models.openai import OpenAIChatClient
from toolproof.models.retry import RetryingClient, RetryPolicy

HELLO = [Message(role="user", content="Where is order B?")]
GOOD = completion("Order B has shipped.")


async def no_wait(_: float) -> None:
    """The retry layer's sleep, made instant."""


def twice(model: ModelClient) -> RetryingClient:
    return RetryingClient(model, policy=RetryPolicy(max_attempts=2), sleep=no_wait)


def openai_at(url: str, **kwargs: Any) -> OpenAIChatClient:
    return OpenAIChatClient("m", base_url=url, provider="openai-compatible", **kwargs)


def anthropic_at(url: str) -> AnthropicClient:
    return AnthropicClient("claude-test", api_key="sk-ant-test", base_url=url.removesuffix("/v1"))


def generate(client: ModelClient) -> ModelResponse:
    return asyncio.run(client.generate(HELLO, []))


def with_choice(choice: dict[str, Any]) -> bytes:
    return json.dumps({**GOOD, "choices": [choice]}).encode()


NAMELESS = completion(tool_calls=[{"name": "get_order", "arguments": {"order_id": "B"}}])
NAMELESS["choices"][0]["message"]["tool_calls"][0]["function"]["name"] = None

OPENAI_MALFORMED = {
    "not JSON": (Raw(b"hello", content_type="text/plain"), "not JSON (text/plain): 'hello'"),
    "truncated JSON": (Raw(json.dumps(GOOD).encode()[:40]), "not JSON (application/json)"),
    "an HTML page": (
        Raw(b"<html><body><h1>502 Bad Gateway</h1></body></html>", content_type="text/html"),
        "not JSON (text/html): '<html><body><h1>502 Bad Gateway",
    ),
    "an empty body": (Raw(b""), "not JSON (application/json): an empty body"),
    "a choice without message": (
        Raw(with_choice({"index": 0, "finish_reason": "stop"})),
        "choices[0] has no message",
    ),
    "choices null": (Raw(json.dumps({**GOOD, "choices": None}).encode()), "no choices"),
    "function.name null": (
        Raw(json.dumps(NAMELESS).encode()),
        "tool_calls[0] has no function name",
    ),
    "usage with strings": (
        Raw(json.dumps({**GOOD, "usage": {"prompt_tokens": "many"}}).encode()),
        "usage.prompt_tokens is 'many', not a token count",
    ),
    "a JSON list": (Raw(b"[1, 2]"), "not a JSON object: '[1, 2]'"),
}


def test_a_malformed_answer_once_is_retried_and_the_call_succeeds() -> None:
    replies: list[tuple[int, dict[str, Any]] | Raw] = [
        Raw(b"<html>busy</html>", content_type="text/html"),
        (200, GOOD),
    ]
    with model_server(lambda body: replies.pop(0)) as (url, seen):
        response = generate(twice(openai_at(url)))
    assert response.message.content == "Order B has shipped."
    assert len(seen.bodies) == 2


def test_content_as_a_list_of_text_parts_is_joined() -> None:
    parts = [
        {"type": "text", "text": "Order B "},
        {"type": "image_url", "image_url": {"url": "data:,"}},
        {"type": "text", "text": "has shipped."},
    ]
    reply = Raw(with_choice({"index": 0, "message": {"role": "assistant", "content": parts}}))
    with model_server(lambda body: reply) as (url, _):
        response = generate(openai_at(url))
    assert response.message.content == "Order B has shipped."
    assert response.usage.input_tokens == 100


def message(content: object, usage: object = None) -> Raw:
    body = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "content": content,
        "stop_reason": "end_turn",
        "usage": usage if usage is not None else {"input_tokens": 10, "output_tokens": 2},
    }
    return Raw(json.dumps(body).encode())


ANTHROPIC_MALFORMED = {
    "an HTML page": (
        Raw(b"<html>overloaded</html>", content_type="text/html"),
        "not JSON (text/html): '<html>overloaded</html>'",
    ),
    "content null": (message(None), "no content"),
    "content an object": (message({"type": "text"}), "content is an object, not a list"),
    "text null": (message([{"type": "text", "text": None}]), "content[0].text is null"),
    "tool_use without name": (
        message([{"type": "tool_use", "id": "toolu_1", "input": {}}]),
        "content[0] is a tool_use without a name",
    ),
    "usage with strings": (
        message([{"type": "text", "text": "hi"}], {"input_tokens": "ten"}),
        "usage.input_tokens is 'ten', not a token count",
    ),
    "an error object": (
        Raw(json.dumps({"type": "error", "error": {"message": "Overloaded"}}).encode()),
        "an error object: Overloaded",
    ),
}


MALFORMED = {
    **{("openai-compatible/m", case): answer for case, answer in OPENAI_MALFORMED.items()},
    **{("anthropic/claude-test", case): answer for case, answer in ANTHROPIC_MALFORMED.items()},
}


@pytest.mark.parametrize(("model", "case"), list(MALFORMED), ids=" ".join)
def test_a_malformed_answer_is_retried_then_an_infra_error(model: str, case: str) -> None:
    reply, reason = MALFORMED[model, case]
    client = openai_at if model.startswith("openai") else anthropic_at
    with model_server(lambda body: reply) as (url, seen), pytest.raises(InfraError) as raised:
        generate(twice(client(url)))
    message = str(raised.value)
    assert message.startswith(f"{model}: malformed response: ")
    assert reason in message and message.endswith(" after 2 attempts")
    assert len(seen.bodies) == 2


def test_a_hung_server_times_out_per_request_and_is_retried() -> None:
    with model_server(lambda body: HANG) as (url, seen):
        started = time.perf_counter()
        with pytest.raises(InfraError) as raised:
            generate(twice(openai_at(url, timeout_s=0.3)))
        took = time.perf_counter() - started
    assert str(raised.value) == (
        "openai-compatible/m: request timed out: no answer in 0.3 s after 2 attempts"
    )
    assert len(seen.bodies) == 2
    assert 0.6 <= took < 10


def test_a_timeout_is_a_retryable_provider_error() -> None:
    with model_server(lambda body: HANG) as (url, _), pytest.raises(ProviderError) as raised:
        generate(openai_at(url, timeout_s=0.2))
    assert (raised.value.retryable, raised.value.status) == (True, None)


def test_clients_of_one_endpoint_share_keep_alive_connections() -> None:
    async def calls(url: str) -> list[ModelResponse]:
        first, second = openai_at(url), OpenAIChatClient("n", base_url=url, provider="x")
        return [await client.generate(HELLO, []) for client in (first, second, first, second)]

    with model_server(lambda body: (200, GOOD), keep_alive=True) as (url, seen):
        responses = asyncio.run(calls(url))
    assert [r.message.content for r in responses] == ["Order B has shipped."] * 4
    assert [b["model"] for b in seen.bodies] == ["m", "n", "m", "n"]
    assert len(seen.connections) == 1


def test_a_connection_the_server_closed_while_idle_is_replaced_without_a_retry() -> None:
    async def calls(url: str) -> list[ModelResponse]:
        client = openai_at(url)
        return [await client.generate(HELLO, []) for _ in range(4)]

    with model_server(lambda body: (200, GOOD), keep_alive=True, close_after_answer=True) as (
        url,
        seen,
    ):
        responses = asyncio.run(calls(url))
    assert len(responses) == 4
    assert len(seen.bodies) == 4  # each call sent once
    assert len(seen.connections) == 4


def test_chunked_and_gzip_answers_are_read() -> None:
    reply = Raw(gzip.compress(json.dumps(GOOD).encode()), headers={"Content-Encoding": "gzip"})
    chunked = Raw(reply.body, headers=reply.headers, chunked=True)
    with model_server(lambda body: chunked, keep_alive=True) as (url, seen):
        response = generate(openai_at(url))
    assert response.message.content == "Order B has shipped."
    assert "gzip" in seen.headers[0]["Accept-Encoding"]


def test_credentials_in_the_base_url_are_sent_as_basic_auth() -> None:
    with model_server(lambda body: (200, GOOD)) as (url, seen):
        secret_url = url.replace("http://", "http://agent:s3cret@")
        generate(openai_at(secret_url))
    expected = base64.b64encode(b"agent:s3cret").decode()
    assert seen.headers[0]["Authorization"] == f"Basic {expected}"


def test_a_header_with_a_line_break_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="header 'X-Team' has a line break"):
        openai_at("http://127.0.0.1:9/v1", headers={"X-Team": "a\r\nX-Injected: 1"})


def test_a_header_http_cannot_carry_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="header 'X-Team' has characters HTTP cannot carry"):
        openai_at("http://127.0.0.1:9/v1", headers={"X-Team": "サポート"})


def test_a_proxy_from_the_environment_carries_the_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    with model_server(lambda body: (200, GOOD)) as (proxy, seen):
        monkeypatch.setenv("HTTP_PROXY", proxy.removesuffix("/v1"))
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        response = generate(openai_at("http://model.invalid:9/v1"))
    assert response.message.content == "Order B has shipped."
    assert seen.bodies[0]["model"] == "m"  # the proxy got the call for the unreachable host
