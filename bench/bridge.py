"""The model bridge's overhead per model call: an agent's SDK call against the provider's own.

    python bench/bridge.py [--calls 2000] [--repeats 7]

A model provider that answers at once (an in-process `ModelClient` returning a fixed tool
call, so the provider's own time is about nothing) is called two ways with the same retail
conversation (the policy, 17 tool schemas, a user turn, two tool calls and their results):

- directly, `provider.generate(messages, tools, seed=...)`, as the built-in loop calls it;
- by agent code through an official SDK client while a trial's bridge is active, as a
  `python:` agent's call is answered under `--model`: `AsyncOpenAI().chat.completions.create`,
  `AsyncOpenAI().responses.create`, `AsyncAnthropic().messages.create`, and the sync
  `OpenAI().chat.completions.create` called from inside the agent's event loop.

The difference is what the bridge adds to a call: reading the SDK request into toolproof's
messages and tools, counting the step, recording the model call in the transcript and
writing the answer as the SDK's own response type. Each repeat times `--calls` calls of each
way in turn; the figures are the medians over the repeats, of the time per call and of the
bridged call's time less the direct call's in the same repeat.
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

from anthropic import AsyncAnthropic
from openai import AsyncOpenAI, OpenAI

from toolproof.agents import bridge
from toolproof.models.base import Message, ModelClient, ModelResponse, ToolCall, Usage
from toolproof.suite import load_suite
from toolproof.tools.base import ToolSchema
from toolproof.transcript import Transcript

ROOT = Path(__file__).parents[1]
RETAIL = ROOT / "examples" / "retail"
TARGET_US = 500.0


class Instant(ModelClient):
    """A provider that answers every call at once with the same tool call."""

    name = "instant/tool-caller"

    def __init__(self) -> None:
        call = ToolCall(id="call_3", name="get_order", arguments={"order_id": "W10234"})
        self.answer = ModelResponse(
            message=Message(role="assistant", content="", tool_calls=[call]),
            usage=Usage(input_tokens=2300, output_tokens=19),
            stop_reason="tool_calls",
        )

    async def generate(
        self, messages: list[Message], tools: list[ToolSchema], *, seed: int | None = None
    ) -> ModelResponse:
        return self.answer


class Conversation:
    """The retail conversation, in toolproof's types and in each SDK's request format."""

    def __init__(self) -> None:
        suite = load_suite(RETAIL)
        self.policy = suite.policy or ""
        self.opening = suite.tasks[0].spec.user.opening
        self.tools = [b.schema for b in suite.tools.values()]
        self.results = ['{"customer_id": "C1"}', json.dumps([{"order_id": "W1"}] * 5)]
        self.calls = [
            ("call_1", "find_customer", '{"email": "a@b.c"}'),
            ("call_2", "list_orders", '{"customer_id": "C1"}'),
        ]

    def messages(self) -> list[Message]:
        out = [
            Message(role="system", content=self.policy),
            Message(role="user", content=self.opening),
        ]
        for (call_id, name, arguments), result in zip(self.calls, self.results, strict=True):
            call = ToolCall(id=call_id, name=name, arguments=json.loads(arguments))
            out.append(Message(role="assistant", tool_calls=[call]))
            out.append(Message(role="tool", content=result, tool_call_id=call_id))
        return out

    def chat(self) -> dict[str, Any]:
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": self.policy},
            {"role": "user", "content": self.opening},
        ]
        for (call_id, name, arguments), result in zip(self.calls, self.results, strict=True):
            function = {"name": name, "arguments": arguments}
            messages.append(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [{"id": call_id, "type": "function", "function": function}],
                }
            )
            messages.append({"role": "tool", "tool_call_id": call_id, "content": result})
        tools = [
            {"type": "function", "function": {"name": t.name, "description": t.description,
                                              "parameters": t.parameters}}
            for t in self.tools
        ]  # fmt: skip
        return {"model": "gpt-4o-mini", "messages": messages, "tools": tools}

    def responses(self) -> dict[str, Any]:
        items: list[dict[str, Any]] = [{"role": "user", "content": self.opening}]
        for (call_id, name, arguments), result in zip(self.calls, self.results, strict=True):
            items.append(
                {"type": "function_call", "call_id": call_id, "name": name, "arguments": arguments}
            )
            items.append({"type": "function_call_output", "call_id": call_id, "output": result})
        tools = [
            {"type": "function", "name": t.name, "description": t.description,
             "parameters": t.parameters, "strict": False}
            for t in self.tools
        ]  # fmt: skip
        return {"model": "gpt-4o-mini", "instructions": self.policy, "input": items, "tools": tools}

    def anthropic(self) -> dict[str, Any]:
        messages: list[dict[str, Any]] = [{"role": "user", "content": self.opening}]
        for (call_id, name, arguments), result in zip(self.calls, self.results, strict=True):
            use = {"type": "tool_use", "id": call_id, "name": name, "input": json.loads(arguments)}
            messages.append({"role": "assistant", "content": [use]})
            answer = {"type": "tool_result", "tool_use_id": call_id, "content": result}
            messages.append({"role": "user", "content": [answer]})
        tools = [
            {"name": t.name, "description": t.description, "input_schema": t.parameters}
            for t in self.tools
        ]
        return {
            "model": "claude-haiku-4-5",
            "max_tokens": 1024,
            "system": self.policy,
            "messages": messages,
            "tools": tools,
        }


Call = Callable[[], Awaitable[Any]]


async def per_call_us(calls: int, call: Call) -> float:
    """Wall microseconds per call, `calls` calls one after another."""
    started = time.perf_counter()
    for _ in range(calls):
        await call()
    return (time.perf_counter() - started) / calls * 1e6


async def trial(calls: int, ways: dict[str, Call], provider: Instant) -> dict[str, float]:
    """One repeat: each way timed once, the bridged ones inside a fresh trial's bridge."""
    times = {}
    for name, call in ways.items():
        if name == "direct":
            times[name] = await per_call_us(calls, call)
            continue
        trial_bridge = bridge.Bridge(
            transcript=Transcript(), seed=7, max_steps=calls + 10, model=provider
        )
        with bridge.bridging(trial_bridge):
            times[name] = await per_call_us(calls, call)
        assert trial_bridge.steps == calls, f"{name}: the bridge answered {trial_bridge.steps}"
    return times


