"""The built-in agent loop over a scripted model: tool calls, malformed calls, limits."""

from __future__ import annotations

import asyncio
from pathlib import Path

from support import write_files

from toolproof.agents.base import Agent, TrialContext
from toolproof.agents.loop import LoopAgent
from toolproof.agents.registry import resolve_agent
from toolproof.errors import InfraError
from toolproof.models.base import ContextOverflow, Message, ModelClient, ModelResponse
from toolproof.runner.gold import replay_gold
from toolproof.runner.plan import PlannedTrial
from toolproof.runner.trial import Trial, run_trial
from toolproof.suite import Suite
from toolproof.tools.base import ToolSchema

SCRIPT = """
tasks:
  status:
    - tool_calls:
        - {name: get_order, arguments: {order_id: B}}
        - {name: get_order, raw_arguments: "{not json"}
        - {name: ship_it, arguments: {}}
        - {name: get_order, arguments: {order_id: 5}}
        - {name: get_order, raw_arguments: "[1, 2]"}
    - text: "Order B has shipped."
      usage: {input_tokens: 50, output_tokens: 7}
  cancel:
    - tool_calls: [{name: get_order, arguments: {order_id: A}}]
    - tool_calls: [{name: get_order, arguments: {order_id: A}}]
    - tool_calls: [{name: get_order, arguments: {order_id: A}}]
    - tool_calls: [{name: get_order, arguments: {order_id: A}}]
"""


def trial(suite: Suite, task_id: str, script: Path, max_steps: int = 30):  # type: ignore[no-untyped-def]
    agent = resolve_agent(f"scripted:{script}")
    expected = asyncio.run(replay_gold(suite, suite.task(task_id))).hash
    spec = PlannedTrial(task_id, 0, 1)
    return asyncio.run(
        run_trial(Trial(spec, suite, agent.factory, agent.label, expected, max_steps))
    )


def test_malformed_and_unknown_calls_go_back_as_errors_and_the_trial_goes_on(
    mini: Suite, tmp_path: Path
) -> None:
    script = write_files(tmp_path, {"script.yaml": SCRIPT}) / "script.yaml"
    result = trial(mini, "status", script)
    calls = result.transcript.tool_calls()
    assert [c.error_kind for c in calls] == [
        None,
        "malformed_call",
        "unknown_tool",
        "invalid_arguments",
        "malformed_call",
    ]
    assert calls[0].result == {"status": "shipped"}
    assert calls[1].raw_arguments == "{not json" and calls[1].arguments is None
    assert "no tool named 'ship_it'" in calls[2].result["error"]
    assert "order_id" in calls[3].result["error"]
    assert result.outcome == "passed", result.reason
    assert result.tool_calls == 5 and result.turns == 1
    assert result.usage.input_tokens == 50 and result.usage.output_tokens == 7


def test_parallel_calls_of_one_turn_are_all_recorded_with_their_ids(
    mini: Suite, tmp_path: Path
) -> None:
    script = write_files(tmp_path, {"script.yaml": SCRIPT}) / "script.yaml"
    result = trial(mini, "status", script)
    model_turn = result.transcript.model_calls()[0]
    assert [c.id for c in model_turn.tool_calls] == [
        c.call_id for c in result.transcript.tool_calls()
    ]


def test_max_steps_cuts_a_looping_agent_and_fails_the_trial(mini: Suite, tmp_path: Path) -> None:
    script = write_files(tmp_path, {"script.yaml": SCRIPT}) / "script.yaml"
    result = trial(mini, "cancel", script, max_steps=3)
    assert result.outcome == "failed"
    assert result.ended == "max_steps"
    assert result.reason.startswith("max_steps")
    assert len(result.transcript.model_calls()) == 3


class _Down(ModelClient):
    name = "down"

    async def generate(
        self, messages: list[Message], tools: list[ToolSchema], *, seed: int | None = None
    ) -> ModelResponse:
        raise InfraError("provider returned 503 after 5 retries")


def test_a_provider_failure_is_an_infra_error_not_a_failure(mini: Suite) -> None:
    def factory(context: TrialContext) -> Agent:
        return LoopAgent(_Down(), context)

    result = asyncio.run(
        run_trial(Trial(PlannedTrial("status", 0, 1), mini, factory, "down", max_steps=5))
    )
    assert result.outcome == "infra_error"
    assert "503" in result.reason
    assert result.verdicts == []


def test_the_policy_is_the_system_prompt_and_tools_are_offered(mini: Suite) -> None:
    seen: list[tuple[list[Message], list[ToolSchema]]] = []

    class Recorder(ModelClient):
        name = "recorder"

        async def generate(
            self, messages: list[Message], tools: list[ToolSchema], *, seed: int | None = None
        ) -> ModelResponse:
            seen.append((list(messages), tools))
            return ModelResponse(message=Message(role="assistant", content="ok"))

    def factory(context: TrialContext) -> Agent:
        return LoopAgent(Recorder(), context)

    asyncio.run(run_trial(Trial(PlannedTrial("status", 0, 1), mini, factory, "rec", max_steps=5)))
    messages, tools = seen[0]
    assert messages[0].role == "system" and "support agent" in messages[0].content
    assert messages[1].content == "Where is order B?"
    assert {t.name for t in tools} == {"get_order", "cancel_order"}
    assert tools[0].parameters["required"] == ["order_id"]


class _Overflowing(ModelClient):
    name = "small-window"

    async def generate(
        self, messages: list[Message], tools: list[ToolSchema], *, seed: int | None = None
    ) -> ModelResponse:
        raise ContextOverflow("prompt is 9000 tokens, the window is 8192")


def test_a_context_overflow_is_the_agents_failure_with_its_own_reason(mini: Suite) -> None:
    def factory(context: TrialContext) -> Agent:
        return LoopAgent(_Overflowing(), context)

    result = asyncio.run(
        run_trial(Trial(PlannedTrial("status", 0, 1), mini, factory, "small", max_steps=5))
    )
    assert result.outcome == "failed"
    assert result.ended == "context_overflow"
    assert "8192" in result.reason
