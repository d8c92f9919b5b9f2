"""What a message does, read by the functions every rule and the scripted user share: a yes is
its first word of assent, a "not" later in it takes nothing back; a request to decide is one
in any usual words, a question for information is not; a decline is of the action asked for,
in any words, and "I can't wait" declines nothing."""

from __future__ import annotations

import pytest

from toolproof.meaning.clauses import read
from toolproof.meaning.declining import declines, gives_cause
from toolproof.meaning.dialogue import answer, solicits
from toolproof.meaning.values import mentions

CANCEL = [("cancel",)]


@pytest.mark.parametrize(
    "reply",
    [
        "Yes, that would be helpful, but I'm not sure what the number was.",
        "If that's the only option, then yes, please go ahead.",
        "Yes, that would be helpful, thanks.",
        "Please do, and thanks for checking.",
    ],
)
def test_a_yes_is_a_yes_whatever_follows_it(reply: str) -> None:
    assert answer(reply).yes
    assert not answer(reply).no


@pytest.mark.parametrize("reply", ["I'm not sure, no.", "Not yet.", "Yes. Actually, wait, don't."])
def test_a_no_or_a_yes_taken_back_is_no_yes(reply: str) -> None:
    assert not answer(reply).yes


def test_a_yes_that_refuses_part_of_it_keeps_that_part_out() -> None:
    said = answer("Yes, but do not send the text.")
    assert said.yes
    assert [c.text for c in said.except_for] == ["but do not send the text."]


@pytest.mark.parametrize(
    "message",
    [
        "Please confirm if you would like to proceed with these details.",
        "Would you like to proceed with this change?",
        "I can cancel booking H2002. Would that be alright?",
        "Shall I go ahead?",
        "Want me to take care of that?",
    ],
)
def test_a_request_to_decide_is_one_in_any_words(message: str) -> None:
    assert solicits(message)


@pytest.mark.parametrize(
    "message",
    [
        "What is the email on your account?",
        "Could you give me your phone number?",
        "W11177 is cancelled.",
    ],
)
def test_a_question_for_information_or_a_statement_asks_no_decision(message: str) -> None:
    assert not solicits(message)


@pytest.mark.parametrize(
    "message",
    [
        "That cancel isn't an option here, because it was delivered.",
        "That's not something I'm able to do, because it shipped.",
        "I have to say no to that one: it shipped this morning.",
        "The order stays as it is, as it is non-refundable.",
        "I'm afraid I can't cancel it: it was delivered.",
    ],
)
def test_a_decline_in_other_words_declines_with_its_cause(message: str) -> None:
    reading = read(message)
    assert declines(reading, CANCEL)
    assert gives_cause(reading)


@pytest.mark.parametrize(
    "message",
    [
        "Great news! It was delivered. I can't wait for you to enjoy it, since everything "
        "went to plan!",
        "I can't find that order.",
        "It was delivered on November 8.",
    ],
)
def test_what_declines_nothing_asked_for_is_no_decline(message: str) -> None:
    assert not declines(read(message), CANCEL)


@pytest.mark.parametrize(
    ("sentence", "value"),
    [
        ("It should arrive at 1:33 PM.", "13:33"),
        ("Thursday at 3 p.m. is open.", "15:00"),
        ("Exchanges are allowed within 30 days of delivery.", "30 day"),
        ("That booking is nonrefundable.", "non-refundable"),
    ],
)
def test_a_value_in_another_usual_form_is_mentioned(sentence: str, value: str) -> None:
    assert mentions(sentence, value)
