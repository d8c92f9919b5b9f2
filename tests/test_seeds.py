"""The trial's seed reaches every source of randomness, each through its own stream."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import Any

import pytest
from support import MINI_FILES, write_files

from toolproof.agents.base import Agent, TrialContext
from toolproof.agents.loop import LoopAgent
from toolproof.models.base import Message, ModelClient, ModelResponse, ToolCall
from toolproof.models.openai import OpenAIChatClient
from toolproof.runner.plan import PlannedTrial
from toolproof.runner.trial import Trial, run_trial
from toolproof.seeds import STREAMS, stream_rng, stream_seed
from toolproof.spec.model_settings import ModelSettings
from toolproof.spec.task import Task
from toolproof.suite import Suite, load_suite
from toolproof.tools.base import ToolSchema
from toolproof.transcript import Transcript
from toolproof.users.llm import LLMUser

SEEDED_TOOL = '''

@tool
def lucky_number(context: ToolContext) -> int:
    """A number drawn from the tool's seed."""
    return context.seed
'''


def test_streams_are_deterministic_distinct_and_31_bit() -> None:
    seeds = {(s, i): stream_seed(12345, s, i) for s in STREAMS for i in range(3)}
    assert seeds == {(s, i): stream_seed(12345, s, i) for s in STREAMS for i in range(3)}
    assert len(set(seeds.values())) == len(seeds)
    assert all(0 <= v < 2**31 for v in seeds.values())
    assert stream_seed(12346, "model") != stream_seed(12345, "model")
    with pytest.raises(ValueError, match="unknown seed stream"):
        stream_seed(1, "weather")


def test_the_fault_stream_is_the_injector_s_own() -> None:
    """Faults draw from `faults:{seed}` as they always have, so stored runs stay comparable."""
    assert stream_rng(77, "faults").random() == random.Random("faults:77").random()


class Recorder(ModelClient):
    """A model that calls a tool once, then answers, noting the seed of every turn."""

    name = "recorder"

    def __init__(self, tool: str = "get_order", args: dict[str, Any] | None = None) -> None:
        self.tool = tool
        self.args = {"order_id": "B"} if args is None else args
        self.seeds: list[int | None] = []

    async def generate(
        self, messages: list[Message], tools: list[ToolSchema], *, seed: int | None = None
    ) -> ModelResponse:
        self.seeds.append(seed)
        if len(self.seeds) == 1:
            call = ToolCall(id="c1", name=self.tool, arguments=self.args)
            return ModelResponse(message=Message(role="assistant", tool_calls=[call]))
        return ModelResponse(message=Message(role="assistant", content="Order B has shipped."))


def run_with(suite: Suite, model: Recorder, seed: int) -> Any:
    def factory(context: TrialContext) -> Agent:
        return LoopAgent(model, context)

    spec = PlannedTrial("status", 0, seed)
    return asyncio.run(run_trial(Trial(spec, suite, factory, "rec", max_steps=5)))


def test_each_model_turn_samples_with_a_seed_of_the_model_stream(mini: Suite) -> None:
    model = Recorder()
    run_with(mini, model, seed=4242)
    assert model.seeds == [stream_seed(4242, "model", 1), stream_seed(4242, "model", 2)]
    again = Recorder()
    run_with(mini, again, seed=4242)
    assert again.seeds == model.seeds
    other = Recorder()
    run_with(mini, other, seed=4243)
    assert not set(other.seeds) & set(model.seeds)


def test_tools_get_the_tools_stream_not_the_trial_seed(tmp_path: Path) -> None:
    files = {**MINI_FILES, "tools.py": MINI_FILES["tools.py"] + SEEDED_TOOL}
    files["tools.py"] = files["tools.py"].replace(
        "from toolproof.tools import ToolError, tool",
        "from toolproof.tools import ToolContext, ToolError, tool",
    )
    files["suite.yaml"] = files["suite.yaml"].replace(
        "  cancel_order: {tier: 3, weight: 0.3}",
        "  cancel_order: {tier: 3, weight: 0.3}\n  lucky_number: {tier: 2}",
    )
    suite = load_suite(write_files(tmp_path, files))
    result = run_with(suite, Recorder("lucky_number", {}), seed=99)
    (call,) = result.transcript.tool_calls()
    assert call.result == stream_seed(99, "tools")
    assert result.seed == 99


def test_the_openai_request_carries_the_seed_unless_the_settings_fix_one() -> None:
    client = OpenAIChatClient("gpt-4o", settings=ModelSettings(), api_key="k")
    hello = [Message(role="user", content="hi")]
    assert client.request(hello, [], 123)["seed"] == 123
    assert "seed" not in client.request(hello, [])
    fixed = OpenAIChatClient("gpt-4o", settings=ModelSettings(seed=7), api_key="k")
    assert fixed.request(hello, [], 123)["seed"] == 7


def test_the_simulated_user_samples_from_the_user_stream(mini: Suite) -> None:
    class Quiet(ModelClient):
        name = "user-model"

        def __init__(self) -> None:
            self.seeds: list[int | None] = []

        async def generate(
            self, messages: list[Message], tools: list[ToolSchema], *, seed: int | None = None
        ) -> ModelResponse:
            self.seeds.append(seed)
            return ModelResponse(message=Message(role="assistant", content="Thanks."))

    task: Task = mini.task("status")
    user_model = Quiet()
    user = LLMUser(user_model, task.spec.user, task.spec.story, Transcript(), seed=5)
    asyncio.run(user.respond("Order B has shipped."))
    asyncio.run(user.respond("Anything else?"))
    assert user_model.seeds == [stream_seed(5, "user", 1), stream_seed(5, "user", 2)]
