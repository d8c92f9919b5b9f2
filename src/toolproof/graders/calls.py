"""Call graders: decisive reads, required calls (optionally ordered), forbidden calls, the call
budget."""

from __future__ import annotations

from collections.abc import Mapping

from toolproof.graders.base import Evidence, Verdict, describe_call, matches
from toolproof.meaning.records import ID_FIELD
from toolproof.spec.expectations import Action, CallSpec, Expectations
from toolproof.transcript import ToolCallEvent


def decisive_reads(
    expect: Expectations, write_tools: frozenset[str], required: Mapping[str, frozenset[str]]
) -> list[CallSpec]:
    """The calls that produce a task's answer. A task's own `reads` when it gives them;
    otherwise, when its gold actions write nothing, those actions, each matched on its tool
    and the arguments the tool requires (so a lookup that also sets an optional filter still
    counts). A task that writes, or whose user acts on their own part of the world, needs
    none: its final state already shows whether the work was done."""
    if expect.reads is not None:
        return list(expect.reads)
    actions = [a for a in expect.actions or [] if a.by == "agent"]
    if any(a.tool in write_tools for a in actions) or len(actions) < len(expect.actions or []):
        return []  # the agent writes, or the user acts: the final state shows the work
    return patterns(actions, required)


def patterns(actions: list[Action], required: Mapping[str, frozenset[str]]) -> list[CallSpec]:
    """Gold actions as call patterns, each on its tool, the arguments the tool requires and
    those that name a record (an optional `doctor_id`), so a lookup that also sets an
    optional filter still matches; each once."""
    reads: list[CallSpec] = []
    for action in actions:
        keep = required.get(action.tool)
        args = {
            k: v for k, v in action.args.items() if keep is None or k in keep or ID_FIELD.search(k)
        }
        read = CallSpec(tool=action.tool, args=args)
        if read not in reads:
            reads.append(read)
    return reads


def _made(
    pattern: CallSpec,
    calls: list[ToolCallEvent],
    required: Mapping[str, frozenset[str]] | None = None,
) -> bool:
    """A call of the pattern's tool with its arguments; an identifier the tool does not
    require (an optional `doctor_id`) need not be given (the slots searched by specialty are
    the same), but given, it must be the pattern's (another doctor's slots are not)."""
    keep = (required or {}).get(pattern.tool)

    def fits(call: ToolCallEvent) -> bool:
        given = call.canonical_arguments or {}
        needed = {k: v for k, v in pattern.args.items() if keep is None or k in keep or k in given}
        return matches(given, needed)

    return any(c.canonical_name == pattern.tool and fits(c) for c in calls)


def grade_calls(expect: Expectations, evidence: Evidence) -> list[Verdict]:
    calls = evidence.transcript.tool_calls()
    done = [c for c in calls if not c.is_error]
    verdicts: list[Verdict] = []
    reads = decisive_reads(expect, evidence.write_tools, evidence.required_args)
    if reads:
        unread = [
            describe_call(r.tool, r.args)
            for r in reads
            if not _made(r, done, evidence.required_args)
        ]
        reason = f"decisive read not made: {', '.join(unread)}" if unread else "reads made"
        verdicts.append(Verdict(grader="reads", passed=not unread, reason=reason))
    if expect.calls:
        missing = [describe_call(r.tool, r.args) for r in expect.calls if not _made(r, done)]
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
        hits = [describe_call(f.tool, f.args) for f in expect.forbidden_calls if _made(f, calls)]
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
