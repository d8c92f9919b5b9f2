"""The retail support agent written with the Anthropic SDK: a Messages tool loop.

The team's own code: it calls `client.messages.create`, walks `.content` for `tool_use`
blocks and answers them with `tool_result` blocks. In a trial its calls pass the model
bridge: with `--model` the run's model answers them (any provider toolproof has), without
`--model` they go to Anthropic as written; either way they are the trial's model calls.

    toolproof run examples/retail --agent python:examples/agents/anthropic_agent.py:agent \\
        --model scripted/examples/agents/retail.script.yaml \\
        --tasks tracking-number-by-phone --trials 1 --k 1
"""

from __future__ import annotations

import functools
import json
import os
from typing import Any

from anthropic import AsyncAnthropic

from toolproof.agents.external import Conversation, ToolHandle

MODEL = os.environ.get("SUPPORT_MODEL", "claude-haiku-4-5")


@functools.cache
def anthropic_client() -> AsyncAnthropic:
    """One client for the process (building one costs ~0.1 s). With --model the bridge
    answers every call, so no key is needed then."""
    return AsyncAnthropic(api_key=os.environ.get("ANTHROPIC_API_KEY", "unused"))


async def agent(conversation: Conversation, tools: ToolHandle) -> str:
    """Answer the latest user message, calling tools until the model answers in text."""
    client = anthropic_client()
    messages: list[dict[str, Any]] = conversation.state.setdefault("messages", [])
    messages.append({"role": "user", "content": conversation.latest})
    while True:
        answer = await client.messages.create(
            model=MODEL,
            max_tokens=1024,
            system=conversation.policy,
            messages=messages,
            tools=tools.anthropic_tools,
        )
        messages.append({"role": "assistant", "content": answer.content})
        uses = [block for block in answer.content if block.type == "tool_use"]
        if not uses:
            return "".join(block.text for block in answer.content if block.type == "text")
        results = []
        for use in uses:
            result = await tools.call(use.name, use.input)
            results.append(
                {"type": "tool_result", "tool_use_id": use.id, "content": json.dumps(result)}
            )
        messages.append({"role": "user", "content": results})
