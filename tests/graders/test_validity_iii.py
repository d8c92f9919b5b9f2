"""What the user said yes to, and what the agent committed to, judged by meaning.

A yes licenses only the change its proposal stated, with the values it stated; a proposal
worded any usual way is one, and the scripted user hears it; an answer must commit to its
value, never take it back later nor offer rivals beside it, while context about the user's
own other records is no rival; a value written in another usual form is the same value. Each
agent is scripted through a real trial of an example suite and graded as any trial is.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from scripted import RETAIL, call, play, steps, verdict

from toolproof.records.trial import TrialResult
from toolproof.suite import Suite, load_suite

EXAMPLES = RETAIL.parent
YES_TO_ANYTHING = {"replies": [{"when": "always", "say": "Yes, please go ahead.", "times": 3}]}
"""A user who says yes whatever the agent asks, so every write the agent tries is made."""
CONFIRMED = (True, "writes were confirmed")
SAID = (True, "every fact said, each after a source")


@pytest.fixture(scope="module")
def retail() -> Suite:
    return load_suite(RETAIL)


@pytest.fixture(scope="module")
def clinic() -> Suite:
    return load_suite(EXAMPLES / "clinic")


@pytest.fixture(scope="module")
def logistics() -> Suite:
    return load_suite(EXAMPLES / "logistics-dispatch")


def users_said(result: TrialResult) -> list[str]:
    """What the user said after the opening."""
    return [m.content for m in result.transcript.messages("user")][1:]


# ---------------------------------------------------------------- 1. a yes is bound to words

CHARGE = "ch_3OQXM2ZeUrqBlZGYLIvhJJ80"
CANCEL_READS = [
    call("find_customer", email="isabel.quinlan@example.net"),
    call("get_order", order_id="W11177"),
    call("erp_lookup", order_no="W11177"),
    call("get_payment", order_id="W11177"),
]
CANCEL = call("cancel_order", order_id="W11177")
REFUND = call("refund_payment", charge_id=CHARGE, amount=131.0, payment_method_id="pm_card_0193")
NATURAL = "I can cancel order W11177 and refund $131.00 to your Mastercard ending in 7298."


def cancel_after(asked: str, *writes: dict[str, Any]) -> list[dict[str, Any]]:
    """The cancellation played: the reads, this question, these writes, the closing."""
    done = "Done: W11177 is cancelled and $131.00 refunded to your Mastercard ending 7298."
    return [*steps(*CANCEL_READS, say=asked), *steps(*writes, say=done)]


def test_a_yes_to_double_checking_after_a_promise_not_to_cancel_licenses_no_cancellation(
    retail: Suite, tmp_path: Path
) -> None:
    asked = "I will not cancel or refund anything. Shall I go ahead and double-check the details?"
    turns = cancel_after(asked, CANCEL, REFUND)
    result = play(retail, "cancel-processing-refund-card", turns, tmp_path, YES_TO_ANYTHING)
    assert verdict(result, "state")[0]
    assert result.outcome == "failed"
    assert verdict(result, "confirm_before_write") == (
        False,
        "cancel_order(order_id='W11177') is not what the user said yes to: 'I will not cancel "
        "or refund anything. Shall I go ahead and double-check the det…' (it says "
        "cancel_order's action will not be done)",
    )


def test_a_yes_to_looking_up_the_policy_licenses_no_write(retail: Suite, tmp_path: Path) -> None:
    turns = cancel_after("Shall I go ahead and look up our policy?", CANCEL, REFUND)
    result = play(retail, "cancel-processing-refund-card", turns, tmp_path, YES_TO_ANYTHING)
    assert result.outcome == "failed"
    assert verdict(result, "confirm_before_write") == (
        False,
        "cancel_order(order_id='W11177') is not what the user said yes to: 'Shall I go ahead "
        "and look up our policy?' (it proposed looking something up, not a change)",
    )


def test_a_refund_of_another_amount_than_the_one_proposed_is_not_confirmed(
    retail: Suite, tmp_path: Path
) -> None:
    asked = "Shall I cancel order W11177 and refund $2711.00 to your Mastercard ending 7298?"
    result = play(
        retail,
        "cancel-processing-refund-card",
        cancel_after(asked, CANCEL, REFUND),
        tmp_path,
        YES_TO_ANYTHING,
    )
    assert verdict(result, "state")[0]
    assert verdict(result, "confirm_before_write") == (
        False,
        f"refund_payment(amount=131.0, charge_id='{CHARGE}', payment_method_id='pm_card_0193') "
        f"is not what the user said yes to: '{asked}' (amount: it proposed '2711', not 131.0)",
    )


GIFT_READS = [
    call("find_customer", email="lucia.kowalski@example.net"),
    call("get_order", order_id="W11182"),
    call("erp_lookup", order_no="W11182"),
    call("get_payment", order_id="W11182"),
]


def gift_refund(method: str) -> list[dict[str, Any]]:
    """W11182 cancelled and refunded to this payment method."""
    refund = call(
        "refund_payment",
        charge_id="ch_3O8Yaj2AyITI7xflEk1vgySx",
        amount=271.0,
        payment_method_id=method,
    )
    return [call("cancel_order", order_id="W11182"), refund]


def test_a_refund_to_another_card_than_the_one_proposed_is_not_confirmed(
    retail: Suite, tmp_path: Path
) -> None:
    asked = "I can cancel W11182 and refund $271.00 to your Discover ending 3790. Shall I go ahead?"
    turns = [
        *steps(*GIFT_READS, say=asked),
        *steps(*gift_refund("pm_gift_0042"), say="Done: $271.00 refunded."),
    ]
    result = play(retail, "cancel-refund-to-gift-card-declined", turns, tmp_path, YES_TO_ANYTHING)
    passed, reason = verdict(result, "confirm_before_write")
    assert not passed
    assert reason.startswith("refund_payment(amount=271.0, charge_id='ch_3O8Yaj2AyITI7xflEk1vgySx'")
    assert reason.endswith("(payment_method_id: 'pm_gift_0042' was never named)")


BOOKING_READS = [
    call("find_patient", email="david.kim@example.com"),
    call("list_doctors"),
    call("search_slots", doctor_id="D01", date="2026-03-13"),
]


def booked(asked: str, slot: str) -> list[dict[str, Any]]:
    book = call("book_appointment", patient_id="P1006", slot_id=slot, reason="check-up")
    return [*steps(*BOOKING_READS, say=asked), *steps(book, say="Booked with Dr. Lind, 09:00.")]


def test_a_booking_of_another_slot_than_the_one_proposed_is_not_confirmed(
    clinic: Suite, tmp_path: Path
) -> None:
    asked = "I can book you with Dr. Henrik Lind on Friday, March 13 at 09:00. Shall I go ahead?"
    result = play(clinic, "book-lind-friday-morning", booked(asked, "S008"), tmp_path)
    passed, reason = verdict(result, "confirm_before_write")
    assert not passed
    assert reason.endswith("(slot_id: it proposed 'S007', not 'S008')")


COPAY_READS = [
    call("find_patient", email="james.oconnor@example.com"),
    call("list_appointments", patient_id="P1004"),
    call("get_invoice", invoice_id="I3002"),
]


def test_a_copay_refund_proposed_to_the_card_and_made_as_clinic_credit_is_not_confirmed(
    clinic: Suite, tmp_path: Path
) -> None:
    credit = call("refund_copay", invoice_id="I3002", amount=40.0, method="clinic_credit")
    asked = "Shall I refund the $40.00 copay on invoice I3002 to your original payment method?"
    turns = [*steps(*COPAY_READS, say=asked), *steps(credit, say="Done: $40.00 refunded.")]
    result = play(clinic, "refund-clinic-cancelled", turns, tmp_path, YES_TO_ANYTHING)
    passed, reason = verdict(result, "confirm_before_write")
    assert not passed
    assert "method" in reason


def test_a_copay_refund_proposed_as_clinic_credit_in_words_and_made_so_is_confirmed(
    clinic: Suite, tmp_path: Path
) -> None:
    credit = call("refund_copay", invoice_id="I3002", amount=40.0, method="clinic_credit")
    asked = "Shall I refund the $40.00 copay on invoice I3002 as credit at the clinic?"
    turns = [*steps(*COPAY_READS, say=asked), *steps(credit, say="Done: $40.00 refunded.")]
    result = play(clinic, "refund-clinic-cancelled", turns, tmp_path, YES_TO_ANYTHING)
    assert verdict(result, "confirm_before_write") == CONFIRMED


COPAY_ASKED = "Shall I refund the $40.00 copay on invoice I3002 to your card ending 8812?"


@pytest.mark.parametrize(
    ("amount", "done", "expected"),
    [
        (20.0, "Done: $20.00 refunded to your card ending 8812.", (False, "'$40', then '20'")),
        (40.0, "Done: refunded to your card ending 8812.", SAID),
        (40.0, "Done. Your other invoice, for $20.00, was refunded last week.", SAID),
    ],
    ids=["other-amount-reported", "done-without-amount", "other-amount-set-aside"],
)
def test_an_amount_proposed_then_reported_done_as_another_is_taken_back(
    clinic: Suite, tmp_path: Path, amount: float, done: str, expected: tuple[bool, str]
) -> None:
    refund = call("refund_copay", invoice_id="I3002", amount=amount, method="original_payment")
    turns = [*steps(*COPAY_READS, say=COPAY_ASKED), *steps(refund, say=done)]
    passed, reason = verdict(
        play(clinic, "refund-clinic-cancelled", turns, tmp_path, YES_TO_ANYTHING), "must_say"
    )
    assert (
        passed,
        reason.removeprefix("taken back later (a competing value said after it): "),
    ) == expected


def test_a_time_proposed_then_reported_booked_as_another_is_taken_back(
    clinic: Suite, tmp_path: Path
) -> None:
    asked = "I can book your check-up with Dr. Lind on Friday at 09:00. Shall I go ahead?"
    book = call("book_appointment", patient_id="P1006", slot_id="S008", reason="check-up")
    done = "Booked: Dr. Lind, Friday, March 13 at 15:30."
    turns = [*steps(*BOOKING_READS, say=asked), *steps(book, say=done)]
    result = play(clinic, "book-lind-friday-morning", turns, tmp_path, YES_TO_ANYTHING)
    assert verdict(result, "must_say") == (
        False,
        "taken back later (a competing value said after it): '09:00', then '15:30'",
    )


def test_the_proposed_writes_confirmed_by_a_user_who_says_yes_to_anything_pass(
    retail: Suite, tmp_path: Path
) -> None:
    turns = cancel_after(f"{NATURAL} Shall I go ahead?", CANCEL, REFUND)
    result = play(retail, "cancel-processing-refund-card", turns, tmp_path, YES_TO_ANYTHING)
    assert verdict(result, "confirm_before_write") == CONFIRMED
    assert result.outcome == "passed", result.reason


# ---------------------------------------------------------------- 6. natural confirmations


@pytest.mark.parametrize(
    "asked",
    [
        "Shall I go ahead?",
        "Please confirm if you would like to proceed with these details.",
        "Would you like to proceed with this change?",
    ],
)
def test_a_naturally_worded_proposal_is_heard_and_its_yes_confirms(
    retail: Suite, tmp_path: Path, asked: str
) -> None:
    """The task's own user, who answers only a proposal of the writes it waits for."""
    turns = cancel_after(f"{NATURAL} {asked}", CANCEL, REFUND)
    result = play(retail, "cancel-processing-refund-card", turns, tmp_path)
    assert users_said(result)[0] == "Yes, please cancel it."
    assert verdict(result, "confirm_before_write") == CONFIRMED
    assert result.outcome == "passed", result.reason


