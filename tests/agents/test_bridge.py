"""The model bridge: a Python agent's own openai/anthropic SDK calls become the trial's model
calls, answered by the run's model (a script file, a real local OpenAI-compatible server) or
sent where the agent sends them and recorded."""

from __future__ import annotations

import asyncio
import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
from servers import completion, model_server
from support import MINI_FILES, write_files

from toolproof.errors import UsageError
from toolproof.records.trial import TrialResult
from toolproof.runner.run import RunRequest, run_suite
from toolproof.seeds import stream_seed
from toolproof.spec.overrides import ModelOverrides
from toolproof.store.journal import Store
from toolproof.suite import load_suite
from toolproof.transcript import ModelCallEvent

NOWHERE = "http://127.0.0.1:9/v1"
"""Where the agents send their calls: nothing listens, so a routed call never went there."""

AGENTS = f'''
import json

import anthropic
import openai

from toolproof.agents.external import Conversation, ToolHandle

NOWHERE = "{NOWHERE}"


def opening(conversation):
    return [{{"role": m["role"], "content": str(m["content"])}}
            for m in conversation.messages if m["role"] in ("user", "assistant")
            and not m.get("tool_calls")]


async def chat(conversation: Conversation, tools: ToolHandle) -> str:
    """The plain tool loop over Chat Completions (async client)."""
    client = openai.AsyncOpenAI(api_key="sk-none", base_url=NOWHERE, max_retries=0)
    messages = [{{"role": "system", "content": conversation.policy}}, *opening(conversation)]
    while True:
        answer = await client.chat.completions.create(
            model="gpt-4o", messages=messages, tools=tools.openai_tools
        )
        message = answer.choices[0].message
        messages.append(message)
        if not message.tool_calls:
            return message.content or ""
        for call in message.tool_calls:
            result = await tools.call(call.function.name, call.function.arguments)
            messages.append(
                {{"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)}}
            )


async def chat_sync(conversation: Conversation, tools: ToolHandle) -> str:
    """The same loop with the sync client (blocking the loop, as such agents do)."""
    client = openai.OpenAI(api_key="sk-none", base_url=NOWHERE, max_retries=0)
    messages = [{{"role": "system", "content": conversation.policy}}, *opening(conversation)]
    while True:
        message = client.chat.completions.create(
            model="gpt-4o", messages=messages, tools=tools.openai_tools
        ).choices[0].message
        messages.append(message)
        if not message.tool_calls:
            return message.content or ""
        for call in message.tool_calls:
            result = await tools.call(call.function.name, call.function.arguments)
            messages.append(
                {{"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)}}
            )


async def responses(conversation: Conversation, tools: ToolHandle) -> str:
    """The Responses API, chained by previous_response_id."""
    client = openai.AsyncOpenAI(api_key="sk-none", base_url=NOWHERE, max_retries=0)
    answer = await client.responses.create(
        model="gpt-4o", instructions=conversation.policy, input=conversation.latest,
        tools=tools.responses_tools,
    )
    while True:
        calls = [item for item in answer.output if item.type == "function_call"]
        if not calls:
            return answer.output_text
        outputs = []
        for call in calls:
            result = await tools.call(call.name, call.arguments)
            outputs.append({{"type": "function_call_output", "call_id": call.call_id,
                            "output": json.dumps(result)}})
        answer = await client.responses.create(
            model="gpt-4o", previous_response_id=answer.id, input=outputs,
            tools=tools.responses_tools,
        )


async def claude(conversation: Conversation, tools: ToolHandle) -> str:
    """The Anthropic tool loop (async client), tool results as tool_result blocks."""
    client = anthropic.AsyncAnthropic(api_key="none", base_url=NOWHERE, max_retries=0)
    messages = opening(conversation)
    while True:
        answer = await client.messages.create(
            model="claude-sonnet-4-5", max_tokens=512, system=conversation.policy,
            messages=messages, tools=tools.anthropic_tools,
        )
        messages.append({{"role": "assistant", "content": answer.content}})
        uses = [block for block in answer.content if block.type == "tool_use"]
        if not uses:
            return "".join(block.text for block in answer.content if block.type == "text")
        results = []
        for use in uses:
            result = await tools.call(use.name, use.input)
            results.append({{"type": "tool_result", "tool_use_id": use.id,
                            "content": json.dumps(result)}})
        messages.append({{"role": "user", "content": results}})


async def claude_sync(conversation: Conversation, tools: ToolHandle) -> str:
    client = anthropic.Anthropic(api_key="none", base_url=NOWHERE, max_retries=0)
    answer = client.messages.create(
        model="claude-sonnet-4-5", max_tokens=512, messages=opening(conversation),
        tools=tools.anthropic_tools,
    )
    return "".join(block.text for block in answer.content if block.type == "text")


async def stubborn(conversation: Conversation, tools: ToolHandle) -> str:
    """Swallows every error and asks again: max_steps still ends its trial."""
    client = openai.AsyncOpenAI(api_key="sk-none", base_url=NOWHERE, max_retries=0)
    for _ in range(100):
        try:
            await client.chat.completions.create(
                model="gpt-4o", messages=opening(conversation)
            )
        except Exception:
            pass
    return "gave up"


async def streaming(conversation: Conversation, tools: ToolHandle) -> str:
    client = openai.AsyncOpenAI(api_key="sk-none", base_url=NOWHERE, max_retries=0)
    await client.chat.completions.create(
        model="gpt-4o", messages=opening(conversation), stream=True
    )
    return "streamed"
'''

