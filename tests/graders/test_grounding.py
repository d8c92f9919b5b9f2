"""Verdicts that cannot be had without the work: facts match as tokens and count only after a
tool result showed them; a task that writes nothing needs its decisive reads."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolproof.graders import Evidence, grade
from toolproof.meaning.values import contains, mentions, tokens
from toolproof.spec.expectations import Expectations
from toolproof.transcript import Event, MessageEvent, ToolCallEvent, Transcript
from toolproof.world import World


def transcript(*events: Event) -> Transcript:
    out = Transcript()
    for event in events:
        out.add(event)
    return out


def agent(text: str) -> MessageEvent:
    return MessageEvent(t=0, role="assistant", content=text)


def user(text: str) -> MessageEvent:
    return MessageEvent(t=0, role="user", content=text)


def call(name: str, result: Any = None, error: bool = False, **args: Any) -> ToolCallEvent:
    return ToolCallEvent(t=0, call_id="c", name=name, arguments=args, result=result, is_error=error)


def verdicts(
    expect: dict[str, Any], *events: Event, required: dict[str, list[str]] | None = None
) -> dict[str, tuple[bool, str]]:
    world = World.from_data({"orders": {}})
    evidence = Evidence(
        transcript=transcript(*events),
        lookup=world.lookup,
        final_hash=world.hash(),
        expected_hash=world.hash(),
        write_tools=frozenset({"cancel_order"}),
        ended="user_done",
        required_args={name: frozenset(keys) for name, keys in (required or {}).items()},
    )
    return {
        v.grader: (v.passed, v.reason)
        for v in grade(Expectations.model_validate(expect), [], evidence)
    }


# ---------------------------------------------------------------- matching as tokens


@pytest.mark.parametrize(
    ("text", "fact", "found"),
    [
        ("about 30 minutes", "30", True),
        ("order 130 is late", "30", False),
        ("it weighs 30.5 kg", "30", False),
        ("it weighs 30.5 kg", "30.5", True),
        ("it left at 14:30", "30", False),
        ("delivered on 2026-11-30", "30", False),
        ("It costs 30.", "30", True),
        ("a total of $1,200.00", "1200", True),
        ("a total of 1200 dollars", "1,200.00", True),
        ("refund of $358.00", "$358", True),
        ("order W11050", "11050", False),
        ("order W11050", "w11050", True),
        ("card ending 0193", "193", False),
        ("card ending 0193", "0193", True),
        ("Delivered 2026-11-11T10:00:00Z", "2026-11-11", True),
        ("loading at 8:00 sharp", "08:00", True),
        ("Insulated Water Bottle (BT-22)", "insulated  water bottle", True),
        ("an insulated bottle of water", "Insulated Water Bottle", False),
        ("shipped via FedEx.", "fedex", True),
        ("status: order_cancelled", "cancelled", False),
        # phone numbers by their last seven digits, whatever the format
        ("her number is +16125552950", "555-2950", True),
        ("call (612) 555-2950", "+1 612 555 2950", True),
        ("call 612.555.2950", "5552950", True),
        ("call 555-2951", "555-2950", False),
        # dates by value across formats; a date without a year matches that day of any year
        ("it arrived Nov. 8", "2026-11-08", True),
        ("on 11/08/2026", "November 8", True),
        ("DLV_DT 20261108", "2026-11-08", True),
        ("on the 8th of November, 2026", "11/8/2026", True),
        ("on November 9", "2026-11-08", False),
        ("on 2025-11-08", "2026-11-08", False),
    ],
)
def test_a_fact_matches_whole_tokens_and_numbers_by_value(
    text: str, fact: str, found: bool
) -> None:
    assert mentions(text, fact) is found


def test_tokens_read_numbers_dates_and_times_as_values() -> None:
    assert tokens("Paid $1,054.50 on 2026-11-11T09:05:00+00:00, 3,4 items; ETA 9:05") == [
        "paid",
        "1054.5",
        "on",
        "2026-11-11",
        "09:05",
        "3",
        "4",
        "item",
        "eta",
        "09:05",
    ]


def test_tokens_are_a_new_list_each_time_though_remembered() -> None:
    first = tokens("Order W1001 ships on 2026-11-11")
    first.append("changed by a caller")
    assert tokens("Order W1001 ships on 2026-11-11") == [
        "order",
        "w1001",
        "ship",
        "on",
        "2026-11-11",
    ]


@given(st.lists(st.sampled_from("abc"), max_size=8), st.lists(st.sampled_from("abc"), max_size=3))
def test_contains_finds_the_tokens_together_and_in_order_anywhere(
    haystack: list[str], needle: list[str]
) -> None:
    runs = [haystack[i : i + len(needle)] for i in range(len(haystack) - len(needle) + 1)]
    assert contains(haystack, needle) is (bool(needle) and needle in runs)


# ---------------------------------------------------------------- facts need a source


def test_a_fact_counts_once_a_tool_result_showed_it() -> None:
    result = verdicts(
        {"must_say": ["983346738039"]},
        user("tracking number please"),
        call("erp_lookup", {"TRACK_NO": "983346738039", "CARRIER": "FEDEX"}, order_no="W1"),
        agent("Your tracking number is 983346738039."),
    )
    assert result["must_say"] == (True, "every fact said, each after a source")


def test_a_fact_said_without_any_tool_result_does_not_count() -> None:
    result = verdicts({"must_say": ["983346738039"]}, agent("It is 983346738039."))
    assert result["must_say"] == (
        False,
        "said before any tool result showed it: '983346738039'",
    )


def test_a_fact_said_before_the_result_that_shows_it_does_not_count() -> None:
    result = verdicts(
        {"must_say": ["FedEx"]},
        agent("It ships with FedEx."),
        call("erp_lookup", {"CARRIER": "FedEx"}, order_no="W1"),
        agent("Let me check."),
    )
    assert result["must_say"][0] is False


def test_failed_calls_keys_and_echoed_arguments_show_nothing() -> None:
    result = verdicts(
        {"must_say": ["358.00", "refunded", "W77"]},
        call("get_payment", {"error": "358.00 not found"}, error=True),
        call("get_payment", {"refunded": True, "id": "ch_1"}),
        call("get_order", {"order_id": "W77", "total": 12.5}, order_id="W77"),
        agent("W77 was refunded: 358.00."),
    )
    assert result["must_say"] == (
        False,
        "said before any tool result showed it: '358.00', 'refunded', 'W77'",
    )


def test_any_form_of_a_fact_can_be_its_source_and_found_as_names_more() -> None:
    expect = {
        "must_say": [
            ["2026-11-11", "November 11"],
            {"fact": "delivered", "found_as": ["DLVD"]},
        ]
    }
    result = verdicts(
        expect,
        call("get_order", {"delivered_at": "2026-11-11T15:00:00Z"}, order_id="W1"),
        call("erp_lookup", {"SHIP_STAT": "DLVD"}, order_no="W1"),
        agent("It was delivered on November 11."),
    )
    assert result["must_say"][0] is True


def test_a_fact_is_grounded_by_a_result_that_shows_it_in_another_format() -> None:
    """A legacy system's YYYYMMDD date and an E.164 phone number ground the forms a person
    says, with no found_as needed."""
    result = verdicts(
        {"must_say": ["November 8", "(612) 555-2950"]},
        call("erp_lookup", {"DLV_DT": "20261108", "PHONE": "+16125552950"}, order_no="W1"),
        agent("Delivered on November 8; the driver's number was (612) 555-2950."),
    )
    assert result["must_say"] == (True, "every fact said, each after a source")


def test_found_as_names_a_boolean_or_a_number_a_tool_result_shows() -> None:
    expect = {
        "must_say": [
            {"fact": "out of stock", "found_as": ["false"]},
            {"fact": "November 20", "found_as": ["20261120"]},
            {"fact": "twelve fifty", "found_as": ["12.5"]},
        ]
    }
    result = verdicts(
        expect,
        call("check_inventory", {"in_stock": False, "eta": 20261120, "price": 12.50}, sku="S1"),
        agent("It is out of stock until November 20, at twelve fifty."),
    )
    assert result["must_say"] == (True, "every fact said, each after a source")
    # `true` is not `false`: the boolean shows the fact only as JSON writes it
    shown = call("check_inventory", {"in_stock": True, "eta": 20261120, "price": 12.5}, sku="S1")
    result = verdicts(
        expect, shown, agent("It is out of stock until November 20, at twelve fifty.")
    )
    assert result["must_say"] == (False, "said before any tool result showed it: 'out of stock'")


def test_facts_marked_as_the_users_words_or_sourceless_need_no_tool() -> None:
    expect = {
        "must_say": [
            {"fact": "200 Federal St", "source": "user"},
            {"fact": ["30-day", "30 day"], "source": "none"},
        ]
    }
    said = agent("The 30-day window applies; the new address is 200 Federal St.")
    assert verdicts(expect, said)["must_say"][0] is True
    assert verdicts(expect, agent("Done."))["must_say"] == (
        False,
        "not said: '200 Federal St', '30-day' or '30 day'",
    )


def test_a_fact_is_matched_within_one_message() -> None:
    result = verdicts(
        {"must_say": [{"fact": "Insulated Water Bottle", "source": "none"}]},
        agent("Try the Insulated"),
        agent("Water Bottle."),
    )
    assert result["must_say"][0] is False


def test_must_not_say_matches_tokens_not_substrings() -> None:
    leak = {"must_not_say": ["555-2950", "Ximena"]}
    assert verdicts(leak, agent("Her number is (612) 555-2950."))["must_not_say"] == (
        False,
        "said '555-2950'",
    )
    assert verdicts(leak, agent("Call 1-555-29501 or ask Ximenaz."))["must_not_say"][0] is True


# ---------------------------------------------------------------- decisive reads


READ_ONLY = {
    "actions": [
        {"tool": "find_customer", "args": {"email": "a@example.com"}},
        {"tool": "erp_lookup", "args": {"order_no": "W1"}},
    ]
}
REQUIRED = {"find_customer": [], "erp_lookup": ["order_no"]}


def test_a_read_only_task_passes_only_with_its_decisive_reads() -> None:
    nothing = verdicts(READ_ONLY, agent("It's delivered."), required=REQUIRED)
    assert nothing["state"][0] is True  # nothing changed: the world hash alone would pass it
    assert nothing["reads"] == (
        False,
        "decisive read not made: find_customer(), erp_lookup(order_no='W1')",
    )
    done = verdicts(
        READ_ONLY,
        call("find_customer", {"id": "C1"}, phone="555"),  # found another way: still counts
        call("erp_lookup", {"SHIP_STAT": "DLVD"}, order_no="W1", verbose=True),
        agent("It's delivered."),
        required=REQUIRED,
    )
    assert done["reads"] == (True, "reads made")


def test_a_decisive_read_must_succeed_on_the_record_the_answer_comes_from() -> None:
    wrong = verdicts(
        READ_ONLY,
        call("find_customer", {"id": "C1"}),
        call("erp_lookup", {"error": "timeout"}, error=True, order_no="W1"),
        call("erp_lookup", {"SHIP_STAT": "SHPD"}, order_no="W2"),
        required=REQUIRED,
    )
    assert wrong["reads"] == (False, "decisive read not made: erp_lookup(order_no='W1')")


def test_without_tool_schemas_every_gold_argument_is_decisive() -> None:
    result = verdicts(READ_ONLY, call("find_customer", {}, phone="555"), call("erp_lookup", {}))
    assert result["reads"] == (
        False,
        "decisive read not made: find_customer(email='a@example.com'), erp_lookup(order_no='W1')",
    )


def test_a_task_that_writes_needs_no_reads_and_a_task_may_name_its_own() -> None:
    writes = {
        "actions": [
            {"tool": "erp_lookup", "args": {"order_no": "W1"}},
            {"tool": "cancel_order", "args": {"order_id": "W1"}},
        ]
    }
    assert "reads" not in verdicts(writes, agent("ok"))
    own = {**READ_ONLY, "reads": [{"tool": "erp_lookup"}]}
    assert verdicts(own, call("erp_lookup", {}, order_no="W9"))["reads"] == (True, "reads made")
    assert "reads" not in verdicts({**READ_ONLY, "reads": []}, agent("ok"))


def test_decisive_reads_are_matched_on_the_suites_names_under_drift() -> None:
    drifted = ToolCallEvent(
        t=0,
        call_id="c",
        name="erp_lookup_v2",
        arguments={"order": "W1"},
        result={"SHIP_STAT": "DLVD"},
        tool="erp_lookup",
        tool_arguments={"order_no": "W1"},
    )
    expect = {"actions": [{"tool": "erp_lookup", "args": {"order_no": "W1"}}]}
    assert verdicts(expect, drifted)["reads"] == (True, "reads made")