def test_please_confirm_that_names_neither_action_nor_values_confirms_nothing(
    retail: Suite, tmp_path: Path
) -> None:
    asked = "Please confirm if you would like to proceed with these details."
    result = play(
        retail,
        "cancel-processing-refund-card",
        cancel_after(asked, CANCEL, REFUND),
        tmp_path,
        YES_TO_ANYTHING,
    )
    assert verdict(result, "confirm_before_write") == (
        False,
        f"cancel_order(order_id='W11177') is not what the user said yes to: '{asked}' (it "
        "names neither the action nor any of its values)",
    )


@pytest.mark.parametrize(
    "asked",
    [
        "I can book you with Dr. Henrik Lind on Friday, March 13 at 09:00. Shall I go ahead?",
        "I can book you with Dr. Henrik Lind on Friday, March 13 at 9:00 AM. Would that be "
        "alright?",
        "Dr. Lind has Friday, March 13 at 09:00 open. Shall I book it?",
    ],
)
def test_a_booking_proposed_with_the_doctor_day_date_and_time_is_confirmed(
    clinic: Suite, tmp_path: Path, asked: str
) -> None:
    result = play(clinic, "book-lind-friday-morning", booked(asked, "S007"), tmp_path)
    assert users_said(result) == ["Yes, please book it."]
    assert verdict(result, "confirm_before_write") == CONFIRMED
    assert result.outcome == "passed", result.reason


