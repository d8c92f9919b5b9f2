"""Personas: the same task, said by a messier user.

A persona rewrites a task's user side (its opening, scripted turns and replies) without
changing what the user wants: every expectation of the task still holds. Each rewrite is
deterministic per trial (it draws from the trial's `user` seed stream), needs no model, and
adds a line to what a simulated user is told about its manner. A persona never adds a fact
the agent must look up (a grounded `must_say` fact) or one it must not say: a rewrite that
would is not used.

Each way of saying a task is a registration in `PERSONAS` (`@persona(NAME, prompt=...)` on
its rewrite of a `Play`). Confusing personas (`confusing()`) mark the message meant to
confuse, so the metrics can count the turns the agent takes to get back on track
(docs/metrics.md, "Personas"). The mark is on the message's place, not its words, so it
holds whatever a later built-in or a suite's own `prefix` and `turns` make of that message.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from toolproof.errors import UsageError
from toolproof.meaning.values import mentions
from toolproof.registry import Registry
from toolproof.spec.expectations import Action, CallSpec
from toolproof.spec.task import Task
from toolproof.spec.user import BUILTIN_PERSONAS, Match, PersonaSpec, UserSpec, UserTurn

__all__ = [
    "BUILTIN_PERSONAS",
    "PERSONAS",
    "Performance",
    "Persona",
    "PersonaKind",
    "Play",
    "confusing",
    "perform",
    "resolve_persona",
]

ASKS = Match(
    regex=r"\?|\b(which|what|provide|share|send|give|need|tell|clarify|confirm|could you|can you)\b"
)
"""When the agent asks for something: a question, or a request for details."""


@dataclass(frozen=True)
class Performance:
    """A task's user side as a persona plays it."""

    user: UserSpec
    """What the scripted user says; its `persona` is what a simulated user is told."""
    confusing: str | None = None
    """The message meant to confuse, as said (None: none, or nothing to confuse about)."""


@dataclass(frozen=True)
class Detail:
    """A value of the task's goal that the user says: an order id, an email."""

    value: str
    noun: str
    key: str

    @property
    def is_reference(self) -> bool:
        """It names something that exists (an id, an email, a phone number), rather than
        giving new information (an address, a date)."""
        return "@" in self.value or (
            " " not in self.value
            and any(c.isdigit() for c in self.value)
            and any(c.isalpha() for c in self.value)
        )

    @property
    def is_id(self) -> bool:
        """It is the id of the thing the request is about (`order_id`)."""
        return self.key.endswith(("_id", "_no", "_number")) and self.is_reference


@dataclass(frozen=True)
class Persona:
    """A named persona: built-ins applied in order, then a suite's own words."""

    name: str
    use: tuple[str, ...]
    own: PersonaSpec | None = None

    @property
    def plain(self) -> bool:
        """It plays the task as written (`cooperative`, alone or with no words of its own):
        the plain variant already runs exactly that."""
        own = self.own
        words = own is not None and bool(own.prefix or own.turns or own.prompt)
        return not words and all(name == "cooperative" for name in self.use)


def resolve_persona(name: str, declared: dict[str, PersonaSpec]) -> Persona:
    """A persona by name: the suite's own, else a registered one; unknown is a usage error,
    and so is a plug-in's persona that fails to import (found before any trial runs)."""
    if name in declared:
        found = Persona(name, tuple(declared[name].use), declared[name])
    elif name in PERSONAS:
        found = Persona(name, (name,))
    else:
        known = ", ".join([*declared, PERSONAS.known()])
        raise UsageError(f"--persona {name}: no such persona (known: {known})")
    for used in found.use:
        PERSONAS.get(used, where=f"--persona {name}")
    return found


@dataclass(frozen=True)
class PersonaKind:
    """A way of saying a task: how it rewrites the user side, and what a simulated user is
    told about its manner."""

    name: str
    play: Callable[[Play], None]
    prompt: str
    confusing: bool = False
    """It says one message meant to confuse, and marks it (`Play.mark`)."""


PERSONAS: Registry[PersonaKind] = Registry("persona", plugins="persona")
"""Every built-in way of saying a task by name, the ones a suite's `use:` and `--persona`
take; installed packages add theirs as `persona.NAME` entry points (a factory returning a
`PersonaKind`)."""


