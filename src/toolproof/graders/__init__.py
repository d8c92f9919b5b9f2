"""Graders: pure functions from a finished trial's evidence to verdicts."""

from __future__ import annotations

from toolproof.graders.base import Evidence, Verdict
from toolproof.graders.blame import BLAME_RULES, PARTIES, Blame, Failure, assign_blame
from toolproof.graders.policy import violations
from toolproof.graders.registry import GRADERS, grade

__all__ = [
    "BLAME_RULES",
    "GRADERS",
    "PARTIES",
    "Blame",
    "Evidence",
    "Failure",
    "Verdict",
    "assign_blame",
    "grade",
    "violations",
]
