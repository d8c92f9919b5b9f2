"""Grading a finished conversation, and everything else a trial's record derives from it.

A live trial and `toolproof regrade` both go through here, so a fix to a grader, to a blame
rule or to how recovery and loops are counted reaches stored runs by re-grading them:
nothing a record derives from its transcript is computed anywhere else.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from toolproof.agents.registry import desk
from toolproof.graders import Blame, Evidence, Failure, Verdict, assign_blame, grade, violations
from toolproof.graders.base import allowed_values
from toolproof.graders.ownership import (
    Ownership,
    caller_of,
    index_world,
    name_words_in,
    names_in,
    patched,
)
from toolproof.graders.refusal import declined_tools
from toolproof.graders.rubric import JudgeRecord, grade_rubric
from toolproof.metrics.personas import GoldCall, conversation_stats
from toolproof.metrics.recovery import trial_stats
from toolproof.records.trial import Outcome
from toolproof.spec.expectations import Action, CallSpec
from toolproof.spec.policy import NoOtherCustomerData
from toolproof.spec.task import Task
from toolproof.suite.loaded import Suite
from toolproof.transcript import Transcript
from toolproof.users.scripted import Listener
from toolproof.world import Change, World


@dataclass(frozen=True)
class Judgement:
    """A graded trial: its outcome and reason, every verdict, and for a failed trial who
    it is to blame on. `policy` lists the rules broken, or is None when the suite checks
    none; `undecided` the rubric criteria whose judge failed their controls."""

    outcome: Outcome
    reason: str
    verdicts: list[Verdict]
    blame: Blame | None
    policy: list[str] | None
    undecided: list[str] = field(default_factory=list)

    def record(self) -> dict[str, Any]:
        """The fields of a trial record it sets."""
        return {
            "outcome": self.outcome,
            "reason": self.reason,
            "verdicts": self.verdicts,
            "blame": self.blame,
        }


def judge(
    suite: Suite,
    task: Task,
    transcript: Transcript,
    world: World,
    final_hash: str,
    expected_hash: str | None,
    ended: str,
    failure: str = "",
    rubric: JudgeRecord | None = None,
    expected_changes: Sequence[Change] = (),
) -> Judgement:
    """Grade a finished conversation. `failure` is why the agent's trial ended early (max
    steps, context overflow), which fails it whatever the verdicts say; `rubric` is the judge
    model's verdicts on the task's rubric, if judged."""
    evidence = Evidence(
        transcript=transcript,
        lookup=world.lookup,
        final_hash=final_hash,
        expected_hash=expected_hash,
        write_tools=frozenset(name for name, b in suite.tools.items() if b.write),
        read_tools=frozenset(name for name, b in suite.tools.items() if not b.write),
        ended=ended,
        changes=world.diff,
        expected_changes=expected_changes,
        required_args={
            name: frozenset(b.schema.parameters.get("required", []))
            for name, b in suite.tools.items()
        },
        ownership=ownership(suite, task),
        facts=tuple(form for fact in task.spec.expect.facts() for form in fact.options),
        alternatives=suite.memo(
            ("alternatives", ""),
            lambda: allowed_values({n: b.schema.parameters for n, b in suite.tools.items()}),
        ),
        parameters={name: b.schema.parameters for name, b in suite.tools.items()},
        descriptions={name: b.schema.description for name, b in suite.tools.items()},
        declined=declined(suite, task),
    )
    rules = list(suite.file.policy_rules)
    verdicts = grade(task.spec.expect, rules, evidence)
    policy = violations(verdicts) if rules else None
    undecided: list[str] = []
    if rubric is not None:
        verdicts += grade_rubric(task.spec.expect, rubric)
        undecided = list(rubric.undecided())
    failed = [v for v in verdicts if not v.passed]
    if not failure and not failed:
        return Judgement("passed", "", verdicts, None, policy, undecided)
    reason = f"{ended}: {failure}" if failure else f"{failed[0].grader}: {failed[0].reason}"
    blame = assign_blame(
        Failure(
            transcript=transcript,
            verdicts=verdicts,
            user=task.spec.user,
            story=task.spec.story,
            ended=ended,
            cut=failure,
            proposes=listener(suite, task),
        )
    )
    return Judgement("failed", reason, verdicts, blame, policy, undecided)


def listener(suite: Suite, task: Task) -> Callable[[Transcript, str], bool]:
    """Whether an agent reply proposes a change the task waits for, heard over the
    conversation up to it as the run's scripted user hears it (the suite's tools, the task's
    gold writes): blame replays the script with it, so the two never disagree."""
    tools = desk(suite)
    gold = task.spec.expect.actions or []

    def proposes(heard: Transcript, reply: str) -> bool:
        return Listener(tools, gold, heard).proposes(reply)

    return proposes


def declined(suite: Suite, task: Task) -> tuple[str, ...]:
    """The writes the task's answer declines, derived once per task."""

    def build() -> tuple[str, ...]:
        writes = frozenset(name for name, b in suite.tools.items() if b.write)
        reads = frozenset(name for name, b in suite.tools.items() if not b.write)
        said = {name: b.schema.description for name, b in suite.tools.items()}
        return tuple(declined_tools(task.spec.expect, task.spec.user, writes, reads, said))

    return suite.memo(("declined", task.id), build)


