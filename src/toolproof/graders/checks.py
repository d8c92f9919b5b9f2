"""Check graders: the final-state checks a trial ran against real systems, as verdicts.

The trial runs each `expect.check` after the conversation and records its result in the
transcript (`CheckEvent`); this grader only reads those records, so re-grading needs no
live system. A check that was not recorded (the trial ended in an infrastructure error, or
the check was added to the task later) fails, as does one that errored; neither decided
anything, so both are marked undecided (the grader's failure, not the agent's).
"""

from __future__ import annotations

from toolproof.graders.base import Evidence, Verdict
from toolproof.spec.expectations import Expectations


def grade_checks(expect: Expectations, evidence: Evidence) -> list[Verdict]:
    recorded = {(e.index, e.name): e for e in evidence.transcript.checks()}
    verdicts = []
    for index, check in enumerate(expect.check):
        event = recorded.get((index, check.label))
        if event is None:
            verdicts.append(
                Verdict(
                    grader="check", passed=False, reason=f"{check.label}: not run", decided=False
                )
            )
        else:
            verdicts.append(
                Verdict(
                    grader="check",
                    passed=event.passed,
                    reason=f"{check.label}: {event.message}",
                    decided=not event.errored,
                )
            )
    return verdicts
