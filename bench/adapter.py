"""CPU per model call on the client side, through the adapters as `toolproof run` builds them.

    python bench/adapter.py [--calls 3000] [--concurrency 1,200] [--delay 0.05]

A real HTTP server runs in a subprocess (its CPU is not counted) and answers every call from
a recorded response: OpenAI's tool call at /v1/chat/completions, Anthropic's tool_use at
/v1/messages. Each adapter (OpenAI-compatible, Anthropic) is called with a retail
conversation (the policy, 17 tool schemas, a user turn, two tool calls and their results)
wrapped as a run wraps it: the retry layer with its adaptive limit and the price meter.

At each concurrency level `--calls` calls are made, that many at a time, and the process's
CPU time (user + system) is divided by the calls: what one call costs the harness, request
building, HTTP, the answer read back into toolproof's types, usage and cost. At concurrency
1 the server answers at once; at higher levels it waits `--delay` seconds first, so every
call's connection is open at the same time, as in a run with that many trials in flight.
`httpx` is the floor of a plain httpx client posting the same body and decoding the JSON.

The script uses only what every version of toolproof has, so it measures an older checkout
the same way: `PYTHONPATH=OLD/src python bench/adapter.py`.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx2
from stub_server import serve, start

from toolproof.models.anthropic import AnthropicClient
from toolproof.models.base import Message, ModelClient, ModelSettings, ToolCall
from toolproof.models.openai import OpenAIChatClient
from toolproof.models.pricing import Metered, PriceTable
from toolproof.models.retry import AdaptiveLimiter, RetryingClient
from toolproof.suite import load_suite

ROOT = Path(__file__).parents[1]
FIXTURES = ROOT / "tests" / "models" / "fixtures"
RETAIL = ROOT / "examples" / "retail"


@functools.cache
def recorded(provider: str, name: str) -> bytes:
    data = json.loads((FIXTURES / provider / f"{name}.json").read_text())
    return json.dumps(data["body"]).encode()


def answer(path: bytes, body: bytes) -> bytes:
    """The recorded answer of the API at `path`."""
    if path == b"/v1/messages":
        return recorded("anthropic", "tool_use")
    return recorded("openai", "tool_call")


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


def cpu() -> float:
    times = os.times()
    return times.user + times.system


async def cpu_per_call_us(
    calls: int, concurrency: int, call: Callable[[], Awaitable[Any]]
) -> float:
    """Microseconds of this process's CPU per call, `concurrency` calls at a time."""
    left = calls

    async def worker() -> None:
        nonlocal left
        while left > 0:
            left -= 1
            await call()

    for _ in range(2):  # warm up: connections open, code paths hot
        await asyncio.gather(*(call() for _ in range(concurrency)))
    started = cpu()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return (cpu() - started) / calls * 1e6


async def level(args: argparse.Namespace, concurrency: int) -> list[float]:
    """One row: the floor, then each adapter as run, at one concurrency level."""
    delay = args.delay if concurrency > 1 else 0.0
    server, root = start(__file__, f"--delay={delay}")
    try:
        messages, tools = conversation()
        settings = ModelSettings(temperature=0, max_tokens=256)
        compatible = OpenAIChatClient(
            "gpt-4o",
            settings=settings,
            api_key="sk-bench",
            base_url=f"{root}/v1",
            provider="openai-compatible",
        )
        anthropic = AnthropicClient(
            "claude-sonnet-4-6", settings=settings, api_key="sk-bench", base_url=root
        )
        body = json.dumps(compatible.request(messages, tools)).encode()
        limits = httpx2.Limits(max_connections=None, max_keepalive_connections=None)
        plain = httpx2.AsyncClient(timeout=None, limits=limits)

        async def floor() -> Any:
            response = await plain.post(
                f"{root}/v1/chat/completions",
                content=body,
                headers={"content-type": "application/json"},
            )
            return response.json()

        row = [await cpu_per_call_us(args.calls, concurrency, floor)]
        for adapter in (compatible, anthropic):
            limiter = AdaptiveLimiter(max(16, concurrency))
            client: ModelClient = Metered(RetryingClient(adapter, limiter=limiter), PriceTable())
            row.append(
                await cpu_per_call_us(
                    args.calls, concurrency, lambda c=client: c.generate(messages, tools)
                )
            )
        await plain.aclose()
        return row
    finally:
        server.terminate()
        server.wait(10)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--concurrency", default="1,200")
    parser.add_argument("--delay", type=float, default=0.05)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        asyncio.run(serve(answer, args.delay))
        return
    print(f"{args.calls} calls per cell; CPU per call, microseconds (user + system)")
    print(f"{'in flight':>10}{'httpx':>10}{'openai-compatible':>19}{'anthropic':>11}")
    for concurrency in (int(c) for c in args.concurrency.split(",")):
        row = asyncio.run(level(args, concurrency))
        print(f"{concurrency:>10}{row[0]:>10.0f}{row[1]:>19.0f}{row[2]:>11.0f}")


if __name__ == "__main__":
    main()
