"""The Agent interface: answer one user message, calling tools through the gateway."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass

from toolproof.gateway import Gateway
from toolproof.spec.task import Task
from toolproof.suite.loaded import Suite
from toolproof.transcript import Transcript


@dataclass
class TrialContext:
    """What an agent may know about its trial. Only baselines look at the task itself."""

    suite: Suite
    task: Task
    seed: int
    transcript: Transcript
    max_steps: int
    declined: tuple[str, ...] = ()
    """The writes the task's answer declines, as the graders derive them (for baselines)."""
    user_tools: Gateway | None = None
    """The user's own tools (dual control), for a baseline that plays both sides."""
    turn_timeout_s: float = 300.0
    """Seconds one turn of the agent may take (--agent-timeout, the suite's
    defaults.agent_timeout_s)."""


class Agent(ABC):
    """One agent for one trial; it keeps its own memory of the conversation."""

    @abstractmethod
    async def reply(self, message: str, tools: Gateway) -> str:
        """Answer the user's message, calling tools as needed; return the text for the user."""


AgentFactory = Callable[[TrialContext], Agent]
