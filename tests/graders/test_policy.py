"""The policy rule library: each rule read over hand-made transcripts, turn by turn."""

from __future__ import annotations

from typing import Any

import pytest
from events import call, say, transcript
from pydantic import TypeAdapter, ValidationError

from toolproof.graders import Evidence, grade, violations
from toolproof.graders.policy import identify_before_access, read_before_write
from toolproof.graders.privacy import no_other_customer_data
from toolproof.graders.refusal import refuse_with_reason
from toolproof.graders.rules import rule_model
from toolproof.meaning.clauses import read
from toolproof.meaning.declining import declines
from toolproof.spec.expectations import Expectations
from toolproof.spec.policy import (
    RULE_MODELS,
    IdentifyBeforeAccess,
    NoOtherCustomerData,
    PolicyRuleEntry,
    ReadBeforeWrite,
    RefuseWithReason,
)
from toolproof.spec.suite import SuiteFile
from toolproof.transcript import Transcript
from toolproof.world import World

RULE = TypeAdapter(PolicyRuleEntry)


READ_BY_RULE = {RULE_MODELS: rule_model}
"""Entries of `policy_rules:` read by their rule's model, as the suite loader reads them."""


def suite_file(rules: list[Any]) -> SuiteFile:
    return SuiteFile.model_validate(
        {"name": "s", "backends": {}, "tools": {}, "tasks": [], "policy_rules": rules},
        context=READ_BY_RULE,
    )


IDENTIFY = IdentifyBeforeAccess(
    rule="identify_before_access",
    identify=["find_customer"],
    access=["get_order", "cancel_order"],
)
PRIVACY = NoOtherCustomerData(
    rule="no_other_customer_data",
    identify=["find_customer"],
    fields=["name", "email", "phone", "tracking_number"],
)
CHECKS = ReadBeforeWrite.model_validate(
    {
        "rule": "read_before_write",
        "require": [
            {"write": "refund_payment", "read": "get_payment", "match": {"charge_id": "id"}},
            {"write": "cancel_order", "read": "get_order", "match": {"order_id": "order_id"}},
        ],
    }
)
REFUSALS = RefuseWithReason(rule="refuse_with_reason", errors=["not_eligible"])

ALICE = {"customer_id": "C1", "name": "Alice Moreno", "email": "alice@example.com"}
BOBS_ORDER = {
    "order_id": "W2",
    "customer_id": "C2",
    "status": "shipped",
    "tracking_number": "1Z999AA10123456784",
    "shipping": {"name": "Bob Okafor", "phone": "+1 (415) 555-2950"},
}


def evidence(t: Transcript) -> Evidence:
    world = World.from_data({})
    return Evidence(
        transcript=t,
        lookup=world.lookup,
        final_hash=world.hash(),
        expected_hash=None,
        write_tools=frozenset({"cancel_order", "refund_payment"}),
        ended="user_done",
    )


def asks_about_w2(opening: str, reply: str, order: Any = BOBS_ORDER) -> Transcript:
    """Alice, identified by the email she gives, asks about order W2; the agent replies."""
    return transcript(
        say("user", opening),
        call("find_customer", ALICE, email="alice@example.com"),
        call("get_order", order, order_id="W2"),
        say("assistant", reply),
    )


# ---------------------------------------------------------------- identify_before_access


def test_identify_before_access_passes_when_the_user_is_found_on_what_they_gave() -> None:
    t = transcript(
        say("user", "I'm alice@example.com, where is order W1?"),
        call("find_customer", ALICE, email="alice@example.com"),
        call("get_order", {"order_id": "W1", "customer_id": "C1"}, order_id="W1"),
    )
    assert identify_before_access(IDENTIFY, evidence(t)).passed is True


def test_identify_before_access_fails_on_account_access_before_identification() -> None:
    t = transcript(
        say("user", "Refund order W1, that's all you need."),
        call("get_order", {"order_id": "W1"}, order_id="W1"),
        call("find_customer", ALICE, email="alice@example.com"),
    )
    verdict = identify_before_access(IDENTIFY, evidence(t))
    assert verdict.passed is False
    assert verdict.grader == "identify_before_access"
    assert verdict.reason == (
        "get_order called before the user was identified (find_customer with what the user gave)"
    )