def ways(provider: Instant, conversation: Conversation) -> dict[str, Call]:
    messages, tools = conversation.messages(), conversation.tools
    chat, responses, messages_api = (
        conversation.chat(),
        conversation.responses(),
        conversation.anthropic(),
    )
    openai_async = AsyncOpenAI(api_key="unused")
    openai_sync = OpenAI(api_key="unused")
    anthropic_async = AsyncAnthropic(api_key="unused")

    async def sync_chat() -> Any:
        return openai_sync.chat.completions.create(**chat)

    return {
        "direct": lambda: provider.generate(messages, tools, seed=1),
        "openai chat (async)": lambda: openai_async.chat.completions.create(**chat),
        "openai responses (async)": lambda: openai_async.responses.create(**responses),
        "anthropic messages (async)": lambda: anthropic_async.messages.create(**messages_api),
        "openai chat (sync client)": sync_chat,
    }


async def measure(args: argparse.Namespace) -> None:
    bridge.install()
    provider = Instant()
    calls = ways(provider, Conversation())
    await trial(max(50, args.calls // 20), calls, provider)  # warm up: imports, code paths
    repeats = [await trial(args.calls, calls, provider) for _ in range(args.repeats)]
    direct = statistics.median(r["direct"] for r in repeats)
    print(f"{args.calls} calls a way, {args.repeats} repeats; wall time per call, medians")
    print(f"{'way':<28}{'per call':>12}{'overhead':>12}{'range':>20}")
    print(f"{'direct (provider.generate)':<28}{direct:>9.1f} µs{'':>12}")
    for name in [n for n in calls if n != "direct"]:
        each = statistics.median(r[name] for r in repeats)
        over = [r[name] - r["direct"] for r in repeats]
        median = statistics.median(over)
        spread = f"{min(over):.0f}-{max(over):.0f} µs"
        mark = "" if median < TARGET_US else "  (over the 0.5 ms target)"
        print(f"{name:<28}{each:>9.1f} µs{median:>9.1f} µs{spread:>20}{mark}")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=7)
    asyncio.run(measure(parser.parse_args()))


if __name__ == "__main__":
    main()
