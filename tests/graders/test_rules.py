"""A policy rule is one registration: this module adds one (`sign_off`) without touching
toolproof, and a real suite names it in `policy_rules:` — its settings read by its model and
checked against the suite, its check failing a trial that breaks it, and the oracle keeping
it so that `validate` finds the suite sound."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

import pytest
from support import MINI_FILES, edit, line_with, write_files

from toolproof import (
    Agent,
    Gateway,
    RunRequest,
    Store,
    TrialContext,
    TrialResult,
    load_suite,
    run_suite,
    validate,
)
from toolproof.agents.registry import AGENTS, AgentChoice, Resolve
from toolproof.errors import SuiteError
from toolproof.graders import Evidence, Verdict
from toolproof.graders.rules import POLICY_RULES, Compliance, RuleSettings, policy_rule
from toolproof.spec.policy import PolicyRuleSpec

SIGNED = "-- the desk"


class SignOff(PolicyRuleSpec):
    """Every message of the agent ends with the desk's sign-off."""

    rule: Literal["sign_off"]
    words: str = SIGNED


def words_to_say(rule: SignOff, at: RuleSettings) -> None:
    if not rule.words.strip():
        at.problem(["words"], "give the words every message ends with")


def signing(rule: SignOff) -> Compliance:
    return Compliance(reply=(lambda message: f"{message} {rule.words}",))


@pytest.fixture
def sign_off() -> Iterator[None]:
    """The rule, registered for one test."""

    @policy_rule("sign_off", spec=SignOff, settings=words_to_say, comply=signing)
    def check(rule: SignOff, evidence: Evidence) -> Verdict:
        for message in evidence.transcript.messages("assistant"):
            if not message.content.rstrip().endswith(rule.words):
                return Verdict(grader=rule.rule, passed=False, reason="a reply is not signed")
        return Verdict(grader=rule.rule, passed=True, reason="every reply is signed")

    yield
    POLICY_RULES.unregister("sign_off")


def signed_suite(root: Path, rules: str = "[confirm_before_write, sign_off]") -> Path:
    text = edit(MINI_FILES["suite.yaml"], "policy_rules: [confirm_before_write]", "")
    files = {**MINI_FILES, "suite.yaml": f"policy_rules: {rules}\n{text.lstrip()}"}
    return write_files(root, files)


class Teller(Agent):
    """Looks order B up and reads its status out, unsigned."""

    def __init__(self, context: TrialContext) -> None:
        self.context = context

    async def reply(self, message: str, tools: Gateway) -> str:
        result = await tools.call("get_order", {"order_id": "B"})
        return f"Order B is {result.content['status']}."


def run(suite_dir: Path, store: Path, request: RunRequest) -> list[TrialResult]:
    results: list[TrialResult] = []
    asyncio.run(
        run_suite(load_suite(suite_dir), request, Store(str(store)), on_result=results.append)
    )
    return sorted(results, key=lambda r: (r.task_id, r.trial))


def test_an_added_rule_is_kept_by_the_oracle_so_validate_finds_the_suite_sound(
    sign_off: None, tmp_path: Path
) -> None:
    result = validate(signed_suite(tmp_path / "s"))
    assert result.ok, result.problems
    assert {check.task.id for check in result.checks} == {"cancel", "status"}


def test_an_added_rule_passes_a_signing_agent_and_fails_one_that_breaks_it(
    sign_off: None, tmp_path: Path
) -> None:
    suite = signed_suite(tmp_path / "s")
    kept = run(suite, tmp_path / "oracle.db", RunRequest(agent="oracle", trials=1))
    assert [(r.task_id, r.outcome) for r in kept] == [("cancel", "passed"), ("status", "passed")]
    assert all(r.transcript.messages("assistant")[-1].content.endswith(SIGNED) for r in kept)

    def teller() -> Resolve:
        return lambda spec: AgentChoice(spec, Teller, f"{spec}@1")

    AGENTS.register("teller")(teller)
    try:
        request = RunRequest(agent="teller", tasks="status", trials=1, k=[1])
        broken = run(suite, tmp_path / "teller.db", request)
    finally:
        AGENTS.unregister("teller")
    assert [(r.outcome, r.reason) for r in broken] == [
        ("failed", "sign_off: a reply is not signed")
    ]
    assert [v.grader for v in broken[0].verdicts if not v.passed] == ["sign_off"]


def test_an_added_rule_settings_are_read_by_its_model_and_checked_at_their_line(
    sign_off: None, tmp_path: Path
) -> None:
    suite = signed_suite(tmp_path / "s", '\n  - rule: sign_off\n    words: "  "\n')
    text = (suite / "suite.yaml").read_text(encoding="utf-8")
    with pytest.raises(SuiteError) as raised:
        load_suite(suite)
    assert f"suite.yaml:{line_with(text, 'words:')}: sign_off: give the words" in str(raised.value)

    misspelt = signed_suite(tmp_path / "u", "[confirm_before_write, sign_of]")
    with pytest.raises(SuiteError) as raised:
        load_suite(misspelt)
    message = str(raised.value)
    assert "suite.yaml:1: policy_rules.1: " in message
    assert "unknown policy rule 'sign_of'; rules: confirm_before_write," in message
    assert message.endswith(", refuse_with_reason, sign_off")

    wrong = signed_suite(tmp_path / "t", "\n  - {rule: sign_off, word: bye}\n")
    with pytest.raises(SuiteError, match=r"suite.yaml:2: .*word"):
        load_suite(wrong)


def test_a_rule_no_one_registered_is_unknown_again_after_its_test(tmp_path: Path) -> None:
    assert "sign_off" not in POLICY_RULES
    with pytest.raises(SuiteError, match="unknown policy rule 'sign_off'"):
        load_suite(signed_suite(tmp_path / "s"))
