"""Who a failed trial is to blame on: the agent, the simulated user, the environment or a
grader, and the named rule that decided it.

A failure counts against the agent only once the explicit rules below have found no one
else at fault. They are tried in order, and the first that applies decides (each is a
registration in `BLAME_RULES`: `@blame_rule(NAME, party=...)` adds one, tried with its
party's rules):

- environment: a tool crashed (an unexpected exception, not an error the tool meant to
  return), or an injected fault never cleared (every attempt of one call failed with it,
  as many attempts as the retrying oracle makes: it could not have passed either);
- user_simulator: the simulated user ended the conversation while its task's script still
  had a turn to say (heard as the scripted user hears the agent: a request for confirmation
  is one that proposes a change the task waits for, by the scripted user's own judgement
  where the suite's tools are known), or said a detail (an id, a number) that neither its
  scenario nor the agent gave it;
- grader: every failing verdict is one its grader could not decide (a check that errored
  or was never run, no expected state);
- agent: the trial was cut short (max steps, context overflow), a policy rule was broken,
  or an expectation failed.

Environment and user come first: a trial whose tools or user misbehaved says nothing
reliable about the agent. Pure: the rules read the stored transcript, the verdicts, the
task's user spec and what the runner gives of the suite (`Failure.proposes`), so
`toolproof regrade` recomputes them.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel

from toolproof.graders.base import Verdict
from toolproof.graders.policy import violations
from toolproof.meaning.dialogue import holds
from toolproof.meaning.values import tokens
from toolproof.registry import Registry
from toolproof.spec.user import UserSpec, When
from toolproof.transcript import MessageEvent, ToolCallEvent, Transcript

Party = Literal["agent", "user_simulator", "environment", "grader"]
PARTIES: tuple[Party, ...] = ("agent", "user_simulator", "environment", "grader")

TRIED: tuple[Party, ...] = ("environment", "user_simulator", "grader", "agent")
"""The order the parties' rules are tried in: a trial whose tools or user misbehaved says
nothing reliable about the agent."""

FALLBACK = "expectation_failed"
"""The agent's rule that always applies, tried after every other."""


@dataclass(frozen=True)
class BlameRule:
    """A named rule that puts a failure on a party, with the reason; None: it does not
    apply."""

    name: str
    party: Party
    applies: Callable[[Failure], str | None]


BLAME_RULES: Registry[BlameRule] = Registry("blame rule", plugins="blame")
"""Every blame rule by name; installed packages add theirs as `blame.NAME` entry points
(a factory returning a `BlameRule`)."""


def blame_rule(
    name: str, *, party: Party
) -> Callable[[Callable[[Failure], str | None]], Callable[[Failure], str | None]]:
    """Register the decorated function as the blame rule `name` of `party`: it is tried
    with that party's rules, after those registered before it."""

    def add(applies: Callable[[Failure], str | None]) -> Callable[[Failure], str | None]:
        rule = BlameRule(name, party, applies)
        BLAME_RULES.register(name)(lambda: rule)
        return applies

    return add


RETRY_ATTEMPTS = 8
"""Attempts the retrying oracle makes of one call (`RetryingOracle.attempts`): an injected
fault that outlasts this many defeats it too."""

CRASH_KINDS = frozenset({"exception", "invalid_response"})
"""Tool errors no tool means to return: a Python tool raised something other than a
`ToolError`; a server's answer broke its protocol."""


class Blame(BaseModel):
    """Who a failed trial is to blame on, by which rule, and why."""

    party: Party
    rule: str
    reason: str


@dataclass(frozen=True)
class Failure:
    """A failed trial as the blame rules read it."""

    transcript: Transcript
    verdicts: list[Verdict]
    user: UserSpec
    story: str = ""
    ended: str = ""
    cut: str = ""
    """Why the agent's trial was cut short (max steps, context overflow); '' when it ran to
    its end."""
    proposes: Callable[[Transcript, str], bool] | None = None
    """Whether an agent reply, heard over the conversation up to and including it, proposes
    a change the task waits for: the scripted user's own judgement (its `Listener`, over the
    task's gold writes and the suite's tools), given by the runner. None where the tools are
    unknown: `asks_confirmation` is then read from the reply's words alone."""
    failing: list[Verdict] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "failing", [v for v in self.verdicts if not v.passed])


# ---------------------------------------------------------------- environment


@blame_rule("tool_crashed", party="environment")
def tool_crashed(trial: Failure) -> str | None:
    for call in trial.transcript.tool_calls():
        if call.is_error and call.fault is None and call.error_kind in CRASH_KINDS:
            return f"{call.canonical_name} crashed: {_error(call)}"
    return None


@blame_rule("fault_never_cleared", party="environment")
def fault_never_cleared(trial: Failure) -> str | None:
    attempts: dict[str, list[ToolCallEvent]] = defaultdict(list)
    for call in trial.transcript.tool_calls():
        key = call.canonical_name + json.dumps(call.canonical_arguments, sort_keys=True)
        attempts[key].append(call)
    for calls in attempts.values():
        if len(calls) >= RETRY_ATTEMPTS and all(c.is_error and c.fault for c in calls):
            kinds = ", ".join(sorted({c.fault for c in calls if c.fault}))
            return (
                f"all {len(calls)} attempts of {calls[0].canonical_name} failed with an "
                f"injected fault ({kinds})"
            )
    return None


