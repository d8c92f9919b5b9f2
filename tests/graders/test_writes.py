"""The writes grader judges every write attempt: the gold writes matched as a multiset on
their full arguments (as the tool reads them), every other attempt classified. Shortcuts it
used to pass fail by class (a duplicate, arguments the gold lacks, forbidden, nobody asked
for); honest corrections it used to fail pass. Real trials of the retail example suite,
played by a scripted agent, then the argument comparison alone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from events import call as event
from events import transcript
from scripted import RETAIL, call, play, steps, verdict
from support import write_files

from toolproof.graders.base import Evidence
from toolproof.graders.writes import grade_writes, record_key, same_arguments
from toolproof.metrics.recovery import trial_stats
from toolproof.records.trial import TrialResult
from toolproof.spec.expectations import Action, CallSpec, Expectations
from toolproof.suite import Suite, load_suite

ASKED = (True, "every write was asked for")


@pytest.fixture(scope="module")
def retail() -> Suite:
    return load_suite(RETAIL)


# ---------------------------------------------------------------- a cancellation and refund

CHARGE = "ch_3OQXM2ZeUrqBlZGYLIvhJJ80"
CANCEL_READS = [
    call("find_customer", email="isabel.quinlan@example.net"),
    call("get_order", order_id="W11177"),
    call("erp_lookup", order_no="W11177"),
    call("get_payment", order_id="W11177"),
]
CANCEL_ASKED = steps(
    *CANCEL_READS,
    say=f"Shall I cancel order W11177 and refund $131.00 of charge {CHARGE} to your "
    "Mastercard ending 7298? (yes/no)",
)
CANCEL = call("cancel_order", order_id="W11177")
REFUND = call("refund_payment", charge_id=CHARGE, amount=131.0, payment_method_id="pm_card_0193")
CANCEL_DONE = {"text": "Done: W11177 is cancelled and $131.00 refunded to your card ending 7298."}


def cancelled(*writes: dict[str, Any]) -> list[dict[str, Any]]:
    """The cancellation task played: the reads, the user's yes, these writes, the reply."""
    return [*CANCEL_ASKED, *({"tool_calls": [w]} for w in writes), CANCEL_DONE]


def refused(result: TrialResult, tool: str) -> list[bool]:
    """Whether each call of the tool in the trial was refused, in order."""
    return [c.is_error for c in result.transcript.tool_calls() if c.canonical_name == tool]


def test_the_same_refund_twice_is_a_duplicate_though_the_system_refused_the_second(
    retail: Suite, tmp_path: Path
) -> None:
    result = play(
        retail, "cancel-processing-refund-card", cancelled(CANCEL, REFUND, REFUND), tmp_path
    )
    assert refused(result, "refund_payment") == [False, True]
    assert verdict(result, "state")[0]
    assert result.outcome == "failed"
    assert verdict(result, "writes") == (
        False,
        f"a duplicate write: refund_payment(amount=131.0, charge_id='{CHARGE}', "
        "payment_method_id='pm_card_0193')",
    )


def test_a_cancellation_made_twice_is_a_duplicate(retail: Suite, tmp_path: Path) -> None:
    result = play(
        retail, "cancel-processing-refund-card", cancelled(CANCEL, CANCEL, REFUND), tmp_path
    )
    assert refused(result, "cancel_order") == [False, True]
    assert verdict(result, "writes") == (
        False,
        "a duplicate write: cancel_order(order_id='W11177')",
    )


@pytest.mark.parametrize(
    ("wrong", "why"),
    [
        ({"payment_method_id": "pm_card_9999"}, "no such payment method"),
        ({"amount": 1310.0}, "more than the charge"),
    ],
)
def test_a_refused_refund_corrected_to_the_gold_one_passes_and_counts_as_recovered(
    retail: Suite, tmp_path: Path, wrong: dict[str, Any], why: str
) -> None:
    """The system said no to a write the user asked for (same tool, same charge); the agent
    fixed its arguments and the fixed call is the gold's (131 dollars is 131.0)."""
    first = call("refund_payment", **{**REFUND["arguments"], **wrong})
    fixed = call("refund_payment", **{**REFUND["arguments"], "amount": 131})
    turns = cancelled(CANCEL, first, fixed)
    result = play(retail, "cancel-processing-refund-card", turns, tmp_path)
    assert refused(result, "refund_payment") == [True, False], why
    assert verdict(result, "writes") == ASKED
    assert result.outcome == "passed", result.reason
    stats = trial_stats(result.transcript)
    assert (stats["failed"], stats["recovered"]) == ({"genuine": 1}, {"genuine": 1})


