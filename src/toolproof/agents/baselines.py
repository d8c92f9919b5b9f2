"""Baseline agents that prove a suite sound: the oracle must pass, the null agent must fail."""

from __future__ import annotations

import asyncio
from typing import Any

from toolproof.agents.base import Agent, TrialContext
from toolproof.conversation import is_affirmative
from toolproof.errors import AgentFailure
from toolproof.gateway import Gateway
from toolproof.gateway.drift import DriftError
from toolproof.tools.base import ToolResult

NULL_REPLY = "I'm sorry, I can't help with that."


class NullAgent(Agent):
    """Calls nothing and says nothing useful. Every task must fail it."""

    def __init__(self, context: TrialContext) -> None:
        self.context = context

    async def reply(self, message: str, tools: Gateway) -> str:
        return NULL_REPLY


class OracleAgent(Agent):
    """Replays the task's gold actions and states the facts the user must hear.

    When the suite requires confirmation before writes, it performs the actions up to the
    first write, asks for confirmation, and goes on once the user says yes.
    """

    def __init__(self, context: TrialContext) -> None:
        self.context = context
        expect = context.task.spec.expect
        self.pending = list(expect.actions or [])
        self.confirm = "confirm_before_write" in context.suite.file.policy_rules
        self.asked = False
        self.done = False

    async def reply(self, message: str, tools: Gateway) -> str:
        if self.done:
            return "You're welcome. Is there anything else?"
        if self.asked and not is_affirmative(message):
            return "To be sure: shall I go ahead with that? (yes/no)"
        while self.pending:
            action = self.pending[0]
            if self.confirm and not self.asked and tools.is_write(action.tool):
                self.asked = True
                return f"I can do that: {action.tool}. Shall I go ahead? (yes/no)"
            self.pending.pop(0)
            await self.perform(action.tool, dict(action.args), tools)
        self.done = True
        facts = [f[0] if isinstance(f, list) else f for f in self.context.task.spec.expect.must_say]
        return " ".join(["Done.", *facts]).strip()

    async def perform(self, tool: str, args: dict[str, Any], tools: Gateway) -> ToolResult:
        """One gold action, called by the suite's own names: this oracle knows only the API
        it was written against, so schema drift breaks it, as it would a hard-coded client."""
        return await tools.call(tool, args)


class RetryingOracle(OracleAgent):
    """The oracle that handles every injected fault the right way: it waits out a 429 for
    its Retry-After, refreshes an expired token, and tries again after a server error, a
    timeout, or a damaged answer; and it calls the API as drift has changed it. Every fault
    profile and drift variant a suite ships must be survivable by it.
    """

    attempts = 8

    async def call(self, tool: str, args: dict[str, Any], tools: Gateway) -> ToolResult:
        """One call of a suite tool through the agent-facing (possibly drifted) API."""
        try:
            name, arguments = tools.present(tool, args)
        except DriftError as exc:
            raise AgentFailure("drift_unexpressible", str(exc)) from None
        return await tools.call(name, arguments)

    async def perform(self, tool: str, args: dict[str, Any], tools: Gateway) -> ToolResult:
        refresh = self.context.suite.file.faults.refresh_tool
        result = await self.call(tool, args, tools)
        for attempt in range(1, self.attempts):
            if not result.is_error:
                break
            if result.error_kind == "token_expired" and refresh:
                await self.call(refresh, {}, tools)
            elif result.error_kind == "rate_limit":
                wait = _retry_after(result.content)
                await asyncio.sleep(wait * tools.time_scale)
            else:
                await asyncio.sleep(min(2.0, 0.1 * 2**attempt) * tools.time_scale)
            result = await self.call(tool, args, tools)
        return result


def _retry_after(content: Any) -> float:
    error = content.get("error") if isinstance(content, dict) else None
    if isinstance(error, dict) and isinstance(error.get("retry_after_s"), int | float):
        return float(error["retry_after_s"])
    return 1.0