STATUS_TURNS = """
    - tool_calls: [{name: get_order, arguments: {order_id: B}}]
      usage: {input_tokens: 100, output_tokens: 12}
    - text: "Order B is shipped."
      usage: {input_tokens: 140, output_tokens: 8}
"""
CANCEL_TURNS = """
    - text: "Order A is pending. Shall I cancel it?"
      usage: {input_tokens: 90, output_tokens: 10}
    - tool_calls: [{name: get_order, arguments: {order_id: A}}]
      usage: {input_tokens: 110, output_tokens: 11}
    - tool_calls: [{name: cancel_order, arguments: {order_id: A}}]
      usage: {input_tokens: 130, output_tokens: 12}
    - text: "Order A is cancelled."
      usage: {input_tokens: 150, output_tokens: 6}
"""
SCRIPT = f"latency_s: 0.01\ntasks:\n  status:{STATUS_TURNS}  cancel:{CANCEL_TURNS}"


@pytest.fixture
def mini(tmp_path: Path) -> Path:
    root = write_files(tmp_path / "mini", MINI_FILES)
    (tmp_path / "bridged_agents.py").write_text(textwrap.dedent(AGENTS), encoding="utf-8")
    (tmp_path / "script.yaml").write_text(SCRIPT, encoding="utf-8")
    return root


def run(
    suite_dir: Path, function: str, tasks: str, tmp_path: Path, **kwargs: Any
) -> list[TrialResult]:
    """`toolproof run` of one agent function of the file above; the stored results."""
    store = Store(str(tmp_path / "runs.db"))
    kwargs.setdefault("trials", 1)
    request = RunRequest(
        agent=f"python:{tmp_path / 'bridged_agents.py'}:{function}",
        k=[1],
        tasks=tasks,
        **kwargs,
    )
    report = asyncio.run(run_suite(load_suite(suite_dir), request, store, fresh=True))
    return [result for _, result in store.results(report.run_id)]


def model_calls(result: TrialResult) -> list[ModelCallEvent]:
    return [e for e in result.transcript.events if isinstance(e, ModelCallEvent)]


def scripted(tmp_path: Path) -> list[str]:
    return [f"scripted/{tmp_path / 'script.yaml'}"]


@pytest.mark.parametrize("function", ["chat", "chat_sync", "responses", "claude"])
def test_an_sdk_agent_runs_on_the_runs_scripted_model_and_its_calls_are_the_trials(
    mini: Path, tmp_path: Path, function: str
) -> None:
    [result] = run(mini, function, "status", tmp_path, models=scripted(tmp_path))
    assert (result.outcome, result.reason) == ("passed", "")
    calls = model_calls(result)
    assert [c.model for c in calls] == scripted(tmp_path) * 2
    assert [(c.usage.input_tokens, c.usage.output_tokens) for c in calls] == [(100, 12), (140, 8)]
    assert [[t.name for t in c.tool_calls] for c in calls] == [["get_order"], []]
    assert calls[0].tool_calls[0].arguments == {"order_id": "B"}
    assert calls[1].content == "Order B is shipped."
    assert all(c.cost_usd == 0.0 for c in calls)
    assert [(c.name, c.arguments) for c in result.transcript.tool_calls()] == [
        ("get_order", {"order_id": "B"})
    ]


def test_an_anthropic_agent_keeps_a_multi_turn_conversation_through_the_bridge(
    mini: Path, tmp_path: Path
) -> None:
    [result] = run(mini, "claude", "cancel", tmp_path, models=scripted(tmp_path))
    assert (result.outcome, result.reason) == ("passed", "")
    assert [c.name for c in result.transcript.tool_calls()] == ["get_order", "cancel_order"]
    assert sum(c.usage.output_tokens for c in model_calls(result)) == 39