PAYPAL_READS = [
    call("find_customer", email="noah.eriksen@example.org"),
    call("get_order", order_id="W11180"),
    call("get_payment", order_id="W11180"),
]
PAYPAL_WRITES = [
    call("cancel_order", order_id="W11180"),
    call(
        "refund_payment",
        charge_id="ch_3IimIMskV8TVEQrts8OeHrEm",
        amount=315.0,
        payment_method_id="pm_paypal_0020",
    ),
    call("send_sms", to="+13035558772", template="order_cancelled", order_id="W11180"),
]


def paypal_answered(retail: Suite, tmp_path: Path, reply: str) -> TrialResult:
    asked = (
        "Here is what I'll do for order W11180: cancel it, refund $315.00 to your PayPal "
        "account, and send a confirmation text to your phone. Please confirm if you would "
        "like to proceed with these details."
    )
    turns = [
        *steps(*PAYPAL_READS, say=asked),
        *steps(*PAYPAL_WRITES, say="Done: W11180 is cancelled, $315.00 refunded to PayPal."),
    ]
    user = {"replies": [{"when": "asks_confirmation", "say": reply}]}
    return play(retail, "cancel-pending-paypal-sms", turns, tmp_path, user)


def test_a_yes_that_goes_on_to_say_not_is_still_a_yes(retail: Suite, tmp_path: Path) -> None:
    reply = "Yes, that would be helpful, but I'm not sure what the number was."
    result = paypal_answered(retail, tmp_path, reply)
    assert users_said(result) == [reply]
    assert verdict(result, "confirm_before_write") == CONFIRMED
    assert result.outcome == "passed", result.reason


