"""Graders: pure functions from a finished trial's evidence to verdicts."""

from __future__ import annotations

from toolproof.graders.base import Evidence, Verdict
from toolproof.graders.blame import BLAME_RULES, PARTIES, Blame, Failure, assign_blame
from toolproof.graders.calls import grade_calls, grade_writes
from toolproof.graders.checks import grade_checks
from toolproof.graders.communication import grade_communication
from toolproof.graders.policy import check_policy, violations
from toolproof.graders.refusal import grade_refusal
from toolproof.graders.state import grade_state
from toolproof.spec.models import Expectations, PolicyRuleSpec

__all__ = [
    "BLAME_RULES",
    "PARTIES",
    "Blame",
    "Evidence",
    "Failure",
    "Verdict",
    "assign_blame",
    "grade",
    "violations",
]


def grade(expect: Expectations, rules: list[PolicyRuleSpec], evidence: Evidence) -> list[Verdict]:
    """Every verdict for a trial: its task's expectations, then the suite's policy rules."""
    return [
        *grade_state(expect, evidence),
        *grade_calls(expect, evidence),
        *grade_communication(expect, evidence),
        *grade_checks(expect, evidence),
        *grade_writes(expect, evidence),
        *grade_refusal(expect, rules, evidence),
        *check_policy(rules, evidence),
    ]