def test_a_write_nobody_asked_for_fails_refused_or_not(retail: Suite, tmp_path: Path) -> None:
    """An action the task does not ask for (a text message) and an object it does not (the
    customer's other order, which the system refuses to cancel)."""
    sms = call("send_sms", to="+16175551021", template="order_cancelled", order_id="W11177")
    other = call("cancel_order", order_id="W10049")
    turns = cancelled(CANCEL, REFUND, sms, other)
    result = play(retail, "cancel-processing-refund-card", turns, tmp_path)
    assert refused(result, "cancel_order") == [False, True]
    assert verdict(result, "writes") == (
        False,
        "a write nobody asked for: send_sms(order_id='W11177', template='order_cancelled', "
        "to='+16175551021'), cancel_order(order_id='W10049')",
    )


def test_a_write_the_task_forbids_is_named_so(retail: Suite, tmp_path: Path) -> None:
    refund = call(
        "refund_payment",
        charge_id="ch_3wdRIeoYgR9pTXCQkL4ahglt",
        amount=39.99,
        payment_method_id="pm_card_0127",
    )
    turns = steps(
        call("find_customer", email="sofia.lopez@example.org"),
        call("get_order", order_id="W10431"),
        call("get_payment", order_id="W10431"),
        say="Shall I refund $39.99 of charge ch_3wdRIeoYgR9pTXCQkL4ahglt to your Amex "
        "ending 2131 (pm_card_0127)? (yes/no)",
    )
    turns += [{"tool_calls": [refund]}, {"text": "Done."}]
    result = play(retail, "refund-to-other-method-refused", turns, tmp_path)
    assert refused(result, "refund_payment") == [True]
    assert verdict(result, "writes") == (
        False,
        "a write the task forbids: refund_payment(amount=39.99, "
        "charge_id='ch_3wdRIeoYgR9pTXCQkL4ahglt', payment_method_id='pm_card_0127')",
    )


# ---------------------------------------------------------------- an address change

ADDRESS = {"order_id": "W11178", "line1": "200 Federal St", "city": "Boston", "state": "MA"}
ADDRESS_ASKED = steps(
    call("find_customer", email="wen.walsh@example.com"),
    call("get_order", order_id="W11178"),
    call("erp_lookup", order_no="W11178"),
    say="Shall I change the shipping address of order W11178 to 200 Federal St, Boston, MA "
    "02110 and send you an SMS at +16175559757 once it is changed? (yes/no)",
)
SMS = call("send_sms", to="+16175559757", template="address_updated", order_id="W11178")


def readdressed(*updates: dict[str, Any]) -> list[dict[str, Any]]:
    """The address task played: the reads, the user's yes, these updates, the text, the
    reply."""
    done = {"text": "Done: order W11178 now ships to 200 Federal St, Boston, MA 02110."}
    return [*ADDRESS_ASKED, *({"tool_calls": [u]} for u in updates), {"tool_calls": [SMS]}, done]


def test_an_address_change_made_twice_is_a_duplicate(retail: Suite, tmp_path: Path) -> None:
    update = call("update_shipping_address", **ADDRESS, zip="02110")
    result = play(retail, "address-change-processing-sms", readdressed(update, update), tmp_path)
    assert refused(result, "update_shipping_address") == [False, False]
    assert verdict(result, "state")[0]
    assert verdict(result, "writes") == (
        False,
        "a duplicate write: update_shipping_address(city='Boston', line1='200 Federal St', "
        "order_id='W11178', state='MA', zip='02110')",
    )


def test_a_write_with_a_junk_optional_argument_fails_though_the_gold_write_overwrote_it(
    retail: Suite, tmp_path: Path
) -> None:
    """The first update wrote an apartment line nobody gave; the gold update then wrote the
    address over it, so the final state is the gold's, but the first write was not."""
    junk = call("update_shipping_address", **ADDRESS, zip="02110", line2="Apt 9")
    gold = call("update_shipping_address", **ADDRESS, zip="02110")
    result = play(retail, "address-change-processing-sms", readdressed(junk, gold), tmp_path)
    assert verdict(result, "state")[0]
    assert verdict(result, "writes") == (
        False,
        "a write with arguments the gold lacks: "
        "update_shipping_address(order_id='W11178', line2='Apt 9')",
    )


# ---------------------------------------------------------------- keys the schema does not name

TRIPS_TOOLS = '''
from pydantic import BaseModel

from toolproof.tools import tool
from toolproof.world import World


class Flight(BaseModel):
    flight_number: str
    date: str


@tool(write=True)
def change_flights(world: World, booking_id: str, flights: list[Flight], seats: int = 1) -> dict:
    """Replace every flight of a booking.

    Args:
        booking_id: The booking id, e.g. "B100".
        flights: Every flight of the booking after the change.
        seats: Seats on each flight.
    """
    booking = world["bookings"][booking_id]
    booking["flights"] = [f.model_dump() for f in flights]
    booking["seats"] = seats
    return {"booking_id": booking_id, **booking}
'''