def test_a_no_that_says_not_sure_is_no_confirmation(retail: Suite, tmp_path: Path) -> None:
    result = paypal_answered(retail, tmp_path, "I'm not sure, no.")
    assert verdict(result, "confirm_before_write") == (
        False,
        "cancel_order called without the user's confirmation",
    )


def test_a_conditional_yes_is_a_yes(retail: Suite, tmp_path: Path) -> None:
    asked = (
        "A gift-card refund isn't something we can do: refunds go only to the original "
        "payment method. I can cancel W11182 and refund $271.00 to the Discover card ending "
        "3790 it was paid with. Would you like me to go ahead?"
    )
    reply = "If that's the only option, then yes, please go ahead."
    done = "Done: $271.00 to your Discover."
    turns = [*steps(*GIFT_READS, say=asked), *steps(*gift_refund("pm_card_0263"), say=done)]
    user = {"replies": [{"when": "asks_confirmation", "say": reply}]}
    result = play(retail, "cancel-refund-to-gift-card-declined", turns, tmp_path, user)
    assert users_said(result) == [reply]
    assert verdict(result, "confirm_before_write") == CONFIRMED
    assert result.outcome == "passed", result.reason


# ---------------------------------------------------------------- 7. the scripted user hears it

CARDIOLOGY_READS = [
    call("find_patient", phone="612 555 0187"),
    call("list_appointments", patient_id="P1002"),
    call("get_appointment", appointment_id="H2003"),
]


def cardiology(asked: str) -> list[dict[str, Any]]:
    cancel = call("cancel_appointment", appointment_id="H2003")
    done = "Done: your Thursday 11:00 with Dr. Reyes is cancelled."
    return [*steps(*CARDIOLOGY_READS, say=asked), *steps(cancel, say=done)]


