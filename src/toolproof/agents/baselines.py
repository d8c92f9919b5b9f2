"""Baseline agents that prove a suite sound: the oracle must pass, the null agent must fail."""

from __future__ import annotations

from toolproof.agents.base import Agent, TrialContext
from toolproof.conversation import is_affirmative
from toolproof.gateway import Gateway

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
            await tools.call(action.tool, dict(action.args))
        self.done = True
        facts = [f[0] if isinstance(f, list) else f for f in self.context.task.spec.expect.must_say]
        return " ".join(["Done.", *facts]).strip()
