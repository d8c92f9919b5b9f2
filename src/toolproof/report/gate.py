"""The gate's findings in words: each check's detail, as the terminal, JUnit, Markdown
and JSON show it, and the gate's JSON document."""

from __future__ import annotations

from typing import Any

from toolproof.ci.findings import (
    Drop,
    GateCheck,
    Integrity,
    NoBaseline,
    NoTrials,
    RegressedTasks,
    RunState,
    Threshold,
    Unmatched,
)
from toolproof.ci.gate import GateResult
from toolproof.format import fmt, p_phrase
from toolproof.store.verify import Verification

NAMED_TASKS = 10
"""Flagged tasks a check's detail names; --json lists them all."""

_UNMATCHED = {
    "model": "no trial of the run can be paired with one of baseline {}",
    "variant": "no trial of the run matches one of baseline {}",
    "trials": "no matched trials with baseline {}",
}


def detail(check: GateCheck) -> str:
    """What a check found, in one line: the value against its limit, the test and its
    result, or why it could not be decided."""
    found = check.found
    match found:
        case RunState():
            return _run_state(found)
        case NoTrials(left_out=0):
            return "no trial recorded: nothing to gate"
        case NoTrials():
            return (
                f"every trial ({found.left_out}) is of an ungradable task, left out: nothing to "
                "gate (--include-ungradable counts them)"
            )
        case Threshold():
            return _threshold(found, check.passed)
        case Unmatched():
            return _UNMATCHED[found.missing].format(found.baseline)
        case Drop():
            return _drop(found, check.passed)
        case RegressedTasks():
            return _regressed_tasks(found)
        case NoBaseline():
            return "no --baseline run given"
        case Integrity():
            return _integrity(found.verification)


def _run_state(state: RunState) -> str:
    if state.status == "finished":
        return f"finished at {state.finished_at}"
    return (
        f"the run is '{state.status}'"
        + (f" ({state.stopped})" if state.stopped else ": interrupted or still running")
        + f" with {state.trials} trials; resume it before gating"
    )


def _threshold(found: Threshold, passed: bool) -> str:
    name = found.metric
    if found.value is None:
        if found.too_few_trials:
            return f"{name} not computed: too few trials"
        return f"{name} was not measured in this run"
    parts = found.reliability.parts_note() if found.reliability else ""
    shown = f"{name} = {fmt(found.value, 4)}{parts}"
    if passed:
        return shown
    return shown + f" is {'below' if found.at_least else 'above'} {found.limit:g}"


def _drop(found: Drop, passed: bool) -> str:
    m = found.metric
    delta = m.delta if m.delta is not None else 0.0
    interval = f"[{fmt(m.low, signed=True)}, {fmt(m.high, signed=True)}]"
    test = f"{p_phrase(m.p_value)} over {found.tasks} tasks, {1 - found.alpha:.0%} CI {interval}"
    shown = f"{m.name} {fmt(m.a)} → {fmt(m.b)} (Δ {fmt(delta, signed=True)}, {test})"
    if not passed:
        return shown + f": significant drop; {found.regressed_tasks} task(s) regressed"
    return shown + (": a drop, but not significant" if found.dropped else "")


def _regressed_tasks(found: RegressedTasks) -> str:
    method = f"Fisher's exact test per task, Holm over {found.tasks} tasks, alpha {found.alpha:g}"
    flagged = found.flagged
    if flagged:
        named = ", ".join(
            f"{t.task_id} {t.passed_a}/{t.trials} → {t.passed_b}/{t.trials} "
            f"(adjusted {p_phrase(t.p_adjusted)})"
            for t in flagged[:NAMED_TASKS]
        )
        more = len(flagged) - NAMED_TASKS
        shown = (
            f"{len(flagged)} of {found.tasks} tasks regressed significantly, {found.allowed} "
            f"allowed: {named}" + (f", and {more} more (--json)" if more > 0 else "")
        )
    else:
        shown = f"none of {found.tasks} tasks regressed significantly"
        if found.needed is not None:
            shown += f", but none could with {found.fewest} trials per task ({found.needed} needed)"
    return f"{shown} ({method})"


def _integrity(verification: Verification) -> str:
    run_id = verification.run_id
    if not verification.recorded:
        return f"no manifest recorded for run {run_id}"
    if verification.ok:
        return f"{verification.trials} trials match manifest {verification.manifest_hash}"
    shown = "; ".join(verification.problems[:3])
    more = len(verification.problems) - 3
    return shown + (f"; {more} more (toolproof verify {run_id})" if more > 0 else "")


def check_json(check: GateCheck) -> dict[str, Any]:
    """One check in the gate's JSON; a `regressed_tasks` one lists every flagged task."""
    out: dict[str, Any] = {
        "name": check.name,
        "model": check.model or None,
        "kind": check.kind,
        "passed": check.passed,
        "skipped": check.skipped,
        "value": check.value,
        "limit": check.limit,
        "detail": detail(check),
    }
    if check.kind == "regressed_tasks":
        found = check.found
        flagged = found.flagged if isinstance(found, RegressedTasks) else ()
        out["tasks"] = [t.as_json() for t in flagged]
    return out


def gate_json(result: GateResult) -> dict[str, Any]:
    """The gate's result as `toolproof gate --json` writes it."""
    return {
        "run_id": result.run_id,
        "suite": result.summary.suite.model_dump(),
        "agent": result.run.agent,
        "baseline": result.baseline,
        "passed": result.passed,
        "gate": result.spec.model_dump(),
        "sources": result.sources,
        "conditions": [check_json(c) for c in result.checks],
        "warnings": result.warnings,
        "manifest": None if result.verification is None else result.verification.as_json(),
        "comparison": None if result.comparison is None else result.comparison.as_json(),
        "summary": result.summary.as_json(),
    }