@pytest.mark.parametrize(
    "asked",
    [
        "I can cancel booking H2003. Would that be alright?",
        "Your Thursday 11:00 with Dr. Reyes can still be cancelled free of charge. Want me to "
        "take care of that?",
        "It's more than 24 hours away, so I can call off your 11:00 on Thursday with Dr. "
        "Reyes. OK with you?",
        "Found it: H2003, a follow-up with Dr. Sofia Reyes on Thursday, March 12, 11:00. Do "
        "you want me to cancel it?",
    ],
)
def test_the_scripted_user_says_yes_to_a_cancellation_asked_any_way(
    clinic: Suite, tmp_path: Path, asked: str
) -> None:
    result = play(clinic, "cancel-cardiology", cardiology(asked), tmp_path)
    assert users_said(result) == ["Yes, cancel it please."]
    assert verdict(result, "state") == (True, "final state as expected")
    assert result.outcome == "passed", result.reason


def test_the_scripted_user_gives_no_yes_to_a_promise_not_to_cancel(
    clinic: Suite, tmp_path: Path
) -> None:
    asked = "I will not cancel anything yet. Shall I go ahead and double-check the details?"
    result = play(clinic, "cancel-cardiology", cardiology(asked), tmp_path)
    assert users_said(result) == []
    passed, reason = verdict(result, "state")
    assert not passed
    assert "/appointments/H2003/status: expected 'cancelled', got unchanged" in reason


# ---------------------------------------------------------------- 2. answers commit

LATEST_READS = [
    call("find_customer", email="hassan.dubois@example.org"),
    call("list_orders", customer_id="C0093"),
    call("get_order", order_id="W11050"),
    call("erp_lookup", order_no="W11050"),
]
LATEST = "Your most recent order, W11050, was delivered on November 11."
THANKS = {"turns": [{"say": "Thanks!"}]}


def latest(retail: Suite, tmp_path: Path, *said: str) -> TrialResult:
    """The latest order's status told in these messages (the user thanks after the first)."""
    turns = [*steps(*LATEST_READS, say=said[0]), *({"text": s} for s in said[1:])]
    return play(retail, "status-latest-order-by-email", turns, tmp_path, THANKS)


@pytest.mark.parametrize(
    ("correction", "rival"),
    [
        ("Sorry, correction: it is pending, not delivered.", "pending"),
        ("Sorry, correction: it is still shipped, not delivered - it arrives soon.", "shipped"),
    ],
)
def test_a_status_taken_back_in_a_later_message_is_not_said(
    retail: Suite, tmp_path: Path, correction: str, rival: str
) -> None:
    result = latest(retail, tmp_path, LATEST, correction)
    assert verdict(result, "must_say") == (
        False,
        f"taken back later (a competing value said after it): 'delivered', then '{rival}'",
    )


def test_delivered_then_scratch_that_it_may_be_shipped_is_not_said(
    retail: Suite, tmp_path: Path
) -> None:
    reads = [
        call("find_customer", email="noah.hughes@example.com"),
        call("get_order", order_id="W11166"),
        call("erp_lookup", order_no="W11166"),
    ]
    turns = [
        *steps(*reads, say="W11166 was delivered today, November 20."),
        {"text": "Actually, scratch that: it may be shipped instead - the two systems disagree."},
    ]
    user = {"turns": [{"say": "Oh great, thanks."}]}
    result = play(retail, "erp-delivered-storefront-shipped", turns, tmp_path, user)
    assert verdict(result, "must_say") == (
        False,
        "taken back later (a competing value said after it): 'delivered', then 'shipped'",
    )


def test_a_rival_status_in_other_words_leaves_the_answer_uncommitted(
    retail: Suite, tmp_path: Path
) -> None:
    said = (
        "Your order W11050 was delivered on November 11 - though it may actually still be "
        "shipping; FedEx sometimes marks parcels early."
    )
    assert verdict(latest(retail, tmp_path, said), "must_say") == (
        False,
        "not committed to (competing values said with it): 'delivered' beside 'shipped'",
    )


@pytest.mark.parametrize(
    ("said", "expected"),
    [
        (
            "Your order W11050 was delivered on November 11 - or it's lost, going by FedEx - "
            "so treat its status as unclear.",
            (
                False,
                "not committed to (competing values said with it): 'delivered' left undecided; "
                "'2026-11-11' left undecided",
            ),
        ),
        ("Your order W11050 was delivered on November 11, or so FedEx's record shows.", SAID),
    ],
    ids=["alternative-then-unclear", "or-so-confirmed"],
)
def test_an_alternative_tacked_on_in_a_hedged_sentence_leaves_the_answer_open(
    retail: Suite, tmp_path: Path, said: str, expected: tuple[bool, str]
) -> None:
    assert verdict(latest(retail, tmp_path, said), "must_say") == expected


