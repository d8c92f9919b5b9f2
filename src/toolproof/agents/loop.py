"""The built-in agent loop, written once against the ModelClient interface.

A model turn; then zero or more tool calls (parallel calls run concurrently); results go back;
and so on until the model answers in text. `max_steps` bounds the model turns of a trial.
"""

from __future__ import annotations

import asyncio

import orjson

from toolproof.agents.base import Agent, TrialContext
from toolproof.errors import AgentFailure
from toolproof.gateway import Gateway
from toolproof.models.base import ContextOverflow, Message, ModelClient, ToolCall
from toolproof.seeds import stream_seed
from toolproof.tools.base import ToolResult
from toolproof.transcript import ModelCallEvent


class LoopAgent(Agent):
    """A model plus the tool-calling loop, with the suite's policy as system prompt."""

    def __init__(self, model: ModelClient, context: TrialContext) -> None:
        self.model = model
        self.context = context
        self.messages: list[Message] = []
        if context.suite.policy:
            self.messages.append(Message(role="system", content=context.suite.policy))
        self.steps = 0

    async def reply(self, message: str, tools: Gateway) -> str:
        self.messages.append(Message(role="user", content=message))
        transcript = self.context.transcript
        while True:
            if self.steps >= self.context.max_steps:
                raise AgentFailure("max_steps", f"cut after {self.steps} model turns (max_steps)")
            self.steps += 1
            started = transcript.now()
            try:
                response = await self.model.generate(
                    self.messages,
                    tools.schemas,
                    seed=stream_seed(self.context.seed, "model", self.steps),
                )
            except ContextOverflow as exc:
                raise AgentFailure("context_overflow", f"context window exceeded: {exc}") from None
            answer = response.message
            transcript.add(
                ModelCallEvent(
                    t=started,
                    model=self.model.name,
                    content=answer.content,
                    tool_calls=answer.tool_calls,
                    usage=response.usage,
                    latency_s=response.latency_s,
                    cost_usd=response.cost_usd,
                    stop_reason=response.stop_reason,
                )
            )
            self.messages.append(answer)
            if not answer.tool_calls:
                return answer.content
            results = await asyncio.gather(*(self._call(c, tools) for c in answer.tool_calls))
            for call, result in zip(answer.tool_calls, results, strict=True):
                self.messages.append(
                    Message(
                        role="tool",
                        content=orjson.dumps(result.content).decode(),
                        tool_call_id=call.id,
                        name=call.name,
                        is_error=result.is_error,
                    )
                )

    async def _call(self, call: ToolCall, tools: Gateway) -> ToolResult:
        arguments = call.arguments if call.arguments is not None else call.raw_arguments
        return await tools.call(call.name, arguments, call.id)
