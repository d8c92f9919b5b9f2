"""The scripted user: an opening, turns said in order, and reactive replies.

After each agent reply the user says the next scripted turn if its trigger (`when`) holds;
otherwise the first reactive reply whose trigger holds (each at most `times` times);
otherwise the conversation ends. A turn or reply whose `do:` lists calls of the suite's user
tools makes them first, in order, through the user's own gateway (dual control).

`asks_confirmation` holds when the reply asks the user to decide on a change, worded any way:
it asks (a question, or "please confirm") and it proposes a write its task is waiting for, by
the same binding the `confirm_before_write` rule judges a yes by
(`toolproof.meaning.proposals`), or names a write's action where no negation denies it. So an
agent that asks "I can cancel booking H2002. Would that be alright?" gets its answer, and one
that asks "I will not cancel anything. Shall I double-check the details?" does not.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from toolproof.meaning.actions import actions_named, vocabulary
from toolproof.meaning.clauses import read
from toolproof.meaning.context import Before, in_context
from toolproof.meaning.dialogue import holds, solicits
from toolproof.meaning.proposals import Scene, binds
from toolproof.meaning.records import Records
from toolproof.meaning.values import tokens
from toolproof.spec.expectations import Action, CallSpec
from toolproof.spec.user import UserReply, UserSpec, UserTurn
from toolproof.tools.base import ToolResult, ToolSchema
from toolproof.transcript import MessageEvent, ToolCallEvent

if TYPE_CHECKING:
    from toolproof.spec.task import Task
    from toolproof.transcript import Transcript


class UserTools(Protocol):
    """The user's own tools in a trial (the suite's `user: tools:`), reached through the
    gateway like the agent's: faults apply, and every call is recorded as the user's."""

    @property
    def schemas(self) -> list[ToolSchema]:
        """What the user is told of each tool."""

    async def call(
        self, name: str, arguments: dict[str, Any] | str | None, call_id: str | None = None
    ) -> ToolResult:
        """Make one call of a user tool."""


class User(ABC):
    """The user side of a trial."""

    tools: UserTools | None = None
    """The user's own tools, where the suite gives them some (dual control)."""

    def reach(self, tools: UserTools) -> None:
        """Give the user their own tools for the trial."""
        self.tools = tools

    async def act(self, calls: Sequence[CallSpec]) -> None:
        """Make these calls of the user's own tools, in order (a failed one is recorded and
        the user goes on, as a person tries the next thing)."""
        if self.tools is None:
            return
        for call in calls:
            await self.tools.call(call.tool, dict(call.args))

    @abstractmethod
    def opening(self) -> str:
        """The first message."""

    @abstractmethod
    async def respond(self, agent_reply: str) -> str | None:
        """The next message, or None when the user is done."""


@dataclass(frozen=True)
class Desk:
    """What the user's side knows of the suite's tools: which write, and their parameters."""

    writes: frozenset[str] = frozenset()
    reads: frozenset[str] = frozenset()
    parameters: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    descriptions: Mapping[str, str] = field(default_factory=dict)


@dataclass
class Listener:
    """Hears whether an agent reply proposes a change the task waits for."""

    desk: Desk
    gold: Sequence[Action]
    transcript: Transcript

    def proposes(self, reply: str) -> bool:
        if not solicits(reply):
            return False
        reading = read(reply)
        words = vocabulary(self.desk.writes, self.desk.reads, self.desk.descriptions)
        if actions_named(reading, words):
            return True
        scene = self._scene()
        pending = self._pending()
        readings = [reading, *in_context(reading, self._before(reply), words, scene.records)]
        return any(
            binds(said, a.tool, a.args, self.desk.parameters.get(a.tool, {}), scene, words).proposed
            for a in pending
            for said in readings
        )

    def _before(self, reply: str) -> Before:
        """The agent's message before this reply and what the user said since."""
        before = Before()
        messages = self.transcript.messages()
        if messages and messages[-1].role == "assistant" and messages[-1].content == reply:
            messages = messages[:-1]
        for message in messages:
            if message.role == "assistant":
                before = Before(message.content)
            else:
                before = Before(before.agent, (*before.user, message.content))
        return before

    def _pending(self) -> list[Action]:
        """The task's gold writes the conversation has not yet made."""
        done = [
            (e.canonical_name, e.canonical_arguments)
            for e in self.transcript.tool_calls()
            if not e.is_error
        ]
        pending = []
        for action in self.gold:
            if action.tool not in self.desk.writes:
                continue
            if (action.tool, dict(action.args)) in done:
                done.remove((action.tool, dict(action.args)))
            else:
                pending.append(action)
        return pending

    def _scene(self) -> Scene:
        records = Records()
        heard: list[str] = []
        said = []
        for event in self.transcript.events:
            if isinstance(event, ToolCallEvent) and not event.is_error:
                records.add(event.result, event.canonical_arguments, event.canonical_name)
            elif isinstance(event, MessageEvent):
                said.append(read(event.content))
                if event.role == "user":
                    heard.append(event.content)
        return Scene(records, tuple(tokens(" ".join(heard))), said)


class ScriptedUser(User):
    """Plays a task's `user` section."""

    def __init__(
        self,
        spec: UserSpec,
        give_way: frozenset[int] = frozenset(),
        listener: Listener | None = None,
    ) -> None:
        self.spec = spec
        self.next_turn = 0
        self.used = [0] * len(spec.replies)
        self.give_way = give_way
        """Turns (by index) that wait while a reply is due: the small talk a stretched
        conversation adds never stands in for the answer to the agent's question."""
        self.listener = listener

    def opening(self) -> str:
        return self.spec.opening

    async def respond(self, agent_reply: str) -> str | None:
        turns = self.spec.turns
        proposes = self.listener.proposes(agent_reply) if self.listener is not None else None
        if self.next_turn in self.give_way and (reply := self._reply(agent_reply, proposes)):
            return await self._said(reply)
        if self.next_turn < len(turns) and holds(turns[self.next_turn].when, agent_reply, proposes):
            self.next_turn += 1
            return await self._said(turns[self.next_turn - 1])
        reply = self._reply(agent_reply, proposes)
        return await self._said(reply) if reply is not None else None

    async def _said(self, entry: UserTurn | UserReply) -> str:
        """What a turn or reply says, once the user has done what it does."""
        await self.act(entry.do)
        return entry.say

    def _reply(self, agent_reply: str, proposes: bool | None) -> UserReply | None:
        for i, reply in enumerate(self.spec.replies):
            if self.used[i] < reply.times and holds(reply.when, agent_reply, proposes):
                self.used[i] += 1
                return reply
        return None


UserFactory = Callable[["Task", "Transcript", int], User]
"""Makes a trial's user from its task, its transcript and the trial's seed."""


@dataclass(frozen=True)
class ScriptedUsers:
    """The scripted user side of a run: each task's scripted turns, heard with the suite's
    tools in mind (`desk`; without one, a request to confirm is told by its words)."""

    desk: Desk | None = None

    def __call__(self, task: Task, transcript: Transcript, seed: int = 0) -> User:
        return self.play(task, task.spec.user, transcript)

    def play(
        self,
        task: Task,
        user: UserSpec,
        transcript: Transcript,
        give_way: frozenset[int] = frozenset(),
    ) -> User:
        """The task's user, saying `user` (the task's own, or as a persona rewrote it)."""
        listener = None
        if self.desk is not None:
            listener = Listener(self.desk, task.spec.expect.actions or [], transcript)
        return ScriptedUser(user, give_way, listener)


scripted_user = ScriptedUsers()
"""The default user side: the task's scripted turns (a run gives it the suite's desk)."""
