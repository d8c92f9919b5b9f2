"""The OpenAI-compatible adapter end to end against a real llama.cpp server.

The server runs the embedded model (SmolLM2-135M-Instruct) with llama-cpp-python's
`chatml-function-calling` chat format, which calls tools only when tool_choice "auto" is sent.
The model is tiny: the tests check the structure of what comes back, never its wisdom.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from toolproof.agents.base import Agent, TrialContext
from toolproof.agents.loop import LoopAgent
from toolproof.models.base import Message, ModelSettings, ToolCall
from toolproof.models.openai import OpenAIChatClient
from toolproof.runner.gold import replay_gold
from toolproof.runner.plan import PlannedTrial
from toolproof.runner.trial import Trial, run_trial
from toolproof.suite import load_suite
from toolproof.tools.base import ToolSchema

# Slow: a llama.cpp server process on the embedded model.
pytestmark = pytest.mark.slow

RETAIL = Path(__file__).parents[2] / "examples" / "retail"
WEATHER = ToolSchema(
    name="get_weather",
    description="Get the current weather for a city.",
    parameters={
        "type": "object",
        "properties": {"city": {"type": "string", "description": "The city."}},
        "required": ["city"],
    },
)
SYSTEM = Message(role="system", content="You are a weather service.")
ASK = Message(role="user", content="Weather in Paris, please.")


def client(server: str, **settings: object) -> OpenAIChatClient:
    return OpenAIChatClient(
        "smollm2",
        settings=ModelSettings.model_validate({"temperature": 0, "seed": 7, **settings}),
        base_url=f"{server}/v1",
        api_key="none",
        provider="openai-compatible",
        # A cold 3,500-token prompt on two busy cores can take minutes.
        timeout_s=600.0,
    )


def test_a_plain_answer_with_usage(llama_server: str) -> None:
    model = client(llama_server, max_tokens=16)
    assert model.name == "openai-compatible/smollm2"
    response = asyncio.run(model.generate([Message(role="user", content="Say hello.")], []))
    assert response.message.content and not response.message.tool_calls
    assert response.usage.input_tokens > 0 and 0 < response.usage.output_tokens <= 16
    assert response.stop_reason in ("stop", "length")
    assert response.latency_s > 0


def test_a_tool_call_with_the_default_tool_choice(llama_server: str) -> None:
    # The adapter sends tool_choice "auto" when none is set; without it this server
    # never calls a tool.
    model = client(llama_server, max_tokens=48)
    response = asyncio.run(model.generate([SYSTEM, ASK], [WEATHER]))
    [call] = response.message.tool_calls
    assert call.name == "get_weather" and call.id
    assert isinstance(call.arguments, dict) and isinstance(call.arguments.get("city"), str)
    assert json.loads(call.raw_arguments) == call.arguments
    assert response.stop_reason == "tool_calls"


def test_an_assistant_call_and_its_result_go_back_to_the_server(llama_server: str) -> None:
    # The assistant turn has no text: it must travel as "" (llama.cpp answers 500 to null).
    call = ToolCall(id="call_1", name="get_weather", arguments={"city": "Paris"})
    history = [
        SYSTEM,
        ASK,
        Message(role="assistant", content="", tool_calls=[call]),
        Message(role="tool", content='{"sky": "clear"}', tool_call_id="call_1", name=call.name),
    ]
    for choice in ("auto", "none"):
        model = client(llama_server, max_tokens=16, tool_choice=choice)
        response = asyncio.run(model.generate(history, [WEATHER]))
        assert response.message.role == "assistant"
        assert response.usage.input_tokens > 0
        for made in response.message.tool_calls:
            assert made.name == "get_weather" and made.id
        if choice == "none":
            assert not response.message.tool_calls and response.stop_reason in ("stop", "length")


def test_a_retail_trial_through_the_agent_loop(llama_server: str) -> None:
    suite = load_suite(RETAIL)
    task = suite.tasks[0]
    expected = asyncio.run(replay_gold(suite, task)).hash
    model = client(llama_server, max_tokens=64, tool_choice="auto")

    def make_agent(context: TrialContext) -> Agent:
        return LoopAgent(model, context)

    spec = PlannedTrial(task.id, 0, 1, model=model.name)
    result = asyncio.run(run_trial(Trial(spec, suite, make_agent, "", expected, max_steps=2)))
    assert result.outcome in ("passed", "failed"), result.reason
    events = result.transcript.events
    assert events[0].type == "message" and events[0].role == "user"  # type: ignore[union-attr]
    assert events[-1].type == "end"
    turns = result.transcript.model_calls()
    assert 1 <= len(turns) <= 2
    assert all(t.model == "openai-compatible/smollm2" and t.usage.input_tokens > 0 for t in turns)
    made = [c.id for t in turns for c in t.tool_calls]
    assert [c.call_id for c in result.transcript.tool_calls()] == made
    assert result.usage.input_tokens == sum(t.usage.input_tokens for t in turns)
