"""Graders are pure functions of a transcript and the final world."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from events import say, transcript
from pydantic import TypeAdapter

from toolproof.graders import Evidence, grade
from toolproof.graders.consent import confirm_before_write
from toolproof.spec.expectations import Expectations
from toolproof.spec.policy import ConfirmBeforeWrite, PolicyRuleEntry
from toolproof.transcript import ToolCallEvent, Transcript
from toolproof.world import World

CONFIRM = ConfirmBeforeWrite(rule="confirm_before_write")
RULE = TypeAdapter(PolicyRuleEntry)


def call(name: str, error: bool = False, result: Any = None, **args: Any) -> ToolCallEvent:
    return ToolCallEvent(t=0, call_id="c", name=name, arguments=args, result=result, is_error=error)


def evidence(t: Transcript, world: World | None = None, expected: str | None = None) -> Evidence:
    world = world or World.from_data({"orders": {"A": {"status": "cancelled"}}})
    return Evidence(
        transcript=t,
        lookup=world.lookup,
        final_hash=world.hash(),
        expected_hash=expected,
        write_tools=frozenset({"cancel"}),
        ended="user_done",
    )


def verdicts(
    expect: dict[str, Any], ev: Evidence, rules: list[Any] | None = None
) -> dict[str, tuple[bool, str]]:
    specs = [RULE.validate_python(rule) for rule in rules or []]
    return {
        v.grader: (v.passed, v.reason)
        for v in grade(Expectations.model_validate(expect), specs, ev)
    }


def test_state_passes_only_on_the_gold_hash() -> None:
    world = World.from_data({"orders": {"A": {"status": "cancelled"}}})
    good = verdicts({"actions": []}, evidence(transcript(), world, expected=world.hash()))
    bad = verdicts({"actions": []}, evidence(transcript(), world, expected="0" * 32))
    assert good["state"][0] is True
    assert bad["state"][0] is False
    assert bad["state"][1].startswith("final state differs from the gold actions' result")


def test_a_differing_state_names_the_paths_expected_and_got() -> None:
    world = World.from_data({"orders": {"A": {"status": "pending"}, "B": {"status": "open"}}})
    world["orders"]["A"]["status"] = "open"
    world["orders"]["B"]["status"] = "cancelled"
    gold = World.from_data({"orders": {"A": {"status": "pending"}, "B": {"status": "open"}}})
    gold["orders"]["A"]["status"] = "cancelled"
    ev = evidence(transcript(), world, expected=gold.hash())
    ev = replace(ev, changes=world.diff, expected_changes=tuple(gold.diff()))
    passed, reason = verdicts({"actions": []}, ev)["state"]
    assert not passed
    assert reason.endswith(
        "/orders/A/status: expected 'cancelled', got 'open'; "
        "/orders/B/status: expected unchanged, got 'cancelled'"
    )


def test_state_checks_report_each_failing_path() -> None:
    result = verdicts(
        {
            "state": [
                {"path": "orders/A/status", "equals": "cancelled"},
                {"path": "orders/A/status", "one_of": ["open", "pending"]},
                {"path": "orders/Z", "exists": False},
                {"path": "orders/Z/status", "equals": "x"},
            ]
        },
        evidence(transcript()),
    )
    passed, reason = result["state_checks"]
    assert passed is False
    assert "orders/A/status: 'cancelled' fails one_of" in reason
    assert "orders/Z/status: not found" in reason
    assert "orders/Z: exists" not in reason


def test_required_calls_need_a_successful_matching_call() -> None:
    t = transcript(
        call("get", order_id="A", verbose=True), call("refund", error=True, order_id="A")
    )
    result = verdicts(
        {"calls": [{"tool": "get", "args": {"order_id": "A"}}, {"tool": "refund"}]}, evidence(t)
    )
    assert result["calls"] == (False, "missing call refund()")


def test_ordered_calls_fail_when_out_of_order() -> None:
    t = transcript(call("b"), call("a"))
    expect = {"calls": [{"tool": "a"}, {"tool": "b"}]}
    assert verdicts(expect, evidence(t))["calls"][0] is True
    assert verdicts({**expect, "ordered_calls": True}, evidence(t))["calls"] == (
        False,
        "calls out of order at b()",
    )


def test_forbidden_calls_count_even_when_the_call_failed() -> None:
    t = transcript(call("refund", error=True, method="gift_card", amount=5))
    result = verdicts(
        {"forbidden_calls": [{"tool": "refund", "args": {"method": "gift_card"}}]}, evidence(t)
    )
    assert result["forbidden_calls"] == (False, "forbidden call refund(method='gift_card')")


def test_must_say_ignores_case_spacing_and_thousands_separators() -> None:
    t = transcript(
        say("user", "how much?"),
        call("get_payment", result={"amount": 1054.04, "status": "shipped"}),
        say("assistant", "The refund is $1,054.04,  SHIPPED"),
    )
    result = verdicts({"must_say": ["$1054.04", ["delivered", "shipped"], "tracking"]}, evidence(t))
    assert result["must_say"] == (False, "not said: 'tracking'")


def test_must_say_only_counts_what_the_agent_said() -> None:
    t = transcript(say("user", "my code is 1234"), say("assistant", "ok"))
    assert verdicts({"must_say": ["1234"]}, evidence(t))["must_say"][0] is False


def test_must_not_say_and_limits() -> None:
    t = transcript(
        say("assistant", "Bob's email is bob@x.com"), call("a"), call("a"), say("assistant", "bye")
    )
    result = verdicts(
        {"must_not_say": ["bob@x.com"], "max_tool_calls": 1, "max_turns": 1}, evidence(t)
    )
    assert result["must_not_say"] == (False, "said 'bob@x.com'")
    assert result["max_tool_calls"] == (False, "2 tool calls (limit 1)")
    assert result["max_turns"] == (False, "2 agent turns (limit 1)")


def test_confirm_before_write_needs_a_question_and_a_yes_before_each_write() -> None:
    confirmed = transcript(
        say("user", "cancel A"),
        say("assistant", "Shall I cancel order A? (yes/no)"),
        say("user", "Yes, go ahead."),
        call("cancel", order_id="A"),
    )
    assert confirm_before_write(CONFIRM, evidence(confirmed)).passed is True
    another = transcript(*confirmed.events, call("cancel", order_id="B"))
    assert confirm_before_write(CONFIRM, evidence(another)).reason == (
        "cancel(order_id='B') is not what the user said yes to: 'Shall I cancel order A? "
        "(yes/no)' (order_id: 'B' was never named)"
    )
    unasked = transcript(say("user", "cancel A"), call("cancel", order_id="A"))
    assert (
        confirm_before_write(CONFIRM, evidence(unasked)).reason
        == "cancel called without the user's confirmation"
    )
    hedged = transcript(
        say("assistant", "Shall I cancel order A?"),
        say("user", "Yes, but actually not A, cancel B instead"),
        call("cancel", order_id="B"),
    )
    assert confirm_before_write(CONFIRM, evidence(hedged)).passed is False
    stale = transcript(
        say("assistant", "Shall I cancel order A?"),
        say("user", "yes"),
        say("assistant", "Done. Anything else?"),
        say("user", "cancel B too"),
        call("cancel", order_id="B"),
    )
    assert confirm_before_write(CONFIRM, evidence(stale)).passed is False


def test_every_expectation_group_gives_one_verdict_and_rules_add_theirs() -> None:
    t = transcript(say("assistant", "done"))
    result = verdicts(
        {"must_say": [{"fact": "done", "source": "none"}], "forbidden_calls": [{"tool": "x"}]},
        evidence(t),
        ["confirm_before_write"],
    )
    assert set(result) == {"must_say", "forbidden_calls", "confirm_before_write"}
    assert all(passed for passed, _ in result.values())
