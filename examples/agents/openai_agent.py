"""The retail support agent written with the plain OpenAI SDK: a Chat Completions tool loop.

This is the code a team ships, unchanged for toolproof: it calls
`client.chat.completions.create` and reads `.choices[0].message.tool_calls`. Run in a trial,
its calls pass the model bridge: with `--model`, the run's model answers them (any provider
toolproof has; no key or network with the scripted one); without `--model` they go to OpenAI
as written. Either way they are the trial's model calls: tokens, cost, latency, seed.

    toolproof run examples/retail --agent python:examples/agents/openai_agent.py:agent \\
        --model scripted/examples/agents/retail.script.yaml \\
        --tasks status-latest-order-by-email,payment-amount-and-card --trials 1 --k 1
"""

from __future__ import annotations

import functools
import json
import os
from typing import Any

from openai import AsyncOpenAI

from toolproof.agents.external import Conversation, ToolHandle

MODEL = os.environ.get("SUPPORT_MODEL", "gpt-4o-mini")


@functools.cache
def openai_client() -> AsyncOpenAI:
    """One client for the process (building one costs ~0.1 s). With --model the bridge
    answers every call, so no key is needed then."""
    return AsyncOpenAI(api_key=os.environ.get("OPENAI_API_KEY", "unused"))


async def agent(conversation: Conversation, tools: ToolHandle) -> str:
    """Answer the latest user message, calling tools until the model answers in text."""
    client = openai_client()
    messages: list[Any] = conversation.state.setdefault(
        "messages", [{"role": "system", "content": conversation.policy}]
    )
    messages.append({"role": "user", "content": conversation.latest})
    while True:
        answer = await client.chat.completions.create(
            model=MODEL, messages=messages, tools=tools.openai_tools
        )
        message = answer.choices[0].message
        messages.append(message)
        if not message.tool_calls:
            return message.content or ""
        for call in message.tool_calls:
            if call.type != "function":
                continue
            result = await tools.call(call.function.name, call.function.arguments)
            messages.append(
                {"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)}
            )
