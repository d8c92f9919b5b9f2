"""Stretching a conversation to N user turns: the same goal, deterministic per seed, and a
task already longer than N marked rather than cut."""

from __future__ import annotations

import asyncio
import random

from toolproof.meaning.dialogue import is_affirmative
from toolproof.spec.user import UserSpec
from toolproof.users.scripted import ScriptedUser
from toolproof.users.stretch import planned_turns, stretch

USER = UserSpec.model_validate(
    {
        "opening": "Hi, please cancel order W1. My email is a@b.com.",
        "turns": [{"when": "asks_confirmation", "say": "Wait, cancel W2 instead."}],
        "replies": [{"when": "asks_confirmation", "say": "Yes, go ahead.", "times": 2}],
    }
)


def conversation(user: UserSpec) -> list[str]:
    """Everything the scripted user says to an agent that asks to confirm until it hears a
    yes, then says it is done."""
    scripted = ScriptedUser(user)
    said = [scripted.opening()]
    agent = "Shall I go ahead? (yes/no)"
    while (message := asyncio.run(scripted.respond(agent))) is not None:
        said.append(message)
        agent = "Done." if is_affirmative(message) else agent
    return said


def test_the_planned_length_counts_the_opening_the_turns_and_one_reply() -> None:
    assert planned_turns(USER) == 3
    assert planned_turns(UserSpec(opening="hi")) == 1


def test_a_stretched_conversation_has_the_target_number_of_user_turns() -> None:
    for target in (3, 8, 15, 25):
        stretched = stretch(USER, target, random.Random(target))
        assert stretched.planned == target and not stretched.too_long
        assert len(conversation(stretched.user)) == target


def test_stretching_keeps_every_message_of_the_task_in_order() -> None:
    said = conversation(stretch(USER, 12, random.Random(5)).user)
    own = [s for s in said if s in (USER.opening, "Wait, cancel W2 instead.", "Yes, go ahead.")]
    assert own == [USER.opening, "Wait, cancel W2 instead.", "Yes, go ahead."]
    # the correction still comes before the final yes
    assert said.index("Wait, cancel W2 instead.") < len(said) - 1


def test_stretching_says_no_new_fact() -> None:
    said = " ".join(conversation(stretch(USER, 25, random.Random(9)).user))
    assert "W3" not in said and said.count("@") == said.count("a@b.com")


def test_stretching_is_the_same_for_the_same_seed_and_differs_across_seeds() -> None:
    first = stretch(USER, 15, random.Random(1)).user
    assert first == stretch(USER, 15, random.Random(1)).user
    assert any(first != stretch(USER, 15, random.Random(s)).user for s in range(2, 6))


def test_a_task_longer_than_the_target_is_played_as_written_and_marked() -> None:
    stretched = stretch(USER, 2, random.Random(0))
    assert stretched.too_long and stretched.planned == 3
    assert stretched.user.turns == USER.turns


def test_a_simulated_user_is_told_the_length() -> None:
    assert "about 8 messages" in stretch(USER, 8, random.Random(0)).user.persona


def test_nothing_stretching_adds_reads_as_a_yes_or_a_no() -> None:
    for seed in range(30):
        added = stretch(USER, 25, random.Random(seed)).user.turns
        for turn in added:
            if turn not in USER.turns:
                assert not is_affirmative(turn.say), turn.say
                assert not turn.say.lower().startswith(("no", "yes", "ok"))


def test_added_small_talk_gives_way_to_the_answer_the_agent_asked_for() -> None:
    user = UserSpec.model_validate(
        {
            "opening": "Where is my order W1?",
            "replies": [{"when": {"contains": ["email"]}, "say": "It's a@b.com."}],
        }
    )
    stretched = stretch(user, 8, random.Random(3))
    assert stretched.added and min(stretched.added) == 0  # small talk is due first
    scripted = ScriptedUser(stretched.user, stretched.added)
    assert asyncio.run(scripted.respond("What is the email on your account?")) == "It's a@b.com."
    # without the agent's question, the small talk is said as planned
    assert asyncio.run(scripted.respond("Let me check.")) == stretched.user.turns[0].say