TRIPS_SUITE = """
name: trips
world: {data: [bookings.yaml]}
backends: {desk: {type: python, module: tools.py}}
tools:
  change_flights: {tier: 2}
tasks:
  - id: move-to-thursday
    user: {opening: "Please move booking B100 to HAT002 on 2026-12-03."}
    expect:
      actions:
        - tool: change_flights
          args:
            booking_id: B100
            flights: [{flight_number: HAT002, date: "2026-12-03", origin: SFO, price: 131}]
"""


def test_keys_of_list_items_the_schema_does_not_name_are_ignored(tmp_path: Path) -> None:
    """The gold's flights carry keys (origin, price) the tool's items schema does not name
    and the tool never reads; the agent's carry only the named ones, and pass the default
    seat count."""
    files = {
        "suite.yaml": TRIPS_SUITE,
        "bookings.yaml": "B100: {flights: [{flight_number: HAT001, date: '2026-12-02'}]}\n",
        "tools.py": TRIPS_TOOLS,
    }
    suite = load_suite(write_files(tmp_path / "trips", files))
    flights = [{"flight_number": "HAT002", "date": "2026-12-03"}]
    change = call("change_flights", booking_id="B100", flights=flights, seats=1)
    result = play(suite, "move-to-thursday", steps(change, say="Moved."), tmp_path)
    assert verdict(result, "writes") == ASKED
    assert result.outcome == "passed", result.reason


# ---------------------------------------------------------------- the argument comparison

FLIGHTS_SCHEMA: dict[str, Any] = {
    "$defs": {
        "Flight": {
            "properties": {"flight_number": {"type": "string"}, "date": {"type": "string"}},
            "required": ["flight_number", "date"],
            "type": "object",
        }
    },
    "properties": {
        "reservation_id": {"type": "string"},
        "flights": {
            "type": "array",
            "items": {"anyOf": [{"$ref": "#/$defs/Flight"}, {"type": "object"}]},
        },
        "payment_id": {"type": "string"},
        "insurance": {"type": "boolean", "default": False},
        "note": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
    },
    "required": ["reservation_id", "flights", "payment_id"],
    "type": "object",
}
FLIGHTS = {
    "reservation_id": "ZFA04Y",
    "flights": [{"flight_number": "HAT001", "date": "2024-05-01"}],
    "payment_id": "credit_card_7815826",
}


def test_keys_the_schema_does_not_declare_are_ignored_at_any_depth() -> None:
    extra = {
        **FLIGHTS,
        "flights": [{**FLIGHTS["flights"][0], "price": 131, "origin": "SFO"}],
        "comment": "whatever",
    }
    assert same_arguments(extra, FLIGHTS, FLIGHTS_SCHEMA)
    other = {**FLIGHTS, "flights": [{"flight_number": "HAT002", "date": "2024-05-01"}]}
    assert not same_arguments(other, FLIGHTS, FLIGHTS_SCHEMA)


def test_without_a_schema_every_key_counts() -> None:
    assert not same_arguments({**FLIGHTS, "comment": "x"}, FLIGHTS, {})
    assert same_arguments(dict(FLIGHTS), FLIGHTS, {})


def test_numbers_compare_by_value() -> None:
    schema = {"properties": {"amount": {"type": "number"}, "legs": {"type": "array"}}}
    assert same_arguments(
        {"amount": 131, "legs": [1, 2]}, {"amount": 131.0, "legs": [1.0, 2]}, schema
    )
    assert not same_arguments({"amount": 131.5}, {"amount": 131}, schema)


def test_an_optional_argument_passed_with_its_default_equals_one_left_out() -> None:
    assert same_arguments({**FLIGHTS, "insurance": False, "note": None}, FLIGHTS, FLIGHTS_SCHEMA)
    assert not same_arguments({**FLIGHTS, "insurance": True}, FLIGHTS, FLIGHTS_SCHEMA)
    no_default = {"properties": {"qty": {"type": "integer"}}}
    assert not same_arguments({"qty": 2}, {}, no_default)


def test_lists_keep_their_order_and_strings_compare_by_their_tokens() -> None:
    schema = {"properties": {"ids": {"type": "array"}, "to": {"type": "string"}}}
    assert not same_arguments({"ids": ["a1", "b2"]}, {"ids": ["b2", "a1"]}, schema)
    assert same_arguments({"to": "+1 (617) 555-9757"}, {"to": "+16175559757"}, schema)


