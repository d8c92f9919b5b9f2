"""The retail support agent on Pydantic AI (`pip install pydantic-ai-slim[openai]`).

The trial's tools come as Pydantic AI `Tool`s, `tools.pydantic_ai()`, each calling through
toolproof's gateway; the agent's model calls go through the official `openai` client, so the
model bridge records them and `--model` picks the model that answers them.

    toolproof run examples/retail --agent python:examples/agents/pydantic_ai_agent.py:agent \\
        --model scripted/examples/agents/retail.script.yaml \\
        --tasks status-latest-order-by-email --trials 1 --k 1
"""

from __future__ import annotations

import os

from openai import AsyncOpenAI
from pydantic_ai import Agent
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from toolproof.agents.external import Conversation, ToolHandle

MODEL = os.environ.get("SUPPORT_MODEL", "gpt-4o-mini")


async def agent(conversation: Conversation, tools: ToolHandle) -> str:
    """One agent run per user message; the message history is kept in `state`."""
    client = AsyncOpenAI(api_key=os.environ.get("OPENAI_API_KEY", "unused"))
    model = OpenAIChatModel(MODEL, provider=OpenAIProvider(openai_client=client))
    support = Agent(model, instructions=conversation.policy, tools=tools.pydantic_ai())
    result = await support.run(
        conversation.latest, message_history=conversation.state.get("history")
    )
    conversation.state["history"] = result.all_messages()
    return result.output
