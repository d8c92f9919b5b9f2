"""Refusal graders: a task whose answer is "no" passes only an agent that found out why and
said so.

Doing nothing looks like a refusal, and so does "that order is on another account" said
without looking; a record pasted back looks like an answer. So a refusal task requires the
reads that establish the reason (by default the checks the suite's `read_before_write` rule
requires before the write the task forbids, as the gold actions make them), and after them a
message that declines (`toolproof.meaning.dialogue.declines`) and states a reason.
"""

from __future__ import annotations

from collections.abc import Mapping

from toolproof.graders.base import Evidence, Verdict, describe_call, matches
from toolproof.graders.calls import patterns
from toolproof.graders.policy import DEFAULT_REASONS, gives_reason
from toolproof.meaning.dialogue import declines
from toolproof.spec.expectations import CallSpec, Expectations, Refusal
from toolproof.spec.policy import PolicyRuleSpec, ReadBeforeWrite, RefuseWithReason
from toolproof.transcript import MessageEvent, ToolCallEvent


def is_refusal(expect: Expectations, write_tools: frozenset[str]) -> bool:
    """The task says so, or its gold actions write nothing while it forbids a write."""
    if expect.refusal is not None:
        return bool(expect.refusal)
    return (
        expect.actions is not None
        and not any(a.tool in write_tools for a in expect.actions)
        and any(f.tool in write_tools for f in expect.forbidden_calls)
    )


def establishing_reads(
    expect: Expectations,
    rules: list[PolicyRuleSpec],
    write_tools: frozenset[str],
    required: Mapping[str, frozenset[str]],
) -> list[CallSpec]:
    """The reads that establish why the answer is no, each matched on its tool and the
    arguments the tool requires."""
    if isinstance(expect.refusal, Refusal) and expect.refusal.reads is not None:
        return list(expect.refusal.reads)
    gold = [a for a in expect.actions or [] if a.tool not in write_tools]
    refused = {f.tool for f in expect.forbidden_calls if f.tool in write_tools}
    checks = {
        need.read
        for rule in rules
        if isinstance(rule, ReadBeforeWrite)
        for need in rule.require
        if need.write in refused
    }
    return patterns([a for a in gold if a.tool in checks] or gold, required)


def _reasons(expect: Expectations, rules: list[PolicyRuleSpec]) -> list[str]:
    if isinstance(expect.refusal, Refusal) and expect.refusal.reasons is not None:
        return list(expect.refusal.reasons)
    words = next(
        (r.reasons for r in rules if isinstance(r, RefuseWithReason) and r.reasons is not None),
        list(DEFAULT_REASONS),
    )
    return [*(o for fact in expect.facts() for o in fact.options), *words]


def grade_refusal(
    expect: Expectations, rules: list[PolicyRuleSpec], evidence: Evidence
) -> list[Verdict]:
    if not is_refusal(expect, evidence.write_tools):
        return []
    reads = establishing_reads(expect, rules, evidence.write_tools, evidence.required_args)
    reasons = _reasons(expect, rules)
    pending = list(reads)
    early = False
    for event in evidence.transcript.events:
        if isinstance(event, ToolCallEvent) and not event.is_error:
            pending = [
                r
                for r in pending
                if not (
                    event.canonical_name == r.tool and matches(event.canonical_arguments, r.args)
                )
            ]
        elif (
            isinstance(event, MessageEvent)
            and event.role == "assistant"
            and declines(event.content)
            and gives_reason(event.content, reasons)
        ):
            if not pending:
                return [Verdict(grader="refusal", passed=True, reason=_PASSED)]
            early = True
    unread = ", ".join(describe_call(r.tool, r.args) for r in pending)
    if early:
        reason = f"declined without first reading what establishes why: {unread}"
    elif pending:
        reason = f"never read what establishes the refusal: {unread}"
    else:
        reason = "never declined with a reason (no message said it cannot be done, and why)"
    return [Verdict(grader="refusal", passed=False, reason=reason)]


_PASSED = "declined with a reason, after the reads that establish it"