def ownership(suite: Suite, task: Task) -> Ownership | None:
    """Whose records are whose in the task's world, and which are the caller's: for a suite
    that protects other customers' data (`no_other_customer_data`), made once per task."""
    rule = next((r for r in suite.file.policy_rules if isinstance(r, NoOtherCustomerData)), None)
    if rule is None:
        return None
    base = suite.memo(("owners", ""), lambda: index_world(suite.world, rule.owner))
    if not base:
        return None

    def build() -> Ownership:
        patch = task.spec.initial_state
        start = suite.start_state(task)
        owners = index_world(patched(start, patch), rule.owner, base) if patch else base
        proofs = [
            value
            for action in task.spec.expect.actions or []
            if action.tool in rule.identify
            for value in action.args.values()
        ]
        names = suite.memo(("owner-names", ""), lambda: names_in(suite.world, rule.owner))
        caller = caller_of(owners, task.spec.user.owns, proofs, names)
        words = suite.memo(("owner-words", ""), lambda: name_words_in(suite.world, rule.owner))
        return Ownership(rule.owner, owners, caller, names, words)

    return suite.memo(("ownership", task.id), build)


def derived(
    transcript: Transcript, judgement: Judgement | None = None, task: Task | None = None
) -> dict[str, Any]:
    """The fields of a trial record that follow from its transcript (and its task's gold
    calls): token usage, the agent's and the simulated user's cost, tool calls, agent turns,
    and the condition statistics (failed and recovered calls, loops, faults; for a persona
    or checkpoint trial its conversation) the metrics pool. With the trial's judgement, the
    statistics also carry the policy rules it broke and who its failure is to blame on, so
    that metrics over stored rows can count them, and the rubric criteria left undecided
    because their judge failed its controls."""
    conditions = trial_stats(transcript)
    conversation = conversation_stats(transcript, gold_calls(task) if task else [])
    if conversation is not None:
        conditions["conversation"] = conversation
    if judgement is not None and judgement.policy is not None:
        conditions["policy_violations"] = judgement.policy
    if judgement is not None and judgement.blame is not None:
        conditions["blame"] = {"party": judgement.blame.party, "rule": judgement.blame.rule}
    if judgement is not None and judgement.undecided:
        conditions["rubric_undecided"] = judgement.undecided
    return {
        "usage": transcript.usage(),
        "cost_usd": transcript.cost_usd(),
        "user_cost_usd": transcript.cost_usd("user"),
        "tool_calls": len(transcript.tool_calls()),
        "turns": len(transcript.messages("assistant")),
        "conditions": conditions,
    }


def gold_calls(task: Task) -> list[GoldCall]:
    """The calls a task's gold makes: its actions, and its required calls."""
    expect = task.spec.expect
    agent = [a for a in expect.actions or [] if a.by == "agent"]
    calls: list[Action | CallSpec] = [*agent, *expect.calls]
    return [(c.tool, c.args) for c in calls]
