"""recovery_rate, loop_rate and corrective_action on small hand-built transcripts."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolproof.metrics.conditions import merge_counts, pool, recovery_counts, recovery_rates
from toolproof.metrics.recovery import (
    call_key,
    had_fault,
    is_loop,
    recovered_calls,
    trial_stats,
)
from toolproof.records.trial import TrialResult
from toolproof.transcript import EndEvent, Event, MessageEvent, ToolCallEvent, Transcript


def recovery_summary(trials: list[Any]) -> dict[str, Any]:
    """The pooled recovery metrics of trials given as (outcome, transcript or events) pairs
    or stored results, as a run's summary pools the stats stored with each trial."""
    rows = [t if isinstance(t, tuple) else (t.outcome, t.transcript) for t in trials]
    return pool([(outcome, trial_stats(events)) for outcome, events in rows])


def ok(name: str, arguments: dict[str, Any] | None = None, **extra: Any) -> ToolCallEvent:
    return ToolCallEvent(t=0.0, call_id="c", name=name, arguments=arguments or {}, **extra)


def err(
    name: str,
    arguments: dict[str, Any] | None = None,
    fault: str | None = None,
    kind: str = "tool_error",
    **extra: Any,
) -> ToolCallEvent:
    return ToolCallEvent(
        t=0.0,
        call_id="c",
        name=name,
        arguments={} if arguments is None else arguments,
        is_error=True,
        error_kind=kind,
        fault=fault,
        **extra,
    )


def end(reason: str = "user_done") -> EndEvent:
    return EndEvent(t=0.0, reason=reason)


def say(text: str) -> MessageEvent:
    return MessageEvent(t=0.0, role="assistant", content=text)


def flags(events: list[Event]) -> list[bool]:
    return [recovered for _, recovered in recovered_calls(events)]


# ---------------------------------------------------------------- recovered or not


def test_rate_limit_then_successful_retry_is_recovered() -> None:
    trial: list[Event] = [
        err("get_order", {"order_id": "W1"}, fault="rate_limit"),
        ok("get_order", {"order_id": "W1"}),
        end(),
    ]
    assert flags(trial) == [True]
    summary = recovery_summary([("passed", trial)])
    # 1 recovered / 1 failed
    assert summary["recovery_rate"] == 1.0
    assert summary["failed_calls"] == 1
    assert summary["recovered_calls"] == 1
    assert summary["by_fault"] == {"rate_limit": {"failed": 1, "recovered": 1, "rate": 1.0}}


def test_retry_with_other_arguments_is_recovered_however_late() -> None:
    # the same tool succeeding counts at any distance, with any arguments
    trial: list[Event] = [
        err("get_order", {"order_id": "W1"}, fault="server_error"),
        err("search", {"q": "a"}),
        err("search", {"q": "b"}),
        err("search", {"q": "c"}),
        err("search", {"q": "d"}),
        ok("get_order", {"order_id": "#W1"}),
        end(),
    ]
    assert flags(trial)[0] is True


def test_token_expired_then_refresh_then_success_is_recovered() -> None:
    trial: list[Event] = [
        err("refund_payment", {"order_id": "W1"}, fault="token_expired", kind="unauthorized"),
        ok("refresh_token"),
        ok("refund_payment", {"order_id": "W1"}),
        end(),
    ]
    assert flags(trial) == [True]


def test_switching_to_another_tool_that_succeeds_within_three_calls_is_recovered() -> None:
    # the refresh succeeds at distance 1; the original tool is never retried
    trial: list[Event] = [
        err("refund_payment", {"order_id": "W1"}, fault="token_expired"),
        ok("refresh_token"),
        end(),
    ]
    assert flags(trial) == [True]


def test_another_tool_counts_at_distance_three_but_not_four() -> None:
    # calls 0..3 are failures of get_order with distinct arguments (no loop), call 4 succeeds
    # on another tool: distances from each failure to it are 4, 3, 2, 1
    trial: list[Event] = [
        *(err("get_order", {"order_id": f"W{i}"}, fault="not_found") for i in range(4)),
        ok("find_orders", {"email": "a@b.c"}),
        end(),
    ]
    assert flags(trial) == [False, True, True, True]
    summary = recovery_summary([("failed", trial)])
    # 3 recovered / 4 failed
    assert summary["recovery_rate"] == pytest.approx(3 / 4)
    assert summary["loop_rate"] == 0.0