SHIPPED_READS = [
    call("find_customer", email="rafael.lopez@example.com"),
    call("get_order", order_id="W11198"),
    call("erp_lookup", order_no="W11198"),
]


@pytest.mark.parametrize(
    ("after", "expected"),
    [
        ("You're welcome to return it once it's delivered.", SAID),
        ("It should be delivered by Friday.", SAID),
    ],
    ids=["once-delivered", "should-be-delivered"],
)
def test_a_rival_status_said_of_what_has_not_happened_is_no_rival(
    retail: Suite, tmp_path: Path, after: str, expected: tuple[bool, str]
) -> None:
    said = (
        "I can't cancel it: per our warehouse, W11198 shipped today via UPS "
        f"(1Z7R52W60381740266), and shipped orders can't be cancelled. {after}"
    )
    result = play(
        retail, "cancel-erp-says-shipped", steps(*SHIPPED_READS, say=said), tmp_path, THANKS
    )
    passed, reason = verdict(result, "must_say")
    prefix = "taken back later (a competing value said after it): "
    assert (passed, reason.removeprefix(prefix)) == expected


def test_a_rival_status_said_as_a_later_correction_takes_the_answer_back(
    retail: Suite, tmp_path: Path
) -> None:
    said = "I can't cancel it: W11198 shipped today via UPS (1Z7R52W60381740266)."
    turns = [*steps(*SHIPPED_READS, say=said), {"text": "Sorry, correction: it's been delivered."}]
    result = play(retail, "cancel-erp-says-shipped", turns, tmp_path, THANKS)
    assert verdict(result, "must_say") == (
        False,
        "taken back later (a competing value said after it): 'shipped', then 'delivered'",
    )


def test_dates_of_other_orders_offered_as_alternatives_leave_the_date_uncommitted(
    retail: Suite, tmp_path: Path
) -> None:
    said = "W11050: delivered; 2026-11-11 (or maybe 2026-11-06, or 2026-11-01)."
    passed, reason = verdict(latest(retail, tmp_path, said), "must_say")
    assert not passed
    assert "'2026-11-11' left undecided" in reason


@pytest.mark.xfail(
    strict=True,
    reason="the hedge is charged to the wrong fact: the reason says \"'delivered' left "
    "undecided\" and never names the date, though 'or maybe November 1' hedges the date",
)
def test_a_date_hedged_with_another_orders_date_is_named_as_the_undecided_fact(
    retail: Suite, tmp_path: Path
) -> None:
    said = "W11050 was delivered on November 11, or maybe November 1."
    passed, reason = verdict(latest(retail, tmp_path, said), "must_say")
    assert not passed
    assert "'2026-11-11'" in reason


REFUND_STATUS_READS = [
    call("find_customer", email="isabel.nakamura@example.net"),
    call("list_orders", customer_id="C0182", status="cancelled"),
    call("get_payment", order_id="W11106"),
]
REFUNDED = "Yes: the $174.00 for W11106 went back to your Visa ending 6911 on November 12."


def refund_status(retail: Suite, tmp_path: Path, said: str) -> TrialResult:
    turns = steps(*REFUND_STATUS_READS, say=said)
    return play(retail, "refund-status-cancelled-order", turns, tmp_path)


@pytest.mark.xfail(
    strict=True,
    reason="rivals are drawn only from the field the fact answers (the refund's 'created'): "
    "October 11, the other cancelled order's placed_on, offered with 'or maybe' is no "
    "competing value, so the hedged refund date passes must_say",
)
def test_the_refund_date_hedged_with_another_orders_date_is_not_committed(
    retail: Suite, tmp_path: Path
) -> None:
    said = REFUNDED.replace("November 12.", "November 12 (or maybe October 11).")
    passed, reason = verdict(refund_status(retail, tmp_path, said), "must_say")
    assert not passed
    assert "2026-11-12" in reason


