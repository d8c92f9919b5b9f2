"""Call graders: required calls (optionally ordered), forbidden calls, the call budget."""

from __future__ import annotations

from toolproof.graders.base import Evidence, Verdict, describe_call, matches
from toolproof.spec.models import Expectations


def grade_calls(expect: Expectations, evidence: Evidence) -> list[Verdict]:
    calls = evidence.transcript.tool_calls()
    verdicts: list[Verdict] = []
    if expect.calls:
        done = [c for c in calls if not c.is_error]
        missing = [
            describe_call(r.tool, r.args)
            for r in expect.calls
            if not any(
                c.canonical_name == r.tool and matches(c.canonical_arguments, r.args) for c in done
            )
        ]
        if missing:
            verdicts.append(
                Verdict(grader="calls", passed=False, reason=f"missing call {', '.join(missing)}")
            )
        elif expect.ordered_calls:
            position = 0
            for required in expect.calls:
                while position < len(done) and not (
                    done[position].canonical_name == required.tool
                    and matches(done[position].canonical_arguments, required.args)
                ):
                    position += 1
                if position == len(done):
                    where = describe_call(required.tool, required.args)
                    verdicts.append(
                        Verdict(
                            grader="calls", passed=False, reason=f"calls out of order at {where}"
                        )
                    )
                    break
                position += 1
            else:
                verdicts.append(
                    Verdict(grader="calls", passed=True, reason="required calls made in order")
                )
        else:
            verdicts.append(Verdict(grader="calls", passed=True, reason="required calls made"))
    if expect.forbidden_calls:
        hits = [
            describe_call(f.tool, f.args)
            for f in expect.forbidden_calls
            if any(
                c.canonical_name == f.tool and matches(c.canonical_arguments, f.args) for c in calls
            )
        ]
        verdicts.append(
            Verdict(
                grader="forbidden_calls",
                passed=not hits,
                reason=f"forbidden call {', '.join(hits)}" if hits else "no forbidden call",
            )
        )
    if expect.max_tool_calls is not None:
        verdicts.append(
            Verdict(
                grader="max_tool_calls",
                passed=len(calls) <= expect.max_tool_calls,
                reason=f"{len(calls)} tool calls (limit {expect.max_tool_calls})",
            )
        )
    return verdicts