def test_failure_followed_only_by_unrelated_calls_far_later_is_not_recovered() -> None:
    # 0 get_order fails (genuine), 1 cancel fails (server_error), 2 lookup fails (timeout),
    # 3 cancel fails again (server_error, other arguments), 4 send_email succeeds.
    #   get_order@0: send_email is 4 calls later, get_order never succeeds -> not recovered
    #   cancel@1: send_email 3 later -> recovered; lookup@2: 2 later; cancel@3: 1 later
    trial: list[Event] = [
        err("get_order", {"order_id": "W9"}, kind="not_found"),
        say("let me try something else"),
        err("cancel", {"order_id": "W1"}, fault="server_error"),
        err("lookup", {"email": "x"}, fault="timeout"),
        err("cancel", {"order_id": "W2"}, fault="server_error"),
        ok("send_email", {"to": "x"}),
        end(),
    ]
    assert flags(trial) == [False, True, True, True]
    summary = recovery_summary([("failed", trial)])
    assert summary["failed_calls"] == 4
    assert summary["recovered_calls"] == 3
    assert summary["by_fault"] == {
        "genuine": {"failed": 1, "recovered": 0, "rate": 0.0},
        "server_error": {"failed": 2, "recovered": 2, "rate": 1.0},
        "timeout": {"failed": 1, "recovered": 1, "rate": 1.0},
    }


def test_failure_as_the_last_call_is_not_recovered() -> None:
    trial: list[Event] = [
        ok("get_user", {"id": 1}),
        err("get_order", {"order_id": "W1"}, fault="timeout"),
        say("Sorry, the order service is down."),
        end(),
    ]
    assert flags(trial) == [False]


def test_an_earlier_success_does_not_recover_a_later_failure() -> None:
    trial: list[Event] = [
        ok("get_order", {"order_id": "W1"}),
        err("get_order", {"order_id": "W1"}, fault="rate_limit"),
        end(),
    ]
    assert flags(trial) == [False]


def test_a_failed_retry_is_not_a_recovery() -> None:
    trial: list[Event] = [
        err("get_order", {"order_id": "W1"}, fault="rate_limit"),
        err("get_order", {"order_id": "W1"}, fault="rate_limit"),
        end(),
    ]
    # neither failure is followed by any successful call
    assert flags(trial) == [False, False]


@pytest.mark.parametrize("reason", ["max_steps", "context_overflow"])
def test_trial_cut_short_recovers_nothing(reason: str) -> None:
    trial: list[Event] = [
        err("get_order", {"order_id": "W1"}, fault="rate_limit"),
        ok("get_order", {"order_id": "W1"}),
        err("refund", {"order_id": "W1"}, fault="token_expired"),
        ok("refresh_token"),
        end(reason),
    ]
    assert flags(trial) == [False, False]
    summary = recovery_summary([("failed", trial)])
    # 0 recovered / 2 failed: a measured zero, not "not measured"
    assert summary["recovery_rate"] == 0.0


def test_malformed_and_unknown_calls_are_failed_calls_without_a_fault() -> None:
    trial: list[Event] = [
        ToolCallEvent(
            t=0.0,
            call_id="c",
            name="get_order",
            arguments=None,
            raw_arguments='{"order_id": ',
            is_error=True,
            error_kind="malformed_call",
        ),
        ok("get_order", {"order_id": "W1"}),
        err("get_ordr", {"order_id": "W1"}, kind="unknown_tool"),
        end(),
    ]
    # the malformed call is retried on the same tool; the unknown tool is never followed
    assert flags(trial) == [True, False]
    summary = recovery_summary([("passed", trial)])
    assert summary["by_fault"] == {"genuine": {"failed": 2, "recovered": 1, "rate": 0.5}}


def test_under_drift_the_suites_tool_name_decides_same_tool() -> None:
    # the drifted name differs from the suite's; the retry reaches the same suite tool
    trial: list[Event] = [
        err("fetch_order", {"id": 1}, fault="rate_limit", tool="get_order"),
        err("x1"),
        err("x2"),
        err("x3"),
        ok("order_lookup", {"id": "W1"}, tool="get_order", tool_arguments={"order_id": "W1"}),
        end(),
    ]
    assert flags(trial)[0] is True


def test_transcript_and_its_events_give_the_same_answer() -> None:
    events: list[Event] = [
        err("get_order", {"order_id": "W1"}, fault="rate_limit"),
        ok("get_order", {"order_id": "W1"}),
        end(),
    ]
    transcript = Transcript(events=events)
    assert recovery_summary([("passed", transcript)]) == recovery_summary([("passed", events)])


