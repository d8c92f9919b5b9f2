"""Policy graders: rules a suite applies to every turn of every task's transcript.

Each rule reads the transcript in order, as the conversation happened, and fails at the
first event that breaks it, naming it. A suite configures its rules in `policy_rules`
(`toolproof.spec.policy`: which tools identify the user, which reach into an account, which
fields are a customer's data, which read must come before which write). Every rule is a
registration in `POLICY_RULES` (`toolproof.graders.rules`); this module holds the checks of
the built-in rules that have no module of their own, and their settings checks.
"""

from __future__ import annotations

from typing import Any

from toolproof.graders.base import Evidence, Verdict
from toolproof.graders.identity import identifies
from toolproof.graders.rules import POLICY_RULES, Compliance, RuleSettings, resolved
from toolproof.meaning.records import Records
from toolproof.meaning.values import tokens
from toolproof.spec.policy import (
    IdentifyBeforeAccess,
    NoOtherCustomerData,
    PolicyRuleSpec,
    ReadBeforeWrite,
    RefuseWithReason,
    RequiredRead,
)
from toolproof.transcript import MessageEvent, ToolCallEvent

# ---------------------------------------------------------------- who the user is


def identify_before_access(rule: IdentifyBeforeAccess, evidence: Evidence) -> Verdict:
    """No account-access tool is called before an identifying call has succeeded."""
    said: list[str] = []
    identified = False
    for event in evidence.transcript.events:
        if isinstance(event, MessageEvent) and event.role == "user":
            said.append(event.content)
        elif isinstance(event, ToolCallEvent) and event.by == "agent":
            if identifies(event, rule.identify, rule.user_given, said, evidence):
                identified = True
            elif event.canonical_name in rule.access and not identified:
                how = " or ".join(rule.identify)
                given = " with what the user gave" if rule.user_given else ""
                return _broken(
                    rule,
                    f"{event.canonical_name} called before the user was identified ({how}{given})",
                )
    return _held(rule, "the user was identified before any account was accessed")


# ---------------------------------------------------------------- checks before writes


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, str) and isinstance(b, str):
        return a.strip().casefold() == b.strip().casefold()
    return bool(a == b)


def _checks(required: RequiredRead, write: ToolCallEvent, read: ToolCallEvent) -> bool:
    """The read is of the record the write changes: each matched field holds the write's
    value, as the read's argument or as a field of its result."""
    if read.canonical_name != required.read or read.is_error:
        return False
    wrote = write.canonical_arguments or {}
    given = read.canonical_arguments or {}
    shown = read.result if isinstance(read.result, dict) else {}
    for write_arg, field in required.match.items():
        if write_arg not in wrote:
            continue
        value = wrote[write_arg]
        if not (_same(given.get(field), value) or _same(shown.get(field), value)):
            return False
    return True


def read_before_write(rule: ReadBeforeWrite, evidence: Evidence) -> Verdict:
    """Every call of a listed write comes after a successful read of the same record: the
    right end state reached without the check the policy requires still breaks it. A try
    the system refused at a record no result showed (a mistyped id) wrote nothing to check."""
    reads: list[ToolCallEvent] = []
    records = Records()
    for event in evidence.transcript.tool_calls():
        for required in rule.require:
            if (
                event.canonical_name == required.write
                and event.is_error
                and _unknown(required, event, records)
            ):
                continue
            if event.canonical_name == required.write and not any(
                _checks(required, event, read) for read in reads
            ):
                on = ", ".join(
                    f"{field}={value!r}"
                    for arg, field in required.match.items()
                    if (value := (event.canonical_arguments or {}).get(arg)) is not None
                )
                return _broken(
                    rule,
                    f"{event.canonical_name} called without {required.read}"
                    + (f"({on})" if on else "")
                    + " before it",
                )
        reads.append(event)
        if not event.is_error:
            records.add(event.result, event.canonical_arguments, event.canonical_name)
    return _held(rule, "every write came after the reads it requires")


def _unknown(required: RequiredRead, event: ToolCallEvent, records: Records) -> bool:
    """The write's matched arguments name no record any result showed."""
    given = event.canonical_arguments or {}
    values = [given.get(arg) for arg in required.match]
    return bool(values) and all(
        isinstance(v, str | int) and records.named(v) is None for v in values
    )


# ---------------------------------------------------------------- the library


def _broken(rule: PolicyRuleSpec, reason: str) -> Verdict:
    return Verdict(grader=rule.rule, passed=False, reason=reason)


def _held(rule: PolicyRuleSpec, reason: str) -> Verdict:
    return Verdict(grader=rule.rule, passed=True, reason=reason)


def check_policy(rules: list[PolicyRuleSpec], evidence: Evidence) -> list[Verdict]:
    """One verdict per configured rule, in the suite's order."""
    return [POLICY_RULES.get(rule.rule).check(resolved(rule), evidence) for rule in rules]


def violations(verdicts: list[Verdict]) -> list[str]:
    """The policy rules a trial's verdicts show broken."""
    return [v.grader for v in verdicts if not v.passed and v.grader in POLICY_RULES]


# ---------------------------------------------------------------- settings and compliance


def identified_settings(rule: IdentifyBeforeAccess | NoOtherCustomerData, at: RuleSettings) -> None:
    """The user is identified by reads the suite has."""
    for j, name in enumerate(rule.identify):
        at.tool(["identify", j], name, "read")


def identify_settings(rule: IdentifyBeforeAccess, at: RuleSettings) -> None:
    """Identifying reads, and account tools, the suite has."""
    identified_settings(rule, at)
    for j, name in enumerate(rule.access):
        at.tool(["access", j], name)


def identifying(rule: IdentifyBeforeAccess | NoOtherCustomerData) -> Compliance:
    """The oracle identifies the user, on what the user gave where the rule wants that."""
    tools = frozenset(rule.identify)
    return Compliance(identifies=tools, on_user_values=tools if rule.user_given else frozenset())


def read_settings(rule: ReadBeforeWrite, at: RuleSettings) -> None:
    """A required read guards a write, and matches the write's own arguments."""
    for j, required in enumerate(rule.require):
        at.tool(["require", j, "read"], required.read, "read")
        write = at.tool(["require", j, "write"], required.write, "write")
        known = set(write.get("properties", {})) if write is not None else set()
        for arg in required.match if write is not None else []:
            if arg not in known:
                at.problem(
                    ["require", j, "match", arg], f"{required.write} has no argument '{arg}'"
                )


def reason_settings(rule: RefuseWithReason, at: RuleSettings) -> None:
    """Each reason has words to look for."""
    for j, reason in enumerate(rule.reasons or []):
        if not tokens(reason):
            at.problem(["reasons", j], f"reason {reason!r} has no letters or digits to look for")
