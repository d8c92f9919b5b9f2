"""What a bare question asks about: "Is that OK?", "Shall I go ahead?" name no action and no
record of their own, and ask about what came before them (the agent's previous message, the
user's request or correction since). The consent rule and the scripted user read a proposal
with that context the same way."""

from __future__ import annotations

from dataclasses import dataclass

from toolproof.meaning.actions import Vocabulary, actions_named, reads_named
from toolproof.meaning.clauses import Reading, read
from toolproof.meaning.records import Records, referred


def bare(reading: Reading, vocabulary: Vocabulary, records: Records) -> bool:
    """The message's question names no action, no lookup and no record of its own ("Is that
    OK?", "Shall I go ahead with this?"): it asks about what was said before it. A message
    that asks nothing is read whole."""
    sentences = {c.sentence for c in reading.clauses if c.asks}
    if sentences:
        reading = read(" ".join(c.text for c in reading.clauses if c.sentence in sentences))
    return (
        not actions_named(reading, vocabulary, asserted=False)
        and not reads_named(reading, vocabulary)
        and not any(referred(reading, r, records) for r in records.items)
    )


@dataclass(frozen=True)
class Before:
    """What came before an agent message: the agent's previous message (None where this is
    its first) and what the user said since."""

    agent: str | None = None
    user: tuple[str, ...] = ()


def in_context(
    reading: Reading, before: Before, vocabulary: Vocabulary, records: Records
) -> list[Reading]:
    """Where a message's question is bare, the readings of it with what came before it: with
    the agent's previous message, with the user's words since, and with both. "Sure, HubSpot's
    record will survive then. Shall I go ahead?" after a correction asks about the proposal as
    corrected, unless it names another record of a kind the earlier proposal named ("I'll
    cancel W11186 instead" after W11184); "Unfortunately opting her in isn't possible:
    HubSpot has her as unsubscribed. Is that OK?" asks whether to go on with the change the
    user asked for. The user's words
    alone give no details the agent never stated: a message that is only "Please confirm if
    you would like to proceed" after the user's request refers to no record, and proposes
    nothing."""
    if not bare(reading, vocabulary, records):
        return []
    pieces: list[list[str]] = []
    agent = before.agent
    if agent is not None and _replaced(read(agent), reading, records):
        agent = None
    before = Before(agent, before.user)
    if before.agent is not None:
        pieces.append([before.agent])
    if before.user and any(referred(reading, r, records) for r in records.items):
        pieces.append(list(before.user))
    if before.agent is not None and before.user:
        pieces.append([before.agent, *before.user])
    return [read("\n".join([*piece, reading.text])) for piece in pieces]


def _replaced(earlier: Reading, reading: Reading, records: Records) -> bool:
    """The message is about another thing than the agent's previous one: it names a record
    of a kind the previous one named, and not the one it named ("Got it. I'll cancel W11186
    instead. Shall I go ahead?" after a proposal to cancel W11184)."""
    now = [r for r in records.items if referred(reading, r, records)]
    then = [r for r in records.items if referred(earlier, r, records)]
    return any(
        r.same_kind(t)
        and r.key != t.key
        and all(r.key != u.key for u in then)
        and all(t.key != u.key for u in now)
        for r in now
        for t in then
    )
