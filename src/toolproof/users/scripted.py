"""The scripted user: an opening, turns said in order, and reactive replies.

After each agent reply the user says the next scripted turn if its trigger (`when`) holds;
otherwise the first reactive reply whose trigger holds (each at most `times` times);
otherwise the conversation ends.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import TYPE_CHECKING

from toolproof.meaning.dialogue import holds
from toolproof.spec.user import UserSpec

if TYPE_CHECKING:
    from toolproof.spec.task import Task
    from toolproof.transcript import Transcript


class User(ABC):
    """The user side of a trial."""

    @abstractmethod
    def opening(self) -> str:
        """The first message."""

    @abstractmethod
    async def respond(self, agent_reply: str) -> str | None:
        """The next message, or None when the user is done."""


class ScriptedUser(User):
    """Plays a task's `user` section."""

    def __init__(self, spec: UserSpec, give_way: frozenset[int] = frozenset()) -> None:
        self.spec = spec
        self.next_turn = 0
        self.used = [0] * len(spec.replies)
        self.give_way = give_way
        """Turns (by index) that wait while a reply is due: the small talk a stretched
        conversation adds never stands in for the answer to the agent's question."""

    def opening(self) -> str:
        return self.spec.opening

    async def respond(self, agent_reply: str) -> str | None:
        turns = self.spec.turns
        if self.next_turn in self.give_way and (reply := self._reply(agent_reply)) is not None:
            return reply
        if self.next_turn < len(turns) and holds(turns[self.next_turn].when, agent_reply):
            self.next_turn += 1
            return turns[self.next_turn - 1].say
        return self._reply(agent_reply)

    def _reply(self, agent_reply: str) -> str | None:
        for i, reply in enumerate(self.spec.replies):
            if self.used[i] < reply.times and holds(reply.when, agent_reply):
                self.used[i] += 1
                return reply.say
        return None


UserFactory = Callable[["Task", "Transcript", int], User]
"""Makes a trial's user from its task, its transcript and the trial's seed."""


def scripted_user(task: Task, transcript: Transcript, seed: int = 0) -> User:
    """The default user side: the task's scripted turns."""
    return ScriptedUser(task.spec.user)
