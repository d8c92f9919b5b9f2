"""Recovery from failed tool calls: pure functions over trial transcripts.

A *failed call* is a tool call whose result is an error (`is_error`): an injected fault, or a
genuine error of the tool or of the call itself (malformed, unknown tool, invalid arguments).
It is *recovered* when the trial was not cut (`max_steps`, `context_overflow`) and, later in the
same trial, the agent got a successful result either from the same tool (a retry, with the same
or other arguments) or from another tool within the next `SWITCH_WINDOW` tool calls (switching
to an alternative). See docs/metrics.md, "Production conditions".
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

from toolproof.transcript import EndEvent, Event, ToolCallEvent, Transcript

SWITCH_WINDOW = 3
"""A successful call to another tool counts as switching when it is this close after the failure."""

LOOP_REPEATS = 3
"""The same failing call this many times in one trial is a loop."""

CUT_REASONS = frozenset({"max_steps", "context_overflow"})
"""End reasons after which no failed call of the trial counts as recovered."""

LOOP_END_REASONS = frozenset({"max_steps"})
"""End reasons that make a trial count as looping."""

GENUINE = "genuine"
"""The `by_fault` key of failed calls that carried no injected fault."""

NOT_FAULTS = frozenset({"latency"})
"""Injected faults that do not make a trial count for `corrective_action` (no error to correct)."""


Events = Transcript | Sequence[Event]


def _events(trial: Events) -> Sequence[Event]:
    return trial.events if isinstance(trial, Transcript) else trial


def _calls(trial: Events) -> list[ToolCallEvent]:
    return [e for e in _events(trial) if isinstance(e, ToolCallEvent) and e.by == "agent"]


def _end_reasons(trial: Events) -> set[str]:
    return {e.reason for e in _events(trial) if isinstance(e, EndEvent)}


def fault_key(call: ToolCallEvent) -> str:
    """The `by_fault` key of a failed call: its injected fault, or "genuine" without one."""
    return call.fault if call.fault is not None else GENUINE


def call_key(call: ToolCallEvent) -> tuple[str, str]:
    """What makes two calls "the same call": the suite's tool name and its arguments (as
    canonical JSON; the raw argument text when the arguments could not be parsed)."""
    arguments = call.canonical_arguments
    text = (
        call.raw_arguments
        if arguments is None
        else json.dumps(arguments, sort_keys=True, separators=(",", ":"), default=str)
    )
    return call.canonical_name, text


def recovered_calls(trial: Events) -> list[tuple[ToolCallEvent, bool]]:
    """Every failed call of one trial, in order, with whether it was recovered."""
    calls = _calls(trial)
    cut = bool(_end_reasons(trial) & CUT_REASONS)
    out: list[tuple[ToolCallEvent, bool]] = []
    for i, call in enumerate(calls):
        if not call.is_error:
            continue
        recovered = not cut and any(
            not later.is_error
            and (later.canonical_name == call.canonical_name or j <= SWITCH_WINDOW)
            for j, later in enumerate(calls[i + 1 :], start=1)
        )
        out.append((call, recovered))
    return out


def is_loop(trial: Events) -> bool:
    """True when the trial made the same failing call `LOOP_REPEATS` or more times (not
    necessarily in a row), or ended cut at `max_steps`."""
    if _end_reasons(trial) & LOOP_END_REASONS:
        return True
    repeats = Counter(call_key(c) for c in _calls(trial) if c.is_error)
    return any(n >= LOOP_REPEATS for n in repeats.values())


def had_fault(trial: Events) -> bool:
    """True when some tool call of the trial carried an injected fault other than latency."""
    return any(c.fault is not None and c.fault not in NOT_FAULTS for c in _calls(trial))


def trial_stats(trial: Events) -> dict[str, Any]:
    """What one trial contributes to the recovery metrics, small enough to store with it:
    failed and recovered calls by fault kind, whether it looped, whether it was faulted, and
    its tool-call errors."""
    failed: Counter[str] = Counter()
    recovered: Counter[str] = Counter()
    for call, ok in recovered_calls(trial):
        failed[fault_key(call)] += 1
        recovered[fault_key(call)] += ok
    return {
        "failed": dict(failed),
        "recovered": dict(recovered),
        "looped": is_loop(trial),
        "faulted": had_fault(trial),
        "tool_errors": sum(c.is_error for c in _calls(trial)),
    }