def persona(
    name: str, *, prompt: str, confusing: bool = False
) -> Callable[[Callable[[Play], None]], Callable[[Play], None]]:
    """Register the decorated rewrite as the persona `name`, with what a simulated user is
    told (`prompt`) and whether it marks a message meant to confuse."""

    def add(play: Callable[[Play], None]) -> Callable[[Play], None]:
        kind = PersonaKind(name, play, prompt, confusing)
        PERSONAS.register(name)(lambda: kind)
        return play

    return add


def confusing() -> frozenset[str]:
    """The personas that say one message meant to confuse (marked for the recovery
    measure)."""
    return frozenset(name for name in PERSONAS if PERSONAS.get(name).confusing)


@dataclass
class Play:
    """A rewrite in progress: the user side so far and what the rewrite knows of the task."""

    user: UserSpec
    task: Task
    rng: random.Random
    prompt: list[str] = field(default_factory=list)
    confusing: int | None = None
    """Where the message meant to confuse is: 0 the opening, i the user's i-th turn."""

    def safe(self, text: str) -> bool:
        """The text adds no fact the agent must look up or must not say."""
        return _new_fact(text, self.task) is None

    def pick(self, options: Sequence[str]) -> str | None:
        """One of the options, drawn in seeded order, that is safe to say."""
        shuffled = list(options)
        self.rng.shuffle(shuffled)
        return next((o for o in shuffled if self.safe(o)), None)

    def insert(self, *turns: UserTurn) -> None:
        """Turns said right after the opening, before the task's own (a marked turn moves
        down with them)."""
        self.user = self.user.model_copy(update={"turns": [*turns, *self.user.turns]})
        if self.confusing:
            self.confusing += len(turns)

    def say_first(self, opening: str) -> None:
        self.user = self.user.model_copy(update={"opening": opening})

    def mark(self, place: int) -> None:
        """Marks the message at `place` (0: the opening, i: the i-th turn) as the one meant
        to confuse; with two confusing built-ins, the one said first is the mark."""
        self.confusing = place if self.confusing is None else min(self.confusing, place)

    def marked(self) -> str | None:
        """The marked message as it is said now, after every rewrite."""
        if self.confusing is None:
            return None
        if self.confusing == 0:
            return self.user.opening
        return self.user.turns[self.confusing - 1].say


def perform(persona: Persona, task: Task, rng: random.Random) -> Performance:
    """The task's user side as the persona plays it, drawn from `rng` (the trial's user
    stream)."""
    play = Play(task.spec.user, task, rng)
    for name in persona.use:
        kind = PERSONAS.get(name, where=f"persona '{persona.name}'")
        kind.play(play)
        play.prompt.append(kind.prompt)
    own = persona.own
    if own is not None:
        if own.prefix:
            play.say_first(f"{own.prefix} {play.user.opening}")
        play.insert(*own.turns)
        if own.prompt:
            play.prompt.append(own.prompt)
    original = task.spec.user
    manner = " ".join(filter(None, [original.persona, *play.prompt]))
    knows = original.instructions or task.spec.story or original.opening
    user = play.user.model_copy(update={"persona": manner, "instructions": knows})
    return Performance(user=user, confusing=play.marked())


def leaked(persona: Persona, task: Task) -> str | None:
    """A fact the persona's own words say that the task requires the agent to look up or
    never to say; None when there is none."""
    if persona.own is None:
        return None
    return _new_fact(" ".join([persona.own.prefix, *(t.say for t in persona.own.turns)]), task)


# ---------------------------------------------------------------- what a task's user says


def _said(user: UserSpec) -> list[str]:
    return [user.opening, *(t.say for t in user.turns), *(r.say for r in user.replies)]


def _new_fact(text: str, task: Task) -> str | None:
    """A protected fact (`_protected`) the text says and the task's user side does not."""
    said = " ".join(_said(task.spec.user))
    return next((f for f in _protected(task) if mentions(text, f) and not mentions(said, f)), None)


def _protected(task: Task) -> list[str]:
    """Facts the user must never be the source of: grounded must_say facts (every form) and
    must_not_say."""
    expect = task.spec.expect
    grounded = [o for f in expect.facts() if f.source == "tools" for o in f.sources]
    return [*grounded, *expect.must_not_say]


def details(task: Task) -> list[Detail]:
    """The goal's values the opening says (gold action or required call arguments), in the
    order said."""
    expect = task.spec.expect
    calls: list[Action | CallSpec] = [*(expect.actions or []), *expect.calls]
    found: dict[str, tuple[int, Detail]] = {}
    opening = task.spec.user.opening
    for call in calls:
        for key, value in call.args.items():
            text = _text(value)
            if text is None or text in found:
                continue
            where = _find(opening, text)
            if where is not None:
                found[text] = (where.start(), Detail(text, _noun(key), key))
    return [d for _, d in sorted(found.values(), key=lambda item: item[0])]