def _error(call: ToolCallEvent) -> str:
    error = call.result.get("error") if isinstance(call.result, dict) else call.result
    return " ".join(str(error).split())[:160]


# ---------------------------------------------------------------- the simulated user


def _simulated(trial: Failure) -> bool:
    return bool(trial.transcript.model_calls("user"))


@blame_rule("user_ended_early", party="user_simulator")
def user_ended_early(trial: Failure) -> str | None:
    """Replays the task's scripted turns over the agent's replies, each trigger heard as the
    scripted user would have heard it at that reply: where the script would still have said
    a turn after the last reply, the simulated user quit too soon."""
    if not _simulated(trial) or trial.ended != "user_done":
        return None
    events = trial.transcript.events
    replies = [
        i for i, e in enumerate(events) if isinstance(e, MessageEvent) and e.role == "assistant"
    ]
    turns = trial.user.turns
    due = 0
    for n, at in enumerate(replies):
        if due >= len(turns):
            return None
        if _heard(trial, turns[due].when, at):
            if n == len(replies) - 1:
                return f"ended the conversation before its scripted turn {turns[due].say!r}"
            due += 1
    return None


def _heard(trial: Failure, when: When, at: int) -> bool:
    """Whether a scripted trigger holds for the agent reply at this event, as the scripted
    user hears it."""
    event = trial.transcript.events[at]
    assert isinstance(event, MessageEvent)
    proposes = None
    if when == "asks_confirmation" and trial.proposes is not None:
        heard = Transcript(events=trial.transcript.events[: at + 1])
        proposes = trial.proposes(heard, event.content)
    return holds(when, event.content, proposes)


def _digits(text: str) -> str:
    return re.sub(r"\D", "", text)


@blame_rule("user_invented_detail", party="user_simulator")
def user_invented_detail(trial: Failure) -> str | None:
    """A detail is a token with a digit (an order id, an amount, a date); it is given when
    its digits occur in a number of the scenario or of an agent message before it."""
    if not _simulated(trial):
        return None
    spec = trial.user
    scenario = [
        spec.opening,
        spec.persona,
        spec.instructions,
        trial.story,
        *(t.say for t in spec.turns),
        *(r.say for r in spec.replies),
    ]
    given = [_digits(t) for text in scenario for t in tokens(text) if _digits(t)]
    first = True
    for event in trial.transcript.events:
        if not isinstance(event, MessageEvent):
            continue
        words = tokens(event.content)
        if event.role == "assistant":
            given += [_digits(t) for t in words if _digits(t)]
            continue
        if first:
            first = False
            continue
        for word in words:
            digits = _digits(word)
            if digits and not any(digits in known for known in given):
                return f"said {word!r}, which neither its scenario nor the agent gave it"
    return None


# ---------------------------------------------------------------- graders


def _undecided_only(trial: Failure) -> bool:
    return not trial.cut and bool(trial.failing) and not any(v.decided for v in trial.failing)


@blame_rule("check_errored", party="grader")
def check_errored(trial: Failure) -> str | None:
    if not _undecided_only(trial):
        return None
    for event in trial.transcript.checks():
        if event.errored:
            return f"check {event.name!r} errored: {event.message}"
    return None


@blame_rule("grader_undecided", party="grader")
def grader_undecided(trial: Failure) -> str | None:
    if not _undecided_only(trial):
        return None
    first = trial.failing[0]
    return f"{first.grader} could not decide: {first.reason}"


# ---------------------------------------------------------------- the agent


@blame_rule("agent_cut_off", party="agent")
def agent_cut_off(trial: Failure) -> str | None:
    return f"{trial.ended}: {trial.cut}" if trial.cut else None


@blame_rule("policy_violation", party="agent")
def policy_violation(trial: Failure) -> str | None:
    broken = violations(trial.verdicts)
    return f"broke {', '.join(broken)}" if broken else None


@blame_rule("expectation_failed", party="agent")
def expectation_failed(trial: Failure) -> str | None:
    decided = [v for v in trial.failing if v.decided]
    if decided:
        return f"{decided[0].grader}: {decided[0].reason}"
    return "the trial failed"


def assign_blame(trial: Failure) -> Blame:
    """The first rule that applies to a failed trial decides who it is to blame on."""
    for rule in tried():
        reason = rule.applies(trial)
        if reason is not None:
            return Blame(party=rule.party, rule=rule.name, reason=reason)
    raise AssertionError("expectation_failed always applies")


def tried() -> list[BlameRule]:
    """Every blame rule in the order they are tried: by party (`TRIED`), in the order they
    were registered within one, and `expectation_failed`, which always applies, last."""
    rules = [BLAME_RULES.get(name) for name in BLAME_RULES]
    return sorted(rules, key=lambda r: (TRIED.index(r.party), r.name == FALLBACK))
