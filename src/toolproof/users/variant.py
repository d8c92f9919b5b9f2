"""The user side of a persona or checkpoint variant: the run's own user (scripted turns or a
simulated user) given the task's user side as the persona plays it, stretched to the
checkpoint's length, with notes in the transcript for the metrics.

Both kinds of user take the same rewritten user side: the scripted user says its turns, a
simulated user opens with its opening and is told the persona's manner.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from toolproof.seeds import stream_rng
from toolproof.transcript import NoteEvent
from toolproof.users.personas import Persona, perform
from toolproof.users.scripted import ScriptedUsers, User, UserFactory, UserTools
from toolproof.users.stretch import stretch

if TYPE_CHECKING:
    from toolproof.spec.task import Task
    from toolproof.transcript import Transcript


class MarkingUser(User):
    """A user that notes in the transcript when it says the message meant to confuse."""

    def __init__(self, inner: User, confusing: str | None, transcript: Transcript) -> None:
        self.inner = inner
        self.confusing = confusing
        self.transcript = transcript

    def _mark(self, text: str | None) -> None:
        if text is not None and text == self.confusing:
            self.confusing = None  # the first time only
            turn = len(self.transcript.messages("user"))
            self.transcript.add(
                NoteEvent(t=self.transcript.now(), kind="confusing_turn", turn=turn)
            )

    def reach(self, tools: UserTools) -> None:
        super().reach(tools)
        self.inner.reach(tools)

    def opening(self) -> str:
        text = self.inner.opening()
        self._mark(text)
        return text

    async def respond(self, agent_reply: str) -> str | None:
        text = await self.inner.respond(agent_reply)
        self._mark(text)
        return text


def variant_user(base: UserFactory, persona: Persona | None, turns: int | None) -> UserFactory:
    """The run's user factory for trials of a persona (or None) stretched to `turns` user
    messages (or None: as long as the task is)."""
    if persona is None and turns is None:
        return base

    def make(task: Task, transcript: Transcript, seed: int) -> User:
        rng = stream_rng(seed, "user")
        user, confusing, give_way = task.spec.user, None, frozenset[int]()
        if persona is not None:
            performance = perform(persona, task, rng)
            user, confusing = performance.user, performance.confusing
            transcript.add(
                NoteEvent(t=transcript.now(), kind="persona", data={"name": persona.name})
            )
        if turns is not None:
            stretched = stretch(user, turns, rng)
            user, give_way = stretched.user, stretched.added
            transcript.add(
                NoteEvent(
                    t=transcript.now(),
                    kind="stretch",
                    data={"target": turns, "planned": stretched.planned},
                )
            )
        played = replace(task, spec=task.spec.model_copy(update={"user": user}))
        inner = (
            base.play(played, user, transcript, give_way)
            if isinstance(base, ScriptedUsers) and give_way
            else base(played, transcript, seed)
        )
        return MarkingUser(inner, confusing, transcript)

    return make
