"""What a policy rule is: one registration that carries everything the rule touches.

A rule is its settings' model (what `policy_rules:` may say of it), its check of a
transcript, the check of its settings against the suite's tools (located problems before
anything runs), and what an agent does to keep it, which the oracle does so that a sound
suite's oracle passes every task. Adding a rule is one `@policy_rule(...)` on its check:

    class SignOff(PolicyRuleSpec):
        rule: Literal["sign_off"]
        words: str = "Goodbye"

    @policy_rule("sign_off", spec=SignOff, comply=lambda r: Compliance(reply=...))
    def sign_off(rule: SignOff, evidence: Evidence) -> Verdict: ...

An installed package adds one through the entry point `policy.NAME`, naming a factory that
returns its `PolicyRule`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, Protocol, TypeVar

from toolproof.graders.base import Evidence, Verdict
from toolproof.registry import Registry
from toolproof.spec.policy import (
    ConfirmBeforeWrite,
    IdentifyBeforeAccess,
    NoOtherCustomerData,
    PolicyRuleSpec,
    ReadBeforeWrite,
    RefuseWithReason,
)

S = TypeVar("S", bound=PolicyRuleSpec)

Loc = list[str | int]


class RuleSettings(Protocol):
    """What a rule's settings check sees of the suite: its tools, and where to report. Every
    `loc` is relative to the rule's own entry under `policy_rules:`."""

    def tool(
        self, loc: Loc, name: str, kind: Literal["read", "write"] | None = None
    ) -> Mapping[str, Any] | None:
        """The parameters schema of the suite's tool `name`; a tool `tools:` does not list,
        or one not of `kind`, is reported at `loc` (None where the tool is unknown or did
        not load)."""
        ...

    def problem(self, loc: Loc, message: str) -> None:
        """Report a problem of the rule's settings at `loc`."""
        ...


@dataclass(frozen=True)
class Compliance:
    """What an agent does to keep a rule: the oracle does all of it, so that it keeps every
    rule of the suite while it replays the gold actions."""

    confirm_writes: bool = False
    """Propose every write and wait for the user's yes before it."""
    identifies: frozenset[str] = frozenset()
    """Tools whose successful call identifies the user."""
    on_user_values: frozenset[str] = frozenset()
    """Of those, the ones called only on a value the user said: the oracle asks for it."""
    reply: tuple[Callable[[str], str], ...] = ()
    """Rewrites of every message the agent sends, in order."""

    def __or__(self, other: Compliance) -> Compliance:
        return Compliance(
            confirm_writes=self.confirm_writes or other.confirm_writes,
            identifies=self.identifies | other.identifies,
            on_user_values=self.on_user_values | other.on_user_values,
            reply=(*self.reply, *other.reply),
        )

    def say(self, message: str) -> str:
        """A message as the rules want it said."""
        for rewrite in self.reply:
            message = rewrite(message)
        return message


@dataclass(frozen=True)
class PolicyRule(Generic[S]):
    """One policy rule: its name, settings, check, settings check and how it is kept."""

    name: str
    spec: type[S]
    """The model of its entry under `policy_rules:` (its `rule:` a Literal of `name`)."""
    check: Callable[[S, Evidence], Verdict]
    """Its verdict on a finished trial, named `name`."""
    settings: Callable[[S, RuleSettings], None] | None = None
    """Checks its settings against the suite's tools when the suite loads."""
    comply: Callable[[S], Compliance] | None = field(default=None)
    """What an agent does to keep it, given its settings."""


POLICY_RULES: Registry[PolicyRule[Any]] = Registry("policy rule", plugins="policy")
"""Every policy rule by name; installed packages add theirs as `policy.NAME` entry points."""


def policy_rule(
    name: str,
    *,
    spec: type[S],
    settings: Callable[[S, RuleSettings], None] | None = None,
    comply: Callable[[S], Compliance] | None = None,
) -> Callable[[Callable[[S, Evidence], Verdict]], Callable[[S, Evidence], Verdict]]:
    """Register the decorated check as the policy rule `name`, with its settings' model, its
    settings check and its compliance (docs/architecture.md, "Adding a policy rule")."""

    def add(check: Callable[[S, Evidence], Verdict]) -> Callable[[S, Evidence], Verdict]:
        rule = PolicyRule(name, spec, check, settings, comply)
        POLICY_RULES.register(name)(lambda: rule)
        return check

    return add


def rule_model(name: str) -> type[PolicyRuleSpec]:
    """The settings' model of the rule `name`, for reading `policy_rules:`; an unknown name
    says which rules exist (a plug-in's rule that fails to import is a usage error)."""
    if name not in POLICY_RULES:
        raise ValueError(f"unknown policy rule '{name}'; rules: {POLICY_RULES.known()}")
    return POLICY_RULES.get(name).spec


def compliance(rules: Iterable[PolicyRuleSpec]) -> Compliance:
    """What an agent does to keep all of a suite's rules."""
    kept = Compliance()
    for spec in rules:
        rule = POLICY_RULES.get(spec.rule)
        if rule.comply is not None:
            kept = kept | rule.comply(resolved(spec))
    return kept


def resolved(spec: PolicyRuleSpec) -> Any:
    """A rule's settings in its own model (a suite read without the registry keeps them as
    given, `UnresolvedRule`)."""
    model = POLICY_RULES.get(spec.rule).spec
    if isinstance(spec, model):
        return spec
    return model.model_validate(spec.model_dump(exclude_unset=True) | {"rule": spec.rule})


# ---------------------------------------------------------------- the built-in rules
# Each is made on first use: its check's module is imported only by a suite that names it.


@POLICY_RULES.register("confirm_before_write")
def _confirm_before_write() -> PolicyRule[Any]:
    from toolproof.graders.consent import confirm_before_write

    return PolicyRule(
        "confirm_before_write",
        ConfirmBeforeWrite,
        confirm_before_write,
        comply=lambda _: Compliance(confirm_writes=True),
    )


@POLICY_RULES.register("identify_before_access")
def _identify_before_access() -> PolicyRule[Any]:
    from toolproof.graders.policy import identify_before_access, identify_settings, identifying

    return PolicyRule(
        "identify_before_access",
        IdentifyBeforeAccess,
        identify_before_access,
        identify_settings,
        identifying,
    )


@POLICY_RULES.register("no_other_customer_data")
def _no_other_customer_data() -> PolicyRule[Any]:
    from toolproof.graders.policy import identified_settings, identifying
    from toolproof.graders.privacy import no_other_customer_data

    return PolicyRule(
        "no_other_customer_data",
        NoOtherCustomerData,
        no_other_customer_data,
        identified_settings,
        identifying,
    )


@POLICY_RULES.register("read_before_write")
def _read_before_write() -> PolicyRule[Any]:
    from toolproof.graders.policy import read_before_write, read_settings

    return PolicyRule("read_before_write", ReadBeforeWrite, read_before_write, read_settings)


@POLICY_RULES.register("refuse_with_reason")
def _refuse_with_reason() -> PolicyRule[Any]:
    from toolproof.graders.policy import reason_settings
    from toolproof.graders.refusal import refuse_with_reason

    return PolicyRule("refuse_with_reason", RefuseWithReason, refuse_with_reason, reason_settings)