def test_a_sync_anthropic_client_is_answered_by_the_runs_model(mini: Path, tmp_path: Path) -> None:
    (tmp_path / "script.yaml").write_text("default:\n  - text: Order B is shipped.\n")
    [result] = run(mini, "claude_sync", "status", tmp_path, models=scripted(tmp_path))
    assert [c.content for c in model_calls(result)] == ["Order B is shipped."]
    assert result.transcript.messages("assistant")[0].content == "Order B is shipped."


@pytest.mark.parametrize("function", ["chat", "chat_sync"])
def test_the_runs_openai_compatible_model_gets_the_agents_conversation_and_the_trial_seed(
    mini: Path, tmp_path: Path, function: str
) -> None:
    answers = iter(
        [
            completion(tool_calls=[{"name": "get_order", "arguments": {"order_id": "B"}}]),
            completion("Order B is shipped.", prompt_tokens=300, completion_tokens=7),
        ]
    )
    with model_server(lambda body: (200, next(answers))) as (url, seen):
        [result] = run(
            mini,
            function,
            "status",
            tmp_path,
            models=["openai-compatible/served"],
            model_flags=ModelOverrides(base_url=url),
        )
    assert (result.outcome, result.reason) == ("passed", "")
    first, second = seen.bodies
    assert first["model"] == "served"
    assert [m["role"] for m in first["messages"]] == ["system", "user"]
    assert [t["function"]["name"] for t in first["tools"]] == ["get_order", "cancel_order"]
    assert [m["role"] for m in second["messages"]] == ["system", "user", "assistant", "tool"]
    assert json.loads(second["messages"][3]["content"]) == {"status": "shipped"}
    assert [b["seed"] for b in seen.bodies] == [
        stream_seed(result.seed, "model", 1),
        stream_seed(result.seed, "model", 2),
    ]
    calls = model_calls(result)
    assert [c.model for c in calls] == ["openai-compatible/served"] * 2
    assert [c.usage.input_tokens for c in calls] == [100, 300]


def test_without_a_model_the_agents_calls_go_where_it_sends_them_and_are_recorded(
    mini: Path, tmp_path: Path
) -> None:
    answers = iter(
        [
            completion(tool_calls=[{"name": "get_order", "arguments": {"order_id": "B"}}]),
            completion("Order B is shipped.", prompt_tokens=250, completion_tokens=9),
        ]
    )
    with model_server(lambda body: (200, next(answers))) as (url, seen):
        agents = tmp_path / "bridged_agents.py"
        agents.write_text(agents.read_text().replace(NOWHERE, url))
        [result] = run(mini, "chat", "status", tmp_path)
    assert (result.outcome, result.reason) == ("passed", "")
    assert [b["model"] for b in seen.bodies] == ["gpt-4o", "gpt-4o"]
    assert "seed" not in seen.bodies[0]
    calls = model_calls(result)
    assert [c.model for c in calls] == ["openai-compatible/gpt-4o"] * 2
    assert [(c.usage.input_tokens, c.usage.output_tokens) for c in calls] == [(100, 10), (250, 9)]
    assert all(c.latency_s > 0 for c in calls)
    assert calls[0].tool_calls[0].arguments == {"order_id": "B"}


@pytest.mark.parametrize(
    ("status", "outcome"),
    [(None, "infra_error"), (500, "infra_error"), (429, "infra_error"), (400, "failed")],
    ids=["nothing-listens", "server-error", "rate-limited", "bad-request"],
)
def test_without_a_model_a_provider_that_fails_is_an_infra_error_not_the_agents(
    mini: Path, tmp_path: Path, status: int | None, outcome: str
) -> None:
    if status is None:
        [result] = run(mini, "chat", "status", tmp_path)
    else:
        with model_server(lambda body: (status, {"error": {"message": "no"}})) as (url, _):
            agents = tmp_path / "bridged_agents.py"
            agents.write_text(agents.read_text().replace(NOWHERE, url))
            [result] = run(mini, "chat", "status", tmp_path)
    assert result.outcome == outcome
    if outcome == "infra_error":
        assert "openai-compatible/gpt-4o" in result.reason
        assert "after the SDK's retries" in result.reason
    else:
        assert result.reason.startswith("agent_error")


def test_an_agent_that_swallows_errors_is_still_cut_at_max_steps(
    mini: Path, tmp_path: Path
) -> None:
    [result] = run(mini, "stubborn", "status", tmp_path, models=scripted(tmp_path), max_steps=3)
    assert (result.outcome, result.ended) == ("failed", "max_steps")
    assert len(model_calls(result)) == 3


def test_a_streamed_call_to_the_runs_model_fails_the_trial_with_a_reason(
    mini: Path, tmp_path: Path
) -> None:
    [result] = run(mini, "streaming", "status", tmp_path, models=scripted(tmp_path))
    assert (result.outcome, result.ended) == ("failed", "agent_error")
    assert "without stream=True" in result.reason


