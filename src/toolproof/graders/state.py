"""Final-state graders: the hash of the gold replay, and explicit assertions."""

from __future__ import annotations

from typing import Any

from toolproof.graders.base import Evidence, Verdict
from toolproof.spec.expectations import Expectations, StateCheck
from toolproof.world import describe_changes


def grade_state(expect: Expectations, evidence: Evidence) -> list[Verdict]:
    verdicts: list[Verdict] = []
    by_gold = expect.final_state == "gold"
    if (
        by_gold
        and expect.actions is not None
        and not (evidence.expected_hash is None and expect.check)
    ):
        # (Gold actions on real systems have no expected hash; their checks judge instead.)
        if evidence.expected_hash is None:
            verdicts.append(
                Verdict(grader="state", passed=False, reason="no expected state", decided=False)
            )
        elif evidence.final_hash == evidence.expected_hash:
            verdicts.append(Verdict(grader="state", passed=True, reason="final state as expected"))
        else:
            where = describe_changes(evidence.changes(), evidence.expected_changes)
            verdicts.append(
                Verdict(
                    grader="state",
                    passed=False,
                    reason=f"final state differs from the gold actions' result: {where}",
                )
            )
    if expect.state:
        failures = [f for c in expect.state if (f := _check(c, evidence)) is not None]
        verdicts.append(
            Verdict(
                grader="state_checks",
                passed=not failures,
                reason="; ".join(failures) or f"{len(expect.state)} state checks hold",
            )
        )
    return verdicts


def _check(check: StateCheck, evidence: Evidence) -> str | None:
    found, value = evidence.lookup(check.path)
    kind = check.check
    if kind == "exists":
        return None if found == check.exists else f"{check.path}: exists is {found}"
    if not found:
        return f"{check.path}: not found"
    ok: bool
    expected: Any = getattr(check, kind)
    if kind == "equals":
        ok = value == expected
    elif kind == "not_equals":
        ok = value != expected
    elif kind == "one_of":
        ok = value in expected
    else:
        ok = isinstance(value, str | list | dict) and expected in value
    return None if ok else f"{check.path}: {value!r} fails {kind} {expected!r}"
