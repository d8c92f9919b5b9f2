"""A provider, an agent or a grader is one implementation plus one registration: each test
here defines one, registers it, and runs a real suite through the public API with it,
touching no other module."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

import pytest

from toolproof import (
    Agent,
    Gateway,
    Message,
    ModelClient,
    ModelResponse,
    RunRequest,
    Store,
    ToolCall,
    TrialContext,
    TrialResult,
    load_suite,
    run_suite,
)
from toolproof.agents.registry import AGENTS, AgentChoice, Resolve
from toolproof.errors import UsageError
from toolproof.graders import GRADERS, Evidence, Verdict
from toolproof.graders.base import Grader
from toolproof.models.base import ModelSettings
from toolproof.models.registry import PROVIDERS, ModelChoice, Provider
from toolproof.registry import Registry
from toolproof.spec.expectations import Expectations
from toolproof.spec.policy import PolicyRuleSpec
from toolproof.tools.base import ToolSchema

T = TypeVar("T")


@contextmanager
def registered(registry: Registry[T], name: str, load: Callable[[], T]) -> Iterator[None]:
    """A plug-in registered for the length of one test."""
    registry.register(name)(load)
    try:
        yield
    finally:
        registry.unregister(name)


def run(suite_dir: Path, store: Path, request: RunRequest) -> list[TrialResult]:
    results: list[TrialResult] = []
    asyncio.run(
        run_suite(load_suite(suite_dir), request, Store(str(store)), on_result=results.append)
    )
    return sorted(results, key=lambda r: r.trial)


class OrderDesk(ModelClient):
    """A model that looks order B up, then says what the lookup returned."""

    def __init__(self, name: str, key: str | None) -> None:
        self.name = name
        self.key = key

    async def generate(
        self, messages: list[Message], tools: list[ToolSchema], *, seed: int | None = None
    ) -> ModelResponse:
        last = messages[-1]
        if last.role == "tool":
            return ModelResponse(message=Message(role="assistant", content=last.content))
        call = ToolCall(id="c1", name="get_order", arguments={"order_id": "B"})
        return ModelResponse(message=Message(role="assistant", tool_calls=[call]))


def desk_provider(made: list[OrderDesk]) -> Callable[[], Provider]:
    def load() -> Provider:
        def connect(choice: ModelChoice, settings: ModelSettings, key: str | None) -> ModelClient:
            made.append(OrderDesk(choice.name, key))
            return made[-1]

        return Provider(connect, key_variable="DESK_API_KEY")

    return load


def test_a_registered_provider_runs_as_a_model_with_its_key(
    mini_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[OrderDesk] = []
    request = RunRequest(models=["desk/b-finder"], tasks="status", trials=2, k=[1, 2])
    with registered(PROVIDERS, "desk", desk_provider(made)):
        monkeypatch.delenv("DESK_API_KEY", raising=False)
        with pytest.raises(UsageError, match="model desk/b-finder: no API key; set DESK_API_KEY"):
            run(mini_dir, tmp_path / "refused.db", request)
        monkeypatch.setenv("DESK_API_KEY", "desk-key")
        results = run(mini_dir, tmp_path / "runs.db", request)
    assert [(r.model, r.outcome) for r in results] == [("desk/b-finder", "passed")] * 2
    assert [(m.name, m.key) for m in made] == [("desk/b-finder", "desk-key")]
    assert "shipped" in results[0].transcript.messages("assistant")[-1].content
    assert "desk" not in PROVIDERS


class Clerk(Agent):
    """Looks order B up whatever is asked, and reads the status out."""

    def __init__(self, context: TrialContext) -> None:
        self.context = context

    async def reply(self, message: str, tools: Gateway) -> str:
        result = await tools.call("get_order", {"order_id": "B"})
        return f"Order B is {result.content['status']}."


def test_a_registered_agent_runs_by_its_name(mini_dir: Path, tmp_path: Path) -> None:
    def clerk() -> Resolve:
        return lambda spec: AgentChoice(spec, Clerk, f"{spec}@1")

    with registered(AGENTS, "clerk", clerk):
        results = run(mini_dir, tmp_path / "runs.db", RunRequest(agent="clerk", trials=2, k=[1]))
        with pytest.raises(UsageError, match=r"unknown agent; use one of .*\bclerk\b"):
            run(mini_dir, tmp_path / "runs.db", RunRequest(agent="clerks"))
    outcomes = {(r.task_id, r.agent, r.outcome) for r in results}
    # status is answered; cancel is not (the clerk never cancels anything)
    assert outcomes == {("status", "clerk", "passed"), ("cancel", "clerk", "failed")}
    assert "clerk" not in AGENTS


def signed() -> Grader:
    def grade(
        expect: Expectations, rules: list[PolicyRuleSpec], evidence: Evidence
    ) -> list[Verdict]:
        last = evidence.transcript.messages("assistant")[-1].content
        if last.endswith("-- the desk"):
            return [Verdict(grader="signed", passed=True, reason="signed")]
        return [Verdict(grader="signed", passed=False, reason="the last reply is not signed")]

    return grade


def test_a_registered_grader_judges_every_trial(mini_dir: Path, tmp_path: Path) -> None:
    with registered(GRADERS, "signed", signed):
        results = run(mini_dir, tmp_path / "runs.db", RunRequest(agent="oracle", trials=1))
    assert {(r.outcome, r.reason) for r in results} == {
        ("failed", "signed: the last reply is not signed")
    }
    for result in results:
        assert [v.grader for v in result.verdicts if not v.passed] == ["signed"]
        assert result.verdicts[-1].grader == "signed"  # after the built-in graders
    assert "signed" not in GRADERS
    again = run(mini_dir, tmp_path / "again.db", RunRequest(agent="oracle", trials=1))
    assert {r.outcome for r in again} == {"passed"}