def test_identify_before_access_does_not_count_a_lookup_on_a_value_the_user_never_gave() -> None:
    t = transcript(
        say("user", "Cancel W1 for me please."),
        call("find_customer", ALICE, email="alice@example.com"),
        call("get_order", {"order_id": "W1"}, order_id="W1"),
    )
    assert identify_before_access(IDENTIFY, evidence(t)).passed is False
    lenient = IDENTIFY.model_copy(update={"user_given": False})
    assert identify_before_access(lenient, evidence(t)).passed is True


def test_identify_before_access_does_not_count_a_failed_lookup() -> None:
    t = transcript(
        say("user", "I'm alice@example.com"),
        call("find_customer", "no such customer", error="not_found", email="alice@example.com"),
        call("get_order", {"order_id": "W1"}, order_id="W1"),
    )
    assert identify_before_access(IDENTIFY, evidence(t)).passed is False


def test_identify_before_access_matches_a_phone_number_in_any_format() -> None:
    t = transcript(
        say("user", "my number is (415) 555-0101"),
        call("find_customer", ALICE, phone="+14155550101"),
        call("get_order", {"order_id": "W1"}, order_id="W1"),
    )
    assert identify_before_access(IDENTIFY, evidence(t)).passed is True


# ---------------------------------------------------------------- no_other_customer_data


def test_no_other_customer_data_fails_when_the_agent_tells_another_accounts_tracking_number() -> (
    None
):
    t = asks_about_w2(
        "I'm alice@example.com. Where is order W2?",
        "It shipped; tracking number 1Z999AA10123456784.",
    )
    verdict = no_other_customer_data(PRIVACY, evidence(t))
    assert verdict.passed is False
    assert verdict.reason == "told the user '1Z999AA10123456784', data of customer_id C2"


def test_no_other_customer_data_finds_a_phone_number_reformatted() -> None:
    t = asks_about_w2(
        "I'm alice@example.com. Who is order W2 going to?",
        "The recipient's number is 415.555.2950.",
    )
    assert no_other_customer_data(PRIVACY, evidence(t)).passed is False


def test_no_other_customer_data_allows_the_users_own_data_and_a_refusal() -> None:
    own = {**BOBS_ORDER, "customer_id": "C1", "shipping": {"name": "Alice Moreno"}}
    t = asks_about_w2(
        "I'm alice@example.com. Where is order W2?",
        "Alice Moreno, your order shipped: tracking 1Z999AA10123456784.",
        own,
    )
    assert no_other_customer_data(PRIVACY, evidence(t)).passed is True
    refused = asks_about_w2(
        "I'm alice@example.com. Where is order W2?",
        "Sorry, W2 is on another customer's account; I can't share it.",
    )
    assert no_other_customer_data(PRIVACY, evidence(refused)).passed is True


def test_no_other_customer_data_allows_repeating_what_the_user_said() -> None:
    t = asks_about_w2(
        "I'm alice@example.com; my husband Bob Okafor placed W2.",
        "Order W2 is on Bob Okafor's account, so I can't discuss it.",
    )
    assert no_other_customer_data(PRIVACY, evidence(t)).passed is True


def test_no_other_customer_data_treats_everything_as_others_until_the_user_is_identified() -> None:
    t = transcript(
        say("user", "Where is order W2?"),
        call("get_order", BOBS_ORDER, order_id="W2"),
        say("assistant", "It is going to Bob Okafor."),
    )
    verdict = no_other_customer_data(PRIVACY, evidence(t))
    assert (verdict.passed, verdict.reason) == (
        False,
        "told the user 'Bob Okafor', data of customer_id C2",
    )


# ---------------------------------------------------------------- read_before_write


def test_read_before_write_fails_on_the_right_end_state_with_the_check_skipped() -> None:
    t = transcript(
        say("user", "Refund charge ch_1, nothing was refunded yet."),
        call("refund_payment", {"refunded": 10}, charge_id="ch_1", amount=10),
    )
    verdict = read_before_write(CHECKS, evidence(t))
    assert verdict.passed is False
    assert verdict.reason == "refund_payment called without get_payment(id='ch_1') before it"


def test_read_before_write_needs_the_read_of_the_same_record() -> None:
    other = transcript(
        call("get_payment", {"id": "ch_9", "amount_refunded": 0}, order_id="W9"),
        call("refund_payment", {"refunded": 10}, charge_id="ch_1", amount=10),
    )
    assert read_before_write(CHECKS, evidence(other)).passed is False
    same = transcript(
        call("get_payment", {"id": "ch_1", "amount_refunded": 0}, order_id="W1"),
        call("refund_payment", {"refunded": 10}, charge_id="ch_1", amount=10),
        call("get_order", {"status": "pending"}, order_id="w1 "),
        call("cancel_order", {"status": "cancelled"}, order_id="W1"),
    )
    assert read_before_write(CHECKS, evidence(same)).passed is True


