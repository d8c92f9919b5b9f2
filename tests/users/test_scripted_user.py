"""The scripted user: turns in order when their trigger (`when`) holds, then reactive replies."""

from __future__ import annotations

import asyncio

from toolproof.meaning.dialogue import asks_confirmation, is_affirmative
from toolproof.meaning.values import mentions
from toolproof.spec.user import UserSpec
from toolproof.users.scripted import ScriptedUser


def talk(spec: dict, replies: list[str]) -> list[str | None]:  # type: ignore[type-arg]
    user = ScriptedUser(UserSpec.model_validate(spec))
    return [asyncio.run(user.respond(r)) for r in replies]


def test_a_correction_is_said_at_the_first_confirmation_then_yes() -> None:
    spec = {
        "opening": "Cancel W1",
        "turns": [{"when": "asks_confirmation", "say": "Actually, not W1 - cancel W2 instead."}],
        "replies": [{"when": "asks_confirmation", "say": "Yes, go ahead.", "times": 2}],
    }
    said = talk(spec, ["Shall I cancel W1? (yes/no)", "Shall I cancel W2?", "Done.", "x"])
    assert said == ["Actually, not W1 - cancel W2 instead.", "Yes, go ahead.", None, None]


def test_a_turn_waits_for_its_condition_and_replies_fill_the_gap() -> None:
    spec = {
        "opening": "Hi",
        "turns": [{"when": {"contains": ["tracking"]}, "say": "Thanks!"}],
        "replies": [{"when": {"regex": r"e-?mail"}, "say": "a@b.com"}],
    }
    assert talk(spec, ["What is your E-mail?", "Your tracking number is 1Z", "bye"]) == [
        "a@b.com",
        "Thanks!",
        None,
    ]


def test_replies_are_used_at_most_times_and_unconditional_turns_go_in_order() -> None:
    spec = {
        "opening": "Hi",
        "turns": [{"say": "one"}, {"say": "two"}],
        "replies": [{"when": "always", "say": "r"}],
    }
    assert talk(spec, ["a", "b", "c", "d"]) == ["one", "two", "r", None]


def test_message_classification() -> None:
    assert asks_confirmation("Shall I go ahead and cancel it?")
    assert asks_confirmation("Please confirm (yes/no).")
    assert not asks_confirmation("I have cancelled it. Anything else?")
    assert is_affirmative("Yes, please do.") and is_affirmative("ok")
    assert not is_affirmative("Yes, but wait") and not is_affirmative("No thanks")
    assert not is_affirmative("Okay, never mind. Nothing else.")
    assert mentions("Total: $1,204.50", "$1204.50") and not mentions("total", "$12")