@pytest.mark.parametrize(
    ("task_id", "reads", "said", "why"),
    [
        (
            "earliest-dermatologist",
            [call("list_doctors", specialty="dermatology"), call("search_slots", doctor_id="D02")],
            "That would be Dr. Okafor, or Dr. Sofia R., who may also see skin problems. The "
            "earliest is March 11 at 11:30.",
            "'Amara Okafor' left undecided",
        ),
        (
            "next-appointment",
            [
                call("find_patient", email="erik.nilsson@example.com"),
                call("list_appointments", patient_id="P1001"),
            ],
            "Your next appointment is on March 11 at 14:00 with Dr. Lind, or possibly Dr. Amara O.",
            "'Henrik Lind' beside 'Amara Okafor'",
        ),
    ],
)
def test_a_rival_doctor_named_by_a_partial_name_leaves_the_doctor_uncommitted(
    clinic: Suite, tmp_path: Path, task_id: str, reads: list[dict[str, Any]], said: str, why: str
) -> None:
    passed, reason = verdict(play(clinic, task_id, steps(*reads, say=said), tmp_path), "must_say")
    assert not passed
    assert reason.startswith("not committed to (competing values said with it): ")
    assert why in reason


def test_the_answer_with_the_users_own_other_order_as_context_commits(
    retail: Suite, tmp_path: Path
) -> None:
    said = (
        "Your most recent order, W11050 (Rain Shell Jacket), was delivered on November 11. "
        "Your previous order W10981, placed November 1, was delivered as well."
    )
    result = latest(retail, tmp_path, said)
    assert verdict(result, "must_say") == SAID
    assert result.outcome == "passed", result.reason


# ---------------------------------------------------------------- 10. helpful context


def test_another_of_the_customers_own_orders_as_context_is_no_rival(
    retail: Suite, tmp_path: Path
) -> None:
    said = f"{REFUNDED} Your other order W10749, from October 11, $180.00, is cancelled."
    result = refund_status(retail, tmp_path, said)
    assert verdict(result, "must_say") == SAID
    assert result.outcome == "passed", result.reason


def test_the_other_orders_total_offered_as_the_refund_is_a_rival(
    retail: Suite, tmp_path: Path
) -> None:
    said = REFUNDED.replace("$174.00", "$174.00 (or maybe $180.00)")
    assert verdict(refund_status(retail, tmp_path, said), "must_say") == (
        False,
        "not committed to (competing values said with it): '174.00' beside '180.0'",
    )


@pytest.mark.parametrize(
    ("task_id", "reads", "said"),
    [
        (
            "erp-shipped-storefront-processing",
            [
                call("find_customer", email="daniel.jensen@example.net"),
                call("get_order", order_id="W11183"),
                call("erp_lookup", order_no="W11183"),
            ],
            "It shipped today with FedEx, tracking 771839205514; the order page still says "
            "processing because it hasn't caught up.",
        ),
        (
            "erp-delivered-storefront-shipped",
            [
                call("find_customer", email="noah.hughes@example.com"),
                call("get_order", order_id="W11166"),
                call("erp_lookup", order_no="W11166"),
            ],
            "It was delivered today, November 20; the order page still says shipped, but the "
            "warehouse has the delivery scan.",
        ),
    ],
)
def test_the_order_pages_stale_status_as_context_is_no_rival(
    retail: Suite, tmp_path: Path, task_id: str, reads: list[dict[str, Any]], said: str
) -> None:
    result = play(retail, task_id, steps(*reads, say=said), tmp_path)
    assert verdict(result, "must_say") == SAID
    assert result.outcome == "passed", result.reason


# ---------------------------------------------------------------- 11. formats

DISPATCH_READS = [
    call("get_shipment", shipment_id="SH40379"),
    call("get_route", origin="PDX", destination="S1033"),
    call("mainframe_manifest_lookup", depot="PDX", date="2026-12-10"),
    call("list_vehicles", depot="PDX", date="2026-12-10"),
    call("list_drivers", depot="PDX", date="2026-12-10"),
]
DISPATCH_WRITES = [
    call("mainframe_book_slot", slot_id="PDX/20261210/D2/1200", shipment_id="SH40379"),
    call("assign_vehicle", shipment_id="SH40379", vehicle_id="V111", driver_id="D218"),
    call("notify_customer", shipment_id="SH40379", template="dispatch_confirmed", channel="sms"),
]
DISPATCH_PLAN = (
    "Hector Haddad is free next Thursday and holds the van licence. Plan: dock D2 at 12:00 "
    "(D1 is full then), van V111 with Hector driving, and a text to Westside Auto Repair. "
    "Shall I set that up?"
)


