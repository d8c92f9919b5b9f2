"""Stretching a conversation to a number of user turns, with the same goal.

The scripted user says filler, clarifications and restatements of its own request between
the task's turns, drawn per trial from its `user` seed stream, until the conversation it
plans has about the target number of user messages. Nothing it adds is a new fact: fillers
say nothing, and restatements repeat the user's own opening. A task whose scripted
conversation is already longer than the target is not cut: it is played as written and
marked, and the checkpoint's metrics leave it out (docs/conversations.md).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from toolproof.spec.user import UserSpec, UserTurn

FILLERS = (
    "One moment, I'm just pulling up my notes.",
    "Thanks for bearing with me.",
    "Sorry, I was distracted for a second.",
    "I'm still here.",
    "Let me just check something on my side first.",
)
"""Said whatever the agent asked: none reads as a yes (or a no) to a confirmation."""
CLARIFICATIONS = (
    "Just to be clear, I'm asking about what I said at the start.",
    "To be clear, nothing else has changed on my side.",
    "I hope that makes sense, I'm not great at explaining these things.",
)
GREETING = re.compile(r"^(hi|hello|hey)( there)?\b[,!.]?\s*", re.IGNORECASE)
RECAPS = ("To recap what I need:", "So, once more, what I'm after:", "Just restating it:")


@dataclass(frozen=True)
class Stretched:
    """A user side stretched toward a target length."""

    user: UserSpec
    target: int
    planned: int
    """The user messages the script plans: the opening, its turns, and one reply if any."""
    added: frozenset[int] = frozenset()
    """The positions of the added turns among the user's turns (they give way to a reply
    that is due, `ScriptedUser(give_way=...)`)."""

    @property
    def too_long(self) -> bool:
        """The task as written already needs more user turns than the target."""
        return self.planned > self.target


def planned_turns(user: UserSpec) -> int:
    """User messages a scripted conversation plans on its usual path: the opening, every
    scripted turn, and one reactive reply (the usual yes) when it has any."""
    return 1 + len(user.turns) + (1 if user.replies else 0)


def stretch(user: UserSpec, target: int, rng: random.Random) -> Stretched:
    """The user side with `target - planned_turns(user)` added turns spread between its own
    (each said whatever the agent replied), and a line for a simulated user."""
    base = planned_turns(user)
    added = [_extra(user, rng) for _ in range(max(0, target - base))]
    turns = list(user.turns)
    for extra in added:
        turns.insert(rng.randint(0, len(turns)), extra)
    manner = (
        f"Keep the conversation going for about {target} messages of yours: add small talk, "
        "clarifications and restatements of your request, without changing what you want."
    )
    persona = " ".join(filter(None, [user.persona, manner]))
    ids = {id(extra) for extra in added}
    return Stretched(
        user=user.model_copy(update={"turns": turns, "persona": persona}),
        target=target,
        planned=base + len(added),
        added=frozenset(i for i, turn in enumerate(turns) if id(turn) in ids),
    )


def _extra(user: UserSpec, rng: random.Random) -> UserTurn:
    kind = rng.choice(("filler", "filler", "clarification", "recap"))
    if kind == "recap":
        first = re.split(r"(?<=[.!?])\s+", " ".join(user.opening.split()))[0]
        first = GREETING.sub("", first) or first
        return UserTurn(say=f"{rng.choice(RECAPS)} {first}")
    pool = FILLERS if kind == "filler" else CLARIFICATIONS
    return UserTurn(say=rng.choice(pool))
