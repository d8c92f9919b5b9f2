"""The graders every trial meets, registered in `GRADERS` in the order their verdicts appear.

A grader is a pure function from a task's expectations, the suite's policy rules and the
trial's evidence to verdicts; it is one implementation plus one registration here.
"""

from __future__ import annotations

from collections.abc import Callable

from toolproof.graders.base import Evidence, Grader, Verdict
from toolproof.registry import Registry
from toolproof.spec.expectations import Expectations
from toolproof.spec.policy import PolicyRuleSpec

GRADERS: Registry[Grader] = Registry("grader", plugins="grader")


def of_expectations(grade: Callable[[Expectations, Evidence], list[Verdict]]) -> Grader:
    """A grader of the task's expectations alone (the policy rules are not its business)."""

    def grader(
        expect: Expectations, rules: list[PolicyRuleSpec], evidence: Evidence
    ) -> list[Verdict]:
        return grade(expect, evidence)

    return grader


@GRADERS.register("state")
def state() -> Grader:
    from toolproof.graders.state import grade_state

    return of_expectations(grade_state)


@GRADERS.register("calls")
def calls() -> Grader:
    from toolproof.graders.calls import grade_calls

    return of_expectations(grade_calls)


@GRADERS.register("communication")
def communication() -> Grader:
    from toolproof.graders.communication import grade_communication

    return of_expectations(grade_communication)


@GRADERS.register("checks")
def checks() -> Grader:
    from toolproof.graders.checks import grade_checks

    return of_expectations(grade_checks)


@GRADERS.register("writes")
def writes() -> Grader:
    from toolproof.graders.writes import grade_writes

    return of_expectations(grade_writes)


@GRADERS.register("refusal")
def refusal() -> Grader:
    from toolproof.graders.refusal import grade_refusal

    return grade_refusal


@GRADERS.register("policy")
def policy() -> Grader:
    from toolproof.graders.policy import check_policy

    def grader(
        expect: Expectations, rules: list[PolicyRuleSpec], evidence: Evidence
    ) -> list[Verdict]:
        return check_policy(rules, evidence)

    return grader


def grade(expect: Expectations, rules: list[PolicyRuleSpec], evidence: Evidence) -> list[Verdict]:
    """Every verdict for a trial: each registered grader's, in the order they registered."""
    return [verdict for name in GRADERS for verdict in GRADERS.get(name)(expect, rules, evidence)]
