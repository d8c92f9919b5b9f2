"""Graders: pure functions from a finished trial's evidence to verdicts."""

from __future__ import annotations

from toolproof.graders.base import Evidence, Verdict
from toolproof.graders.calls import grade_calls
from toolproof.graders.checks import grade_checks
from toolproof.graders.communication import grade_communication
from toolproof.graders.policy import RULES
from toolproof.graders.state import grade_state
from toolproof.spec.models import Expectations

__all__ = ["Evidence", "Verdict", "grade"]


def grade(expect: Expectations, rules: list[str], evidence: Evidence) -> list[Verdict]:
    """Every verdict for a trial: its task's expectations, then the suite's policy rules."""
    verdicts = [
        *grade_state(expect, evidence),
        *grade_calls(expect, evidence),
        *grade_communication(expect, evidence),
        *grade_checks(expect, evidence),
    ]
    verdicts.extend(RULES[rule](evidence) for rule in rules)
    return verdicts