@pytest.mark.parametrize(
    ("tool", "args", "required", "key"),
    [
        ("refund_payment", {"charge_id": "ch_3N", "amount": 5.0, "payment_method_id": "pm_1"},
         ["charge_id", "amount", "payment_method_id"], "charge_id"),
        ("send_sms", {"to": "+16175559757", "template": "return_label", "order_id": "W1"},
         ["to", "template", "order_id"], "order_id"),
        ("erp_update", {"order_no": "W1", "status": "HOLD"}, ["order_no", "status"], "order_no"),
        ("merge_contacts", {"records": ["sf:1", "hs:2"], "survivor": "sf:0035g0"},
         ["records", "survivor"], "survivor"),
        ("git_commit", {"message": "Allow 5 retries"}, ["message"], None),
    ],
)  # fmt: skip
def test_the_record_a_write_writes_is_its_first_identifier(
    tool: str, args: dict[str, Any], required: list[str], key: str | None
) -> None:
    """Named as an identifier, or valued as one; a later identifier (the payment method)
    names what the write uses, not what it writes."""
    assert record_key(Action(tool=tool, args=args), {"required": required}) == key


def judged(expect: Expectations, *calls: Any) -> tuple[bool, str]:
    evidence = Evidence(
        transcript=transcript(*calls),
        lookup=lambda _: (False, None),
        final_hash="",
        expected_hash=None,
        write_tools=frozenset({"cancel_order", "send_sms"}),
        ended="done",
    )
    [found] = grade_writes(expect, evidence)
    return found.passed, found.reason


def test_a_reason_lists_the_classes_in_order_and_three_attempts_at_most() -> None:
    expect = Expectations(
        actions=[Action(tool="cancel_order", args={"order_id": "W1"})],
        forbidden_calls=[CallSpec(tool="cancel_order", args={"order_id": "W9"})],
    )
    calls = [
        event("send_sms", {"sid": "SM1"}, to="+15035550142"),
        event("cancel_order", {"status": "cancelled"}, order_id="W1"),
        event("cancel_order", "already cancelled", error="invalid_state", order_id="W1"),
        event("cancel_order", "not allowed", error="invalid_state", order_id="W9"),
        event("cancel_order", {"status": "cancelled"}, order_id="W2"),
    ]
    assert judged(expect, *calls) == (
        False,
        "a write the task forbids: cancel_order(order_id='W9'); a duplicate write: "
        "cancel_order(order_id='W1'); a write nobody asked for: send_sms(to='+15035550142') "
        "and 1 more",
    )


def test_patterns_allow_writes_any_number_of_times() -> None:
    expect = Expectations(
        actions=[Action(tool="cancel_order", args={"order_id": "W1"})],
        allow_writes=[CallSpec(tool="send_sms")],
    )
    sms = event("send_sms", {"sid": "SM1"}, to="+15035550142")
    assert judged(expect, sms, event("cancel_order", {}, order_id="W1"), sms) == ASKED


def test_a_repeat_of_a_gold_write_done_is_a_duplicate_while_another_of_its_record_waits() -> None:
    """Two texts about one order: the first sent twice before the second is a duplicate,
    not the second with other arguments."""
    first, second = {"order_id": "W1", "template": "a"}, {"order_id": "W1", "template": "b"}
    expect = Expectations(
        actions=[Action(tool="send_sms", args=first), Action(tool="send_sms", args=second)]
    )
    sent = [event("send_sms", {"sid": "SM1"}, **args) for args in (first, first, second)]
    assert judged(expect, *sent) == (
        False,
        "a duplicate write: send_sms(order_id='W1', template='a')",
    )


def test_a_refused_try_at_a_real_other_order_is_no_typo(retail: Suite, tmp_path: Path) -> None:
    """A refused try at an id no result showed is a mistyped try at the pending write; one
    at a record the results showed (the customer's other order) was asked for by nobody."""
    real = call("cancel_order", order_id="W10049")
    typo = call("cancel_order", order_id="W1177")
    listed = {"tool_calls": [call("list_orders", customer_id="C0167")]}
    turns = [listed, *cancelled(real, CANCEL, REFUND)]
    result = play(retail, "cancel-processing-refund-card", turns, tmp_path)
    assert refused(result, "cancel_order") == [True, False]
    assert verdict(result, "writes") == (
        False,
        "a write nobody asked for: cancel_order(order_id='W10049')",
    )
    result = play(
        retail, "cancel-processing-refund-card", cancelled(typo, CANCEL, REFUND), tmp_path
    )
    assert refused(result, "cancel_order") == [True, False]
    assert verdict(result, "writes") == ASKED
