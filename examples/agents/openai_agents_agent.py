"""The retail support agent on the OpenAI Agents SDK (`pip install openai-agents`).

The trial's tools come in the SDK's own form, `tools.openai_agents()`, each a `FunctionTool`
calling through toolproof's gateway (faults, drift, load apply); the SDK's model calls (the
Responses API) pass the model bridge, so `--model` picks the model that answers them.

    toolproof run examples/retail --agent python:examples/agents/openai_agents_agent.py:agent \\
        --model scripted/examples/agents/retail.script.yaml \\
        --tasks payment-amount-and-card --trials 1 --k 1
"""

from __future__ import annotations

import os

from agents import Agent, OpenAIResponsesModel, RunConfig, Runner
from openai import AsyncOpenAI

from toolproof.agents.external import Conversation, ToolHandle

MODEL = os.environ.get("SUPPORT_MODEL", "gpt-4o-mini")


async def agent(conversation: Conversation, tools: ToolHandle) -> str:
    """One run of the SDK's agent loop per user message, the history kept in `state`."""
    client = AsyncOpenAI(api_key=os.environ.get("OPENAI_API_KEY", "unused"))
    support = Agent(
        name="support",
        instructions=conversation.policy,
        tools=tools.openai_agents(),
        model=OpenAIResponsesModel(model=MODEL, openai_client=client),
    )
    history = conversation.state.get("history", [])
    history = [*history, {"role": "user", "content": conversation.latest}]
    result = await Runner.run(
        support, history, max_turns=30, run_config=RunConfig(tracing_disabled=True)
    )
    conversation.state["history"] = result.to_input_list()
    return str(result.final_output)
