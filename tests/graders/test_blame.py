"""Blame: each rule that decides who a failed trial is to blame on, over hand-made trials."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

import pytest
from events import call, say, transcript

from toolproof.agents.baselines import RetryingOracle
from toolproof.agents.registry import desk
from toolproof.graders import BLAME_RULES, PARTIES, Failure, Verdict, assign_blame
from toolproof.graders.blame import RETRY_ATTEMPTS, blame_rule, tried
from toolproof.meaning.dialogue import asks_confirmation
from toolproof.runner.grading import listener
from toolproof.spec.user import UserSpec
from toolproof.suite import load_suite
from toolproof.transcript import CheckEvent, ModelCallEvent, Transcript
from toolproof.users.scripted import ScriptedUsers

CLINIC = Path(__file__).parents[2] / "examples" / "clinic"

SCRIPT = UserSpec.model_validate(
    {
        "opening": "Cancel order W1001 please.",
        "turns": [
            {"when": "asks_confirmation", "say": "Yes, go ahead."},
            {"when": {"contains": ["anything else"]}, "say": "Also cancel W1002."},
        ],
    }
)
FAILED_STATE = Verdict(grader="state", passed=False, reason="final state differs")


def simulated() -> ModelCallEvent:
    """A model call of the simulated user: its messages came from a model, not a script."""
    return ModelCallEvent(t=0, model="sim", role="user")


def failure(t: Transcript, *verdicts: Verdict, cut: str = "", ended: str = "user_done") -> Failure:
    return Failure(
        transcript=t,
        verdicts=list(verdicts) or [FAILED_STATE],
        user=SCRIPT,
        story="",
        ended=ended,
        cut=cut,
    )


def blamed(trial: Failure) -> tuple[str, str]:
    blame = assign_blame(trial)
    return blame.party, blame.rule


def test_a_tool_that_raised_an_unexpected_exception_is_the_environments_fault() -> None:
    t = transcript(
        say("user", "Cancel W1001"), call("get_order", "boom", error="exception", order_id="1")
    )
    blame = assign_blame(failure(t))
    assert (blame.party, blame.rule) == ("environment", "tool_crashed")
    assert blame.reason == "get_order crashed: boom"


def test_a_tool_error_the_tool_meant_to_return_is_not_a_crash() -> None:
    t = transcript(say("user", "Cancel W1001"), call("get_order", error="not_found", order_id="1"))
    assert blamed(failure(t)) == ("agent", "expectation_failed")


def test_a_fault_that_outlasted_every_retry_is_the_environments_fault() -> None:
    calls = [call("get_order", error="unavailable", fault="http_503", order_id="1")] * (
        RETRY_ATTEMPTS
    )
    blame = assign_blame(failure(transcript(say("user", "hi"), *calls), cut="max steps"))
    assert (blame.party, blame.rule) == ("environment", "fault_never_cleared")
    assert blame.reason == "all 8 attempts of get_order failed with an injected fault (http_503)"


def test_a_fault_the_agent_gave_up_on_too_soon_is_the_agents_fault() -> None:
    calls = [call("get_order", error="unavailable", fault="http_503", order_id="1")] * 2
    assert blamed(failure(transcript(say("user", "hi"), *calls))) == (
        "agent",
        "expectation_failed",
    )


def test_the_never_cleared_threshold_is_what_the_retrying_oracle_attempts() -> None:
    assert RetryingOracle.attempts == RETRY_ATTEMPTS


def test_a_simulated_user_that_quit_with_a_scripted_turn_due_is_the_simulators_fault() -> None:
    t = transcript(
        say("user", "Cancel order W1001 please."),
        simulated(),
        say("assistant", "Shall I cancel W1001?"),
        say("user", "Yes, go ahead."),
        say("assistant", "Done. Is there anything else?"),
    )
    blame = assign_blame(failure(t))
    assert (blame.party, blame.rule) == ("user_simulator", "user_ended_early")
    assert blame.reason == "ended the conversation before its scripted turn 'Also cancel W1002.'"


@pytest.mark.parametrize(
    ("reply", "proposes"),
    [
        ("I can cancel appointment H2003. Would that be alright?", True),
        ("I will not cancel anything. Shall I double-check the details?", False),
    ],
)
def test_a_request_for_confirmation_is_heard_as_the_scripted_user_hears_it(
    reply: str, proposes: bool
) -> None:
    """With the suite's tools known, blame hears `asks_confirmation` by the scripted user's
    own judgement (the proposal bound by values), where the old word list reads each of
    these replies the other way."""
    suite = load_suite(CLINIC)
    task = suite.task("cancel-cardiology")
    script = UserSpec.model_validate(
        {
            "opening": task.spec.user.opening,
            "turns": [{"when": "asks_confirmation", "say": "Yes, cancel it please."}],
        }
    )
    t = transcript(
        say("user", script.opening),
        simulated(),
        call("find_patient", {"patient_id": "P1002"}, phone="612 555 0187"),
        say("assistant", reply),
    )
    by_words = replace(failure(t), user=script)
    heard = replace(by_words, proposes=listener(suite, task))
    assert asks_confirmation(reply) is not proposes
    quit_early = ("user_simulator", "user_ended_early")
    agents = ("agent", "expectation_failed")
    assert blamed(heard) == (quit_early if proposes else agents)
    assert blamed(by_words) == (agents if proposes else quit_early)
    user = ScriptedUsers(desk(suite)).play(task, script, t)
    said = asyncio.run(user.respond(reply))
    assert said == ("Yes, cancel it please." if proposes else None)


def test_a_scripted_user_that_ran_out_of_turns_is_not_blamed() -> None:
    t = transcript(
        say("user", "Cancel order W1001 please."),
        say("assistant", "Shall I cancel W1001?"),
        say("user", "Yes, go ahead."),
        say("assistant", "Done. Is there anything else?"),
    )
    assert blamed(failure(t)) == ("agent", "expectation_failed")


def test_a_simulated_user_that_invented_an_order_id_is_the_simulators_fault() -> None:
    t = transcript(
        say("user", "Cancel order W1001 please."),
        simulated(),
        say("assistant", "Which order?"),
        say("user", "Sorry, I meant W7777."),
    )
    blame = assign_blame(failure(t))
    assert (blame.party, blame.rule) == ("user_simulator", "user_invented_detail")
    assert blame.reason == "said 'w7777', which neither its scenario nor the agent gave it"


def test_a_simulated_user_repeating_a_number_the_agent_said_is_within_its_scenario() -> None:
    t = transcript(
        say("user", "Cancel order W1001 please."),
        simulated(),
        say("assistant", "I see W1001 and W1002 on your account; which one?"),
        say("user", "W1002, sorry."),
    )
    assert blamed(failure(t)) == ("agent", "expectation_failed")


def test_a_check_that_errored_is_the_graders_fault() -> None:
    t = transcript(
        say("user", "Cancel W1001"),
        CheckEvent(
            t=0, index=0, name="db row", passed=False, message="ConnectionError", errored=True
        ),
    )
    undecided = Verdict(grader="check", passed=False, reason="db row: x", decided=False)
    blame = assign_blame(failure(t, undecided))
    assert (blame.party, blame.rule) == ("grader", "check_errored")
    assert blame.reason == "check 'db row' errored: ConnectionError"


def test_a_grader_that_could_not_decide_is_the_graders_fault() -> None:
    undecided = Verdict(grader="state", passed=False, reason="no expected state", decided=False)
    blame = assign_blame(failure(transcript(say("user", "hi")), undecided))
    assert (blame.party, blame.rule) == ("grader", "grader_undecided")


def test_an_undecided_grader_beside_a_decided_failure_leaves_the_blame_on_the_agent() -> None:
    undecided = Verdict(grader="check", passed=False, reason="x: not run", decided=False)
    trial = failure(transcript(say("user", "hi")), undecided, FAILED_STATE)
    assert blamed(trial) == ("agent", "expectation_failed")


def test_a_trial_cut_short_is_the_agents_fault_with_the_cut_named() -> None:
    blame = assign_blame(failure(transcript(say("user", "hi")), cut="30 steps", ended="max_steps"))
    assert (blame.party, blame.rule, blame.reason) == (
        "agent",
        "agent_cut_off",
        "max_steps: 30 steps",
    )


def test_a_broken_policy_rule_is_the_agents_fault_naming_the_rule() -> None:
    broken = Verdict(grader="read_before_write", passed=False, reason="refund without a read")
    blame = assign_blame(failure(transcript(say("user", "hi")), broken))
    assert (blame.party, blame.rule, blame.reason) == (
        "agent",
        "policy_violation",
        "broke read_before_write",
    )


def test_every_blame_rule_is_named_once_and_names_a_party() -> None:
    rules = tried()
    names = [rule.name for rule in rules]
    assert len(names) == len(set(names)) == len(list(BLAME_RULES)) == 9
    assert {rule.party for rule in rules} == set(PARTIES)
    assert names[0] == "tool_crashed"
    assert names[-1] == "expectation_failed"


def test_a_blame_rule_added_from_a_test_module_is_tried_with_its_partys_rules() -> None:
    """`flaky_network` puts a failure whose tool timed out on the environment: registered
    after every built-in, it is still tried before the agent's rules."""

    @blame_rule("flaky_network", party="environment")
    def flaky_network(trial: Failure) -> str | None:
        timed_out = [e for e in trial.transcript.tool_calls() if e.error_kind == "timeout"]
        return f"{timed_out[0].canonical_name} timed out" if timed_out else None

    timeout = transcript(say("user", "Cancel W1"), call("get_order", "slow", error="timeout"))
    broken = Verdict(grader="read_before_write", passed=False, reason="no read")
    try:
        assert [r.name for r in tried()][2] == "flaky_network"
        blame = assign_blame(failure(timeout, broken))
        assert (blame.party, blame.rule, blame.reason) == (
            "environment",
            "flaky_network",
            "get_order timed out",
        )
        assert blamed(failure(transcript(say("user", "hi")), broken)) == (
            "agent",
            "policy_violation",
        )
    finally:
        BLAME_RULES.unregister("flaky_network")
    assert blamed(failure(timeout, broken)) == ("agent", "policy_violation")