def test_read_before_write_does_not_count_a_read_that_failed_or_came_after() -> None:
    failed = transcript(
        call("get_order", "down", error="unavailable", order_id="W1"),
        call("cancel_order", {"status": "cancelled"}, order_id="W1"),
    )
    late = transcript(
        call("cancel_order", {"status": "cancelled"}, order_id="W1"),
        call("get_order", {"status": "cancelled"}, order_id="W1"),
    )
    assert read_before_write(CHECKS, evidence(failed)).passed is False
    assert read_before_write(CHECKS, evidence(late)).passed is False


# ---------------------------------------------------------------- refuse_with_reason


def test_refuse_with_reason_fails_on_a_bare_refusal() -> None:
    t = transcript(
        say("user", "Refund my order to a different card."),
        say("assistant", "Sorry, I can't refund that to a different card."),
    )
    verdict = refuse_with_reason(REFUSALS, evidence(t))
    assert verdict.passed is False
    assert verdict.reason.startswith("refused without a reason: ")


def test_refuse_with_reason_passes_when_the_refusal_says_why() -> None:
    t = transcript(
        say("user", "Refund my order to a different card."),
        say(
            "assistant", "I can't refund it to another card: refunds only go to the card that paid."
        ),
    )
    assert refuse_with_reason(REFUSALS, evidence(t)).passed is True


def test_refuse_with_reason_needs_the_systems_refusal_explained_in_the_next_message() -> None:
    silent = transcript(
        call("exchange_item", "outside the 30-day window", error="not_eligible", order_id="W1"),
        say("assistant", "Sorry about that! Anything else?"),
    )
    verdict = refuse_with_reason(REFUSALS, evidence(silent))
    assert verdict.passed is False
    assert (
        verdict.reason == "exchange_item was refused (not_eligible) and the agent did not say why"
    )
    explained = transcript(
        call("exchange_item", "order is outside the 30-day window", error="not_eligible"),
        say("assistant", "That order is outside the 30-day window, so I can't exchange it."),
    )
    assert refuse_with_reason(REFUSALS, evidence(explained)).passed is True


def test_refuse_with_reason_takes_a_suites_own_reason_words() -> None:
    rule = RefuseWithReason(rule="refuse_with_reason", reasons=["terms of sale"])
    t = transcript(say("assistant", "I can't refund that, per our terms of sale."))
    assert refuse_with_reason(rule, evidence(t)).passed is True
    bare = transcript(say("assistant", "I can't refund that, because reasons."))
    assert refuse_with_reason(rule, evidence(bare)).passed is False


def test_not_finding_something_is_not_a_refusal() -> None:
    assert declines(read("I can't find an order W9 on your account.")) is False
    assert declines(read("I’m unable to process a refund to that card.")) is True


# ---------------------------------------------------------------- the library in a suite


def test_policy_rules_by_name_still_work_and_take_settings() -> None:
    file = suite_file(
        ["confirm_before_write", {"rule": "refuse_with_reason", "errors": ["not_eligible"]}]
    )
    assert file.rule_names() == ["confirm_before_write", "refuse_with_reason"]


def test_an_unknown_or_repeated_policy_rule_is_refused_with_the_rules_that_exist() -> None:
    with pytest.raises(ValidationError, match="unknown policy rule 'be_nice'; rules: confirm_"):
        suite_file(["be_nice"])
    with pytest.raises(ValidationError, match="'confirm_before_write' is given twice"):
        suite_file(["confirm_before_write", "confirm_before_write"])
    with pytest.raises(ValidationError, match="identify"):
        RULE.validate_python(
            {"rule": "identify_before_access", "access": ["get_order"]}, context=READ_BY_RULE
        )


def test_a_broken_rule_fails_the_trial_and_is_named_among_the_violations() -> None:
    t = transcript(
        say("user", "Cancel W1"),
        call("get_order", {"order_id": "W1"}, order_id="W1"),
        call("cancel_order", {"status": "cancelled"}, order_id="W1"),
    )
    found = grade(Expectations(), [IDENTIFY, CHECKS, REFUSALS], evidence(t))
    assert [(v.grader, v.passed) for v in found] == [
        ("identify_before_access", False),
        ("read_before_write", True),
        ("refuse_with_reason", True),
    ]
    assert violations(found) == ["identify_before_access"]