def _text(value: Any) -> str | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        return str(int(value)) if abs(value) >= 100 else None
    if isinstance(value, str) and len(value) >= 3:
        return value
    return None


def _find(text: str, value: str) -> re.Match[str] | None:
    return re.search(rf"(?<![\w@.-]){re.escape(value)}(?![\w@-])", text)


def _noun(key: str) -> str:
    """`order_id` -> "order", `email` -> "email"."""
    for suffix in ("_id", "_no", "_number", "_ref"):
        key = key.removesuffix(suffix)
    return key.replace("_", " ") or "one"


def _replace(text: str, value: str, new: str) -> str:
    match = _find(text, value)
    if match is None:
        return text
    return text[: match.start()] + new + text[match.end() :]


def _squash(text: str) -> str:
    return " ".join(text.split())


# ---------------------------------------------------------------- the built-ins


@persona("cooperative", prompt="")
def cooperative(play: Play) -> None:
    """The task as written."""


@persona(
    "corrector",
    prompt=(
        "Once, give a wrong value of a detail (an id, a date, an amount) and correct it "
        "yourself right after; the corrected value is the one you mean."
    ),
    confusing=True,
)
def corrector(play: Play) -> None:
    """States a wrong value of a goal detail, then corrects it in the same message or the
    next: the right value is the last one said."""
    found = details(play.task)
    if not found:
        return
    detail = play.rng.choice(found)
    wrong = _wrong(detail.value, play)
    if wrong is None:
        return
    opening = play.user.opening
    if play.rng.random() < 0.5:
        opening = _replace(opening, detail.value, f"{wrong} (sorry, I mean {detail.value})")
        play.say_first(_squash(opening))
    else:
        play.say_first(_squash(_replace(opening, detail.value, wrong)))
        play.insert(UserTurn(say=f"Sorry, I got that wrong, it is not {wrong}: {detail.value}."))
    play.mark(0)


def _wrong(value: str, play: Play) -> str | None:
    """A near miss of the value (one character changed) that says nothing protected and
    is not said anywhere in the task's user side."""
    said = " ".join(_said(play.task.spec.user))
    positions = [i for i, ch in enumerate(value.split("@")[0]) if ch.isalnum()]
    for _ in range(20):
        i = play.rng.choice(positions)
        pool = "0123456789" if value[i].isdigit() else "abcdefghijklmnopqrstuvwxyz"
        ch = play.rng.choice([c for c in pool if c != value[i].lower()])
        if value[i].isupper():
            ch = ch.upper()
        wrong = value[:i] + ch + value[i + 1 :]
        if play.safe(wrong) and _find(said, wrong) is None:
            return wrong
    return None


@persona(
    "ambiguous",
    prompt=(
        "Refer to things vaguely at first ('my order', 'that one') instead of by id or name; "
        "give the exact reference when the agent asks for it."
    ),
    confusing=True,
)
def ambiguous(play: Play) -> None:
    """Partial references in place of the goal's ids and names on first mention; the full
    reference once the agent asks."""
    found = [d for d in details(play.task) if d.is_reference]
    if not found:
        return
    opening = play.user.opening
    for detail in found:
        opening = _vague(opening, detail)
    play.say_first(_squash(opening))
    exact = ", ".join(f"the {d.noun} is {d.value}" for d in found)
    play.insert(UserTurn(say=f"Sorry, to be exact: {exact}.", when=ASKS))
    play.mark(0)


def _vague(text: str, detail: Detail) -> str:
    noun = re.escape(detail.noun.split()[-1])
    named = re.compile(
        rf"\b(?:(?:my|the|your|our|this|that)\s+)?{noun}\s+(?:#|no\.?\s*|number\s+)?"
        rf"{re.escape(detail.value)}(?![\w@-])",
        re.IGNORECASE,
    )
    if named.search(text):
        return named.sub(f"my {detail.noun}", text, count=1)
    vague = "the usual one" if "@" in detail.value else "the one I mentioned before"
    match = _find(text, detail.value)
    if match is not None and re.search(r"(^|[.!?])\s*$", text[: match.start()]):
        vague = f"It's {vague}."  # a sentence of its own
    return _replace(text, detail.value, vague)


