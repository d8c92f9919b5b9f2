"""What a model adapter adds per call, on top of the network.

    python bench/adapter.py [--calls 2000]

Each adapter (OpenAI Chat Completions, Anthropic Messages, OpenAI-compatible) is called with
a retail conversation (the policy, 17 tool schemas, a user turn, two tool calls with their
results) and answered from a recorded response by an in-memory HTTP transport, so no time is
spent on a network or a server: what is measured is the whole client side of a call.

For each adapter four figures, the median over `--calls` calls after a warm-up:

- `http`: the same request body posted with plain httpx and the answer decoded from JSON: the
  floor any client pays before it maps anything;
- `sdk`: the provider SDK's typed call (`chat.completions.create`, `messages.create`) given
  arguments already in the wire format: what any client built on the SDK pays;
- `adapter`: our adapter's `generate` (our messages and tools mapped to the wire format, the
  SDK call, the answer mapped back into our types, usage and latency recorded);
- `as run`: the adapter as `toolproof run` builds it, inside the retry loop with its adaptive
  concurrency limit and the price meter.

`as run - http` is what the adapter, SDK included, adds on top of the network;
`adapter - sdk` is what our side adds to the SDK's (negative for OpenAI: the adapter posts
the body it built through the SDK's client, skipping the typed call's walk over every tool
schema); `as run` is everything the harness adds to a call.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx2

from toolproof.models.anthropic import AnthropicClient
from toolproof.models.base import Message, ModelClient, ModelSettings, ToolCall
from toolproof.models.openai import OpenAIChatClient
from toolproof.models.pricing import Metered, PriceTable
from toolproof.models.retry import AdaptiveLimiter, RetryingClient
from toolproof.suite import load_suite

ROOT = Path(__file__).parents[1]
FIXTURES = ROOT / "tests" / "models" / "fixtures"
RETAIL = ROOT / "examples" / "retail"


def transport(body: dict[str, Any]) -> httpx2.AsyncClient:
    raw = json.dumps(body).encode()

    def answer(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, content=raw, headers={"content-type": "application/json"})

    return httpx2.AsyncClient(transport=httpx2.MockTransport(answer))


def fixture(provider: str, name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / provider / f"{name}.json").read_text())
    body: dict[str, Any] = data["body"]
    return body


def conversation() -> tuple[list[Message], list[Any]]:
    suite = load_suite(RETAIL)
    tools = [b.schema for b in suite.tools.values()]
    task = suite.tasks[0]
    first = ToolCall(id="call_1", name="find_customer", arguments={"email": "a@b.c"})
    second = ToolCall(id="call_2", name="list_orders", arguments={"customer_id": "C1"})
    messages = [
        Message(role="system", content=suite.policy),
        Message(role="user", content=task.spec.user.opening),
        Message(role="assistant", content="", tool_calls=[first]),
        Message(role="tool", content='{"customer_id": "C1"}', tool_call_id="call_1"),
        Message(role="assistant", content="Looking at the orders.", tool_calls=[second]),
        Message(role="tool", content=json.dumps([{"order_id": "W1"}] * 5), tool_call_id="call_2"),
    ]
    return messages, tools


def suite_policy(messages: list[Message]) -> str:
    return "\n\n".join(m.content for m in messages if m.role == "system")


async def median_us(calls: int, call: Callable[[], Awaitable[object]]) -> float:
    for _ in range(min(200, calls)):
        await call()
    times = []
    for _ in range(calls):
        started = time.perf_counter()
        await call()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1e6


async def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    messages, tools = conversation()
    settings = ModelSettings(temperature=0, max_tokens=256)
    prices = PriceTable()

    openai_body = fixture("openai", "tool_call")
    anthropic_body = fixture("anthropic", "tool_use")
    adapters: list[tuple[str, ModelClient, Callable[[], Awaitable[object]]]] = []

    for label, base_url in (("openai", None), ("openai-compatible", "http://127.0.0.1:9/v1")):
        client = OpenAIChatClient(
            "gpt-4o",
            settings=settings,
            api_key="sk-bench",
            base_url=base_url,
            http_client=transport(openai_body),
            provider=label,
        )
        wire = [client._message(m) for m in messages]
        wire_tools = [
            {"type": "function", "function": {"name": t.name, "parameters": t.parameters}}
            for t in tools
        ]

        def sdk(client: OpenAIChatClient = client, wire: Any = wire, wt: Any = wire_tools) -> Any:
            return client.client.chat.completions.create(
                model="gpt-4o", messages=wire, tools=wt, temperature=0, max_tokens=256
            )

        adapters.append((label, client, sdk))

    anthropic = AnthropicClient(
        "claude-sonnet-4-6",
        settings=settings,
        api_key="sk-bench",
        http_client=transport(anthropic_body),
    )
    system = suite_policy(messages)
    wire_a = anthropic._messages(messages)
    wire_a_tools = [
        {"name": t.name, "description": t.description, "input_schema": t.parameters} for t in tools
    ]

    def sdk_anthropic() -> Any:
        return anthropic.client.messages.create(
            model="claude-sonnet-4-6",
            system=system,
            messages=wire_a,
            tools=wire_a_tools,
            max_tokens=256,
            extra_body={"temperature": 0},
        )

    adapters.append(("anthropic", anthropic, sdk_anthropic))

    print(f"{args.calls} calls each; median per call, microseconds")
    head = ("http", "sdk", "adapter", "as run", "mapping", "added")
    print(f"{'adapter':20}" + "".join(f"{h:>9}" for h in head))
    for label, client, sdk_call in adapters:
        wrapped = Metered(RetryingClient(client, limiter=AdaptiveLimiter(16)), prices)
        answer = anthropic_body if label == "anthropic" else openai_body
        body = json.dumps(
            {"model": "m", "messages": [m.model_dump() for m in messages], "tools": wire_tools}
        ).encode()
        plain = transport(answer)

        async def http(plain: httpx2.AsyncClient = plain, body: bytes = body) -> Any:
            response = await plain.post("http://127.0.0.1:9/v1", content=body)
            return response.json()

        http_us = await median_us(args.calls, http)
        sdk_us = await median_us(args.calls, sdk_call)
        adapter_us = await median_us(args.calls, lambda c=client: c.generate(messages, tools))
        run_us = await median_us(args.calls, lambda w=wrapped: w.generate(messages, tools))
        figures = (http_us, sdk_us, adapter_us, run_us, adapter_us - sdk_us, run_us - http_us)
        print(f"{label:20}" + "".join(f"{f:9.0f}" for f in figures))
    print("mapping = adapter - sdk; added = as run - http (what the adapter adds to the network)")


if __name__ == "__main__":
    asyncio.run(main())