# ---------------------------------------------------------------- rates over trials


def test_no_failed_calls_means_recovery_not_measured() -> None:
    trial: list[Event] = [ok("get_order", {"order_id": "W1"}), end()]
    summary = recovery_summary([("passed", trial), ("failed", trial)])
    assert summary["recovery_rate"] is None
    assert summary["failed_calls"] == 0
    assert summary["by_fault"] == {}
    assert summary["loop_rate"] == 0.0
    assert summary["corrective_action"] is None


def test_no_trials_measures_nothing() -> None:
    summary = recovery_summary([])
    assert summary["recovery_rate"] is None
    assert summary["loop_rate"] is None
    assert summary["corrective_action"] is None
    assert summary["trials"] == 0


def test_recovery_rate_pools_failed_calls_over_trials() -> None:
    recovered: list[Event] = [err("a", fault="rate_limit"), ok("a"), end()]
    lost: list[Event] = [err("a", fault="rate_limit"), err("b", fault="timeout"), end()]
    summary = recovery_summary([("passed", recovered), ("failed", lost), ("failed", lost)])
    # failed calls: 1 + 2 + 2 = 5; recovered: 1 + 0 + 0 = 1
    assert summary["failed_calls"] == 5
    assert summary["recovered_calls"] == 1
    assert summary["recovery_rate"] == pytest.approx(1 / 5)
    assert summary["by_fault"] == {
        "rate_limit": {"failed": 3, "recovered": 1, "rate": pytest.approx(1 / 3)},
        "timeout": {"failed": 2, "recovered": 0, "rate": 0.0},
    }


# ---------------------------------------------------------------- loops


def test_same_failing_call_three_times_is_a_loop() -> None:
    args = {"order_id": "W1"}
    trial: list[Event] = [err("get_order", args), err("get_order", args), err("get_order", args)]
    assert is_loop([*trial, end()])
    assert not is_loop([*trial[:2], end()])


def test_repeats_need_not_be_in_a_row() -> None:
    args = {"order_id": "W1"}
    trial: list[Event] = [
        err("get_order", args),
        ok("get_user", {"id": 1}),
        err("get_order", args),
        say("retrying"),
        err("get_order", dict(reversed(list({"order_id": "W1"}.items())))),
        end(),
    ]
    assert is_loop(trial)


def test_same_tool_with_other_arguments_is_no_loop() -> None:
    trial: list[Event] = [err("get_order", {"order_id": f"W{i}"}) for i in range(5)]
    assert not is_loop([*trial, end()])


def test_same_successful_call_repeated_is_no_loop() -> None:
    trial: list[Event] = [ok("get_order", {"order_id": "W1"}) for _ in range(3)]
    assert not is_loop([*trial, end()])


def test_argument_key_order_does_not_matter() -> None:
    assert call_key(err("t", {"a": 1, "b": 2})) == call_key(err("t", {"b": 2, "a": 1}))
    assert call_key(err("t", {"a": 1})) != call_key(err("t", {"a": 2}))


def test_ending_at_max_steps_is_a_loop() -> None:
    assert is_loop([ok("get_order"), end("max_steps")])
    assert not is_loop([ok("get_order"), end("context_overflow")])


def test_loop_rate_is_the_share_of_trials() -> None:
    args = {"order_id": "W1"}
    looped: list[Event] = [
        err("get_order", args),
        err("get_order", args),
        err("get_order", args),
        end(),
    ]
    cut: list[Event] = [ok("get_order", args), end("max_steps")]
    fine: list[Event] = [err("get_order", args), ok("get_order", args), end()]
    summary = recovery_summary([("failed", looped), ("failed", cut), ("passed", fine)] * 2)
    # 4 of 6 trials loop
    assert summary["loop_rate"] == pytest.approx(4 / 6)


# ---------------------------------------------------------------- corrective action


def test_corrective_action_is_the_share_of_faulted_trials_that_passed() -> None:
    faulted_pass: list[Event] = [err("a", fault="rate_limit"), ok("a"), end()]
    faulted_fail: list[Event] = [err("a", fault="server_error"), end()]
    stale_pass: list[Event] = [ok("a", fault="stale"), end()]  # a fault that is no error
    clean_pass: list[Event] = [ok("a"), end()]
    latency_fail: list[Event] = [ok("a", fault="latency"), end()]
    genuine_fail: list[Event] = [err("a"), end()]
    summary = recovery_summary(
        [
            ("passed", faulted_pass),
            ("failed", faulted_fail),
            ("passed", stale_pass),
            ("passed", clean_pass),
            ("failed", latency_fail),
            ("failed", genuine_fail),
        ]
    )
    # faulted trials (latency and genuine errors are no injected fault): 3; passed: 2
    assert summary["faulted_trials"] == 3
    assert summary["corrective_action"] == pytest.approx(2 / 3)