@pytest.mark.slow
def test_fifty_trials_at_once_keep_their_model_calls_apart(mini: Path, tmp_path: Path) -> None:
    """100 trials of two tasks with different turns, 50 at a time, every scripted call
    sleeping so they interleave: each trial sees exactly its own task's turns."""
    results = run(
        mini,
        "chat",
        "status,cancel",
        tmp_path,
        models=scripted(tmp_path),
        trials=50,
        concurrency=50,
    )
    assert len(results) == 100
    expected = {
        "status": [(100, 12), (140, 8)],
        "cancel": [(90, 10), (110, 11), (130, 12), (150, 6)],
    }
    for result in results:
        tokens = [(c.usage.input_tokens, c.usage.output_tokens) for c in model_calls(result)]
        assert tokens == expected[result.task_id], (result.task_id, result.trial)
        assert result.outcome == "passed", result.reason


def test_the_built_in_loop_plays_a_scripted_model_per_task(mini: Path, tmp_path: Path) -> None:
    store = Store(str(tmp_path / "runs.db"))
    request = RunRequest(models=scripted(tmp_path), trials=2, k=[1], tasks="status,cancel")
    report = asyncio.run(run_suite(load_suite(mini), request, store, fresh=True))
    results = [r for _, r in store.results(report.run_id)]
    assert sorted((r.task_id, r.outcome) for r in results) == [
        ("cancel", "passed"),
        ("cancel", "passed"),
        ("status", "passed"),
        ("status", "passed"),
    ]


def test_a_missing_script_file_is_a_usage_error(mini: Path, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no script file"):
        run(mini, "chat", "status", tmp_path, models=[f"scripted/{tmp_path / 'none.yaml'}"])


def test_outside_a_trial_the_sdk_is_untouched(mini: Path, tmp_path: Path) -> None:
    """After a bridged run, a plain SDK call in the same process reaches its server."""
    import openai

    run(mini, "chat", "status", tmp_path, models=scripted(tmp_path))
    with model_server(lambda body: (200, completion("plain"))) as (url, seen):
        client = openai.OpenAI(api_key="sk-none", base_url=url, max_retries=0)
        answer = client.chat.completions.create(model="m", messages=[])
    assert answer.choices[0].message.content == "plain"
    assert len(seen.bodies) == 1


def test_only_a_python_agent_takes_a_model(mini: Path, tmp_path: Path) -> None:
    store = Store(str(tmp_path / "runs.db"))
    request = RunRequest(agent="oracle", models=scripted(tmp_path), trials=1, k=[1])
    with pytest.raises(UsageError, match="only a python: agent takes --model"):
        asyncio.run(run_suite(load_suite(mini), request, store, fresh=True))


def test_a_changed_script_is_another_model(tmp_path: Path) -> None:
    from toolproof.config import Config
    from toolproof.models.registry import choose_model

    script = tmp_path / "script.yaml"
    script.write_text("default: [{text: one}]\n")
    name = f"scripted/{script}"
    before = choose_model(name, Config(), {}, ModelOverrides()).identity
    script.write_text("default: [{text: two}]\n")
    assert choose_model(name, Config(), {}, ModelOverrides()).identity != before


def anthropic_message(blocks: list[dict[str, Any]], stop: str) -> dict[str, Any]:
    """A Messages API answer as Anthropic's API returns it."""
    return {
        "id": "msg_test",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": blocks,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 80, "output_tokens": 12, "cache_read_input_tokens": 20},
    }


def test_without_a_model_an_anthropic_agents_calls_are_recorded_and_priced(
    mini: Path, tmp_path: Path
) -> None:
    use = {"type": "tool_use", "id": "tu_1", "name": "get_order", "input": {"order_id": "B"}}
    answers = iter(
        [
            anthropic_message([use], "tool_use"),
            anthropic_message([{"type": "text", "text": "Order B is shipped."}], "end_turn"),
        ]
    )
    with model_server(lambda body: (200, next(answers))) as (url, seen):
        agents = tmp_path / "bridged_agents.py"
        agents.write_text(agents.read_text().replace(NOWHERE, url))
        [result] = run(mini, "claude", "status", tmp_path)
    assert (result.outcome, result.reason) == ("passed", "")
    assert seen.bodies[1]["messages"][-1]["content"][0]["type"] == "tool_result"
    calls = model_calls(result)
    assert [c.model for c in calls] == ["anthropic/claude-sonnet-4-5"] * 2
    assert [(c.usage.input_tokens, c.usage.cached_tokens) for c in calls] == [(100, 20)] * 2
    # claude-sonnet-4-5: $3 per million input, $0.30 cached, $15 output
    assert calls[0].cost_usd == pytest.approx((80 * 3.0 + 20 * 0.30 + 12 * 15.0) / 1e6)