CONTRADICTIONS = (
    (
        "Actually, no, forget it, leave everything as it is.",
        "Sorry, I was confused: I do want what I asked for first.",
    ),
    (
        "Or maybe don't do anything yet, I'm not sure.",
        "To clear that up: please do what I asked at the start.",
    ),
    (
        "On second thought, drop the whole thing.",
        "Ignore what I said about dropping it: I still want what I first asked for.",
    ),
)


@persona(
    "contradictory",
    prompt=(
        "Early on, say something that contradicts your request (as if you were changing your "
        "mind); when the agent asks, make clear you want what you asked for first."
    ),
    confusing=True,
)
def contradictory(play: Play) -> None:
    """Takes the request back in the same message; resolves it once the agent asks."""
    options = [pair for pair in CONTRADICTIONS if play.safe(pair[0]) and play.safe(pair[1])]
    if not options:
        return
    against, resolved = play.rng.choice(options)
    play.say_first(_squash(f"{play.user.opening} {against}"))
    play.insert(UserTurn(say=resolved, when=ASKS))
    play.mark(0)


ASIDES = (
    "Unrelated, but do you know a good podcast for long drives?",
    "Random question while I have you: what's the weather like where you are?",
    "Quick aside, do you happen to know a good recipe for banana bread?",
    "Off topic, but have you seen any good films lately?",
)
BACK = (
    "Anyway, back to what I asked for at the start.",
    "Sorry, where were we? Back to my request from before.",
)


@persona(
    "topic-switcher",
    prompt=("Once, in the middle, ask an unrelated question; then come back to what you want."),
    confusing=True,
)
def topic_switcher(play: Play) -> None:
    """An unrelated question after the opening, then back to the goal."""
    aside, back = play.pick(ASIDES), play.pick(BACK)
    if aside is None or back is None:
        return
    play.insert(UserTurn(say=aside), UserTurn(say=back))
    play.mark(1)


PLEASANTRIES = re.compile(
    r"^\s*(hi|hello|hey)( there)?\b[,!.]?\s*|\b(please|thanks|thank you)\b[,!.]?\s*",
    re.IGNORECASE,
)


@persona(
    "terse",
    prompt=("Use as few words as you can; give details only when the agent asks for them."),
)
def terse(play: Play) -> None:
    """Minimal words: no greetings or pleasantries, and the sentences that give goal details
    other than the id the request is about left out of the opening until the agent asks
    (then said verbatim)."""
    found = details(play.task)
    ids = [d for d in found if d.is_id]
    others = [d for d in found if not d.is_id]
    kept: list[str] = []
    held: list[str] = []
    for sentence in re.split(r"(?<=[.!?])\s+", _squash(play.user.opening)):
        held_back = ids and _says(sentence, others) and not _says(sentence, ids)
        (held if held_back else kept).append(sentence)
    play.say_first(_plain(" ".join(kept)))
    turns = [t.model_copy(update={"say": _plain(t.say)}) for t in play.user.turns]
    replies = [r.model_copy(update={"say": _plain(r.say)}) for r in play.user.replies]
    play.user = play.user.model_copy(update={"turns": turns, "replies": replies})
    if held:
        play.insert(UserTurn(say=" ".join(held), when=ASKS))


def _says(text: str, found: Sequence[Detail]) -> bool:
    return any(_find(text, d.value) for d in found)


def _plain(text: str) -> str:
    """The text without pleasantries, starting with a capital unless it starts with a value
    (an email, an id) whose case is the user's."""
    short = _squash(PLEASANTRIES.sub("", text)).strip(" ,")
    if not short:
        return text
    first = short.split()[0]
    if any(c.isdigit() or c in "@._" for c in first):
        return short
    return short[:1].upper() + short[1:]


PUSHES = (
    "Quick one, I'm in a hurry.",
    "I don't have much time, so fast please.",
    "Need this sorted fast.",
)
REPEATS = ("Still waiting. Can you hurry up? Again:", "Hello? This is taking long. Once more:")


@persona(
    "impatient",
    prompt=(
        "Be short and impatient: push the agent to hurry and repeat your request if it takes long."
    ),
)
def impatient(play: Play) -> None:
    """Short on patience: pushes for speed up front and repeats the request."""
    push, again = play.pick(PUSHES), play.pick(REPEATS)
    original = _plain(play.user.opening)
    if push is not None:
        play.say_first(f"{push} {original}")
    if again is not None:
        play.insert(UserTurn(say=f"{again} {original}"))
