"""The retail support agent as a LangGraph graph (`pip install langgraph`).

A model node and LangGraph's own `ToolNode`, looping until the model answers in text. The
trial's tools come as LangChain tools, `tools.langchain()`, each calling through toolproof's
gateway; the model node calls the official `openai` client, so the model bridge records its
calls and `--model` picks the model that answers them.

    toolproof run examples/retail --agent python:examples/agents/langgraph_agent.py:agent \\
        --model scripted/examples/agents/retail.script.yaml \\
        --tasks tracking-number-by-phone --trials 1 --k 1
"""

from __future__ import annotations

import json
import os
from typing import Any

from langchain_core.messages import (
    AIMessage,
    HumanMessage,
    SystemMessage,
    convert_to_openai_messages,
)
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from openai import AsyncOpenAI

from toolproof.agents.external import Conversation, ToolHandle

MODEL = os.environ.get("SUPPORT_MODEL", "gpt-4o-mini")


def graph(client: AsyncOpenAI, tools: ToolHandle) -> Any:
    """model -> (tools -> model)* -> end."""

    async def model(state: MessagesState) -> dict[str, list[AIMessage]]:
        answer = await client.chat.completions.create(
            model=MODEL,
            messages=convert_to_openai_messages(state["messages"]),
            tools=tools.openai_tools,
        )
        message = answer.choices[0].message
        calls = [
            {"id": c.id, "name": c.function.name, "args": json.loads(c.function.arguments or "{}")}
            for c in message.tool_calls or []
            if c.type == "function"
        ]
        return {"messages": [AIMessage(content=message.content or "", tool_calls=calls)]}

    builder = StateGraph(MessagesState)
    builder.add_node("model", model)
    builder.add_node("tools", ToolNode(tools.langchain()))
    builder.add_edge(START, "model")
    builder.add_conditional_edges("model", tools_condition)
    builder.add_edge("tools", "model")
    builder.add_edge("model", END)
    return builder.compile()


async def agent(conversation: Conversation, tools: ToolHandle) -> str:
    """One run of the graph per user message; the messages are kept in `state`."""
    client = AsyncOpenAI(api_key=os.environ.get("OPENAI_API_KEY", "unused"))
    messages = conversation.state.get("messages") or [SystemMessage(conversation.policy)]
    messages = [*messages, HumanMessage(conversation.latest)]
    result = await graph(client, tools).ainvoke({"messages": messages}, {"recursion_limit": 60})
    conversation.state["messages"] = result["messages"]
    return str(result["messages"][-1].content)