def test_corrective_action_without_faults_is_not_measured() -> None:
    summary = recovery_summary(
        [("passed", [ok("a", fault="latency"), end()]), ("failed", [err("a"), end()])]
    )
    assert summary["corrective_action"] is None


def test_had_fault_ignores_latency() -> None:
    assert had_fault([ok("a", fault="timeout")])
    assert not had_fault([ok("a", fault="latency"), err("b")])


# ---------------------------------------------------------------- infra errors, stored trials


def test_infra_error_trials_are_left_out_of_all_three() -> None:
    lost: list[Event] = [*[err("a", fault="rate_limit")] * 3, end("infra_error")]
    good: list[Event] = [err("a", fault="rate_limit"), ok("a"), end()]
    summary = recovery_summary([("infra_error", lost), ("passed", good)])
    assert summary["recovery_rate"] == 1.0
    assert summary["loop_rate"] == 0.0
    assert summary["corrective_action"] == 1.0
    assert summary["trials"] == 1
    assert summary["infra_error_excluded"] == 1


def test_stored_trials_are_read_like_pairs() -> None:
    events: list[Event] = [err("a", fault="rate_limit"), ok("a"), end()]
    stored = TrialResult(
        task_id="t", trial=0, seed=0, outcome="passed", transcript=Transcript(events=events)
    )
    assert recovery_summary([stored]) == recovery_summary([("passed", events)])


# ---------------------------------------------------------------- properties

CALLS = st.builds(
    lambda name, arg, error, fault: (err if error else ok)(name, {"x": arg}, fault=fault),
    st.sampled_from(["a", "b", "c"]),
    st.integers(0, 1),
    st.booleans(),
    st.sampled_from([None, "rate_limit", "timeout", "latency"]),
)
TRIALS = st.lists(
    st.tuples(
        st.sampled_from(["passed", "failed", "infra_error"]),
        st.builds(
            lambda calls, reason: [*calls, end(reason)],
            st.lists(CALLS, max_size=8),
            st.sampled_from(["user_done", "max_steps"]),
        ),
    ),
    max_size=5,
)


@settings(max_examples=50, deadline=None)
@given(TRIALS)
def test_counts_add_up_and_rates_are_shares(trials: list[tuple[str, list[Event]]]) -> None:
    summary = recovery_summary(trials)
    by_fault = summary["by_fault"].values()
    assert sum(v["failed"] for v in by_fault) == summary["failed_calls"]
    assert sum(v["recovered"] for v in by_fault) == summary["recovered_calls"]
    assert 0 <= summary["recovered_calls"] <= summary["failed_calls"]
    assert (summary["recovery_rate"] is None) == (summary["failed_calls"] == 0)
    for name in ("recovery_rate", "loop_rate", "corrective_action"):
        assert summary[name] is None or 0.0 <= summary[name] <= 1.0


@settings(max_examples=50, deadline=None)
@given(st.lists(CALLS, max_size=8))
def test_cut_trials_recover_nothing_and_loop(calls: list[ToolCallEvent]) -> None:
    trial: list[Event] = [*calls, end("max_steps")]
    assert not any(flags(trial))
    assert is_loop(trial)


@settings(max_examples=50, deadline=None)
@given(st.lists(CALLS, max_size=8))
def test_a_final_success_of_every_tool_recovers_every_failure(
    calls: list[ToolCallEvent],
) -> None:
    trial: list[Event] = [*calls, ok("a"), ok("b"), ok("c"), end()]
    assert all(flags(trial))


@settings(max_examples=50, deadline=None)
@given(TRIALS, TRIALS)
def test_counts_of_two_groups_merged_pool_like_the_groups_together(
    first: list[tuple[str, list[Event]]], second: list[tuple[str, list[Event]]]
) -> None:
    def pairs(trials: list[tuple[str, list[Event]]]) -> list[tuple[str, dict[str, Any]]]:
        return [(outcome, trial_stats(events)) for outcome, events in trials]

    merged = merge_counts([recovery_counts(pairs(first)), recovery_counts(pairs(second))])
    assert recovery_rates(merged) == pool(pairs(first) + pairs(second))
