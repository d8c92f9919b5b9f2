"""Grading a finished conversation, and everything else a trial's record derives from it.

A live trial and `toolproof regrade` both go through here, so a fix to a grader or to how
recovery and loops are counted reaches stored runs by re-grading them: nothing a record
derives from its transcript is computed anywhere else.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from toolproof.graders import Evidence, Verdict, grade
from toolproof.metrics.recovery import trial_stats
from toolproof.results import Outcome
from toolproof.spec.source import Task
from toolproof.suite.loaded import Suite
from toolproof.transcript import Transcript
from toolproof.world import Change, World


def judge(
    suite: Suite,
    task: Task,
    transcript: Transcript,
    world: World,
    final_hash: str,
    expected_hash: str | None,
    ended: str,
    failure: str = "",
    expected_changes: Sequence[Change] = (),
) -> tuple[Outcome, str, list[Verdict]]:
    """Grade a finished conversation: (outcome, reason, verdicts). `failure` is why the
    agent's trial ended early (max steps, context overflow), which fails it whatever the
    verdicts say."""
    evidence = Evidence(
        transcript=transcript,
        lookup=world.lookup,
        final_hash=final_hash,
        expected_hash=expected_hash,
        write_tools=frozenset(name for name, b in suite.tools.items() if b.write),
        ended=ended,
        changes=world.diff,
        expected_changes=expected_changes,
        required_args={
            name: frozenset(b.schema.parameters.get("required", []))
            for name, b in suite.tools.items()
        },
    )
    verdicts = grade(task.spec.expect, list(suite.file.policy_rules), evidence)
    if failure:
        return "failed", f"{ended}: {failure}", verdicts
    failed = [v for v in verdicts if not v.passed]
    if failed:
        return "failed", f"{failed[0].grader}: {failed[0].reason}", verdicts
    return "passed", "", verdicts


def derived(transcript: Transcript) -> dict[str, Any]:
    """The fields of a trial record that follow from its transcript alone: token usage, the
    agent's and the simulated user's cost, tool calls, agent turns, and the condition
    statistics (failed and recovered calls, loops, faults) the metrics pool."""
    return {
        "usage": transcript.usage(),
        "cost_usd": transcript.cost_usd(),
        "user_cost_usd": transcript.cost_usd("user"),
        "tool_calls": len(transcript.tool_calls()),
        "turns": len(transcript.messages("assistant")),
        "conditions": trial_stats(transcript),
    }