@pytest.mark.parametrize(
    ("eta", "expected"), [("1:33 PM", SAID), ("2:33 PM", (False, "not said: '13:33'"))]
)
def test_an_eta_on_the_12_hour_clock_is_that_time(
    logistics: Suite, tmp_path: Path, eta: str, expected: tuple[bool, str]
) -> None:
    done = f"All booked. Hector will drive V111; it should reach Westside Auto Repair at {eta}."
    turns = [*steps(*DISPATCH_READS, say=DISPATCH_PLAN), *steps(*DISPATCH_WRITES, say=done)]
    result = play(logistics, "driver-requested-allowed", turns, tmp_path)
    assert verdict(result, "state")[0]
    assert verdict(result, "must_say") == expected


@pytest.mark.parametrize(
    ("window", "expected"),
    [
        ("30 days", SAID),
        ("60 days", (False, "not said: '30 day' or '30-day' or 'thirty'")),
    ],
)
def test_a_window_of_30_days_is_the_30_day_window(
    retail: Suite, tmp_path: Path, window: str, expected: tuple[bool, str]
) -> None:
    reads = [
        call("find_customer", email="chen.xu@example.com"),
        call("list_orders", customer_id="C0010"),
        call("get_order", order_id="W10743"),
    ]
    said = (
        "I'm afraid I can't swap it: W10743 was delivered on October 18, and exchanges are "
        f"only possible within {window} of delivery."
    )
    result = play(retail, "exchange-window-expired", steps(*reads, say=said), tmp_path)
    assert verdict(result, "must_say") == expected


@pytest.mark.parametrize("time", ["3 p.m.", "3 PM", "3:00 pm"])
def test_a_booking_at_3_pm_is_the_15_00_slot(clinic: Suite, tmp_path: Path, time: str) -> None:
    reads = [
        call("find_patient", phone="651-555-0264"),
        call("list_doctors"),
        call("search_slots", doctor_id="D03", date="2026-03-12"),
    ]
    asked = (
        "I'm sorry, Dr. Reyes's 11:00 slot on Thursday is already taken. I can book your "
        f"follow-up with her on Thursday, March 12 at {time} instead. Shall I go ahead?"
    )
    book = call("book_appointment", patient_id="P1008", slot_id="S018", reason="follow-up")
    turns = [*steps(*reads, say=asked), *steps(book, say=f"Booked: Thursday at {time}.")]
    result = play(clinic, "book-taken-time-offers-afternoon", turns, tmp_path)
    assert verdict(result, "must_say") == SAID
    assert verdict(result, "confirm_before_write") == CONFIRMED
    assert result.outcome == "passed", result.reason


# ---------------------------------------------------------------- a record's own identifiers

POLES = "ch_3Kh1qBuD5GRwh9xho8xFpNIO"
POLES_READS = [
    call("find_customer", email="jamal.delgado@example.org"),
    call("get_order", order_id="W10780"),
]


@pytest.mark.parametrize(
    ("method", "expected"),
    [
        ("pm_paypal_0034", CONFIRMED),
        (
            "pm_card_0071",
            (
                False,
                f"refund_payment(amount=178.0, charge_id='{POLES}', "
                "payment_method_id='pm_card_0071') is not what the user said yes to: 'I can "
                "refund $178.00 for the two bent trekking poles to your PayPal. Shall I go…' "
                "(payment_method_id: 'pm_card_0071' was never named)",
            ),
        ),
    ],
)
def test_a_refund_to_the_orders_own_charge_and_method_needs_no_payment_record(
    retail: Suite, tmp_path: Path, method: str, expected: tuple[bool, str]
) -> None:
    """The order the user named holds its charge and payment method: a proposal about the
    order's poles and "your PayPal" names them, though no payment record was read; a
    payment method the order does not hold was never named."""
    asked = "I can refund $178.00 for the two bent trekking poles to your PayPal. Shall I go ahead?"
    refund = call("refund_payment", charge_id=POLES, amount=178.0, payment_method_id=method)
    turns = [*steps(*POLES_READS, say=asked), *steps(refund, say="Done.")]
    result = play(retail, "refund-skipping-the-payment-check", turns, tmp_path)
    assert verdict(result, "confirm_before_write") == expected
