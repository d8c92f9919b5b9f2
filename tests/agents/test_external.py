"""Bring-your-own agents end to end: Python functions (`python:`) and HTTP services (`http://`)
run through `run_suite` against the mini suite, with real files, modules and sockets; and the
worked examples in examples/agents.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import sys
import textwrap
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from servers import completion, openai_server
from support import MINI_FILES, write_files

from toolproof.agents.external import HttpSettings, http_agent
from toolproof.agents.registry import resolve_agent
from toolproof.errors import UsageError
from toolproof.records.trial import TrialResult
from toolproof.runner.build import gold_replays
from toolproof.runner.plan import PlannedTrial
from toolproof.runner.run import RunRequest, run_suite
from toolproof.runner.trial import Trial, run_trial
from toolproof.store.journal import Store
from toolproof.suite import Suite, load_suite

ROOT = Path(__file__).parents[2]
EXAMPLES = ROOT / "examples" / "agents"
RETAIL = ROOT / "examples" / "retail"

AGENTS = '''
from toolproof.agents.external import Conversation, ToolHandle


async def status(conversation: Conversation, tools: ToolHandle) -> str:
    assert {t["name"] for t in tools.schemas} == {"get_order", "cancel_order"}
    assert tools.openai_tools[0]["function"] == tools.schemas[0]
    order = await tools.call("get_order", {"order_id": "B"})
    return f"Order B is {order['status']}."


async def adaptive(conversation: Conversation, tools: ToolHandle) -> str:
    """Reads the (drifted) schemas: the lookup tool is the one without 'cancel'."""
    [lookup] = [t for t in tools.schemas if "cancel" not in t["name"]]
    [param] = lookup["parameters"]["properties"]
    order = await tools.call(lookup["name"], {param: "B"})
    return f"Order B is {order['status']}."


async def cancel(conversation: Conversation, tools: ToolHandle) -> str:
    """Looks the order up, asks, and cancels after the yes (remembered in `state`)."""
    if conversation.state.get("asked"):
        done = await tools.call("cancel_order", {"order_id": "A"})
        return f"Order A is {done['status']}."
    await tools.call("get_order", {"order_id": "A"})
    conversation.state["asked"] = True
    return "Order A is pending. Shall I cancel it? (yes/no)"


async def crashes(conversation: Conversation, tools: ToolHandle) -> str:
    await tools.call("get_order", {"order_id": "B"})
    return look_closer({})


def look_closer(order: dict) -> str:
    return order["status"]


async def mute(conversation: Conversation, tools: ToolHandle) -> str:
    return None  # type: ignore[return-value]


def not_async(conversation: Conversation, tools: ToolHandle) -> str:
    return "hello"
'''


@pytest.fixture
def mini_dir(tmp_path: Path) -> Path:
    root = write_files(tmp_path / "mini", MINI_FILES)
    (tmp_path / "my_agents.py").write_text(textwrap.dedent(AGENTS), encoding="utf-8")
    return root


def run(
    suite_dir: Path, agent: str, tasks: str, tmp_path: Path, **kwargs: Any
) -> list[TrialResult]:
    """One trial per task through `run_suite`, as `toolproof run` does; the stored results."""
    store = Store(str(tmp_path / "runs.db"))
    request = RunRequest(agent=agent, trials=1, k=[1], tasks=tasks, **kwargs)
    report = asyncio.run(run_suite(load_suite(suite_dir), request, store, fresh=True))
    return [result for _, result in store.results(report.run_id)]


# ---------------------------------------------------------------- python: agents


def test_a_python_agent_from_a_file_passes_and_its_calls_go_through_the_gateway(
    mini_dir: Path, tmp_path: Path
) -> None:
    [result] = run(mini_dir, f"python:{tmp_path / 'my_agents.py'}:status", "status", tmp_path)
    assert (result.outcome, result.reason) == ("passed", "")
    assert [(c.name, c.arguments) for c in result.transcript.tool_calls()] == [
        ("get_order", {"order_id": "B"})
    ]
    assert result.transcript.messages("assistant")[0].content == "Order B is shipped."


def test_a_python_agent_meets_the_drifted_api(mini_dir: Path, tmp_path: Path) -> None:
    suite = mini_dir / "suite.yaml"
    drift = "drift:\n  v2:\n    - {op: rename_tool, tool: get_order, to: fetch_order}\n"
    drift += "    - {op: rename_param, tool: get_order, param: order_id, to: orderId}\n"
    suite.write_text(suite.read_text() + drift)
    agent = f"python:{tmp_path / 'my_agents.py'}:adaptive"
    [result] = run(mini_dir, agent, "status", tmp_path, drift="v2")
    assert (result.variant, result.outcome) == ("drift:v2", "passed")
    [call] = result.transcript.tool_calls()
    assert (call.name, call.arguments, call.tool) == ("fetch_order", {"orderId": "B"}, "get_order")


def test_a_python_agent_from_a_module_keeps_state_across_turns(
    mini_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    monkeypatch.delitem(sys.modules, "my_agents", raising=False)
    [result] = run(mini_dir, "python:my_agents:cancel", "cancel", tmp_path)
    assert result.outcome == "passed", result.reason
    assert [c.name for c in result.transcript.tool_calls()] == ["get_order", "cancel_order"]
    assert [m.role for m in result.transcript.messages()] == ["user", "assistant"] * 2


def test_a_python_agent_sees_the_whole_conversation_in_the_shared_format(
    mini_dir: Path, tmp_path: Path
) -> None:
    choice = resolve_agent(f"python:{tmp_path / 'my_agents.py'}:cancel")
    built: list[Any] = []

    def factory(context: Any) -> Any:
        built.append(choice.factory(context))
        return built[-1]

    result = trial_of(load_suite(mini_dir), "cancel", factory, choice.label)
    assert result.outcome == "passed", result.reason
    assert built[0].history == [
        {"role": "user", "content": "Please call off order A"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": "call_1", "name": "get_order", "arguments": {"order_id": "A"}}],
        },
        {
            "role": "tool",
            "tool_call_id": "call_1",
            "name": "get_order",
            "content": {"status": "pending"},
            "is_error": False,
        },
        {"role": "assistant", "content": "Order A is pending. Shall I cancel it? (yes/no)"},
        {"role": "user", "content": "Yes, go ahead."},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": "call_2", "name": "cancel_order", "arguments": {"order_id": "A"}}
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "call_2",
            "name": "cancel_order",
            "content": {"status": "cancelled"},
            "is_error": False,
        },
        {"role": "assistant", "content": "Order A is cancelled."},
    ]
    assert [c.call_id for c in result.transcript.tool_calls()] == ["call_1", "call_2"]
    conversation = built[0].conversation
    assert conversation.state == {"asked": True} and len(conversation.trial) == 32
    assert conversation.latest == "Yes, go ahead." and conversation.policy.startswith("You are")


def test_an_exception_in_the_agent_fails_the_trial_as_agent_error_with_its_traceback(
    mini_dir: Path, tmp_path: Path
) -> None:
    [result] = run(mini_dir, f"python:{tmp_path / 'my_agents.py'}:crashes", "status", tmp_path)
    assert (result.outcome, result.ended) == ("failed", "agent_error")
    assert result.reason == (
        "agent_error: KeyError: 'status' "
        "(traceback: my_agents.py:32 in crashes > my_agents.py:36 in look_closer)"
    )
    assert len(result.transcript.tool_calls()) == 1
    [mute] = run(mini_dir, f"python:{tmp_path / 'my_agents.py'}:mute", "status", tmp_path)
    assert mute.reason == "agent_error: the agent returned NoneType, not the reply text"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("python:{tmp}/nowhere.py:agent", "no such file"),
        ("python:{tmp}/my_agents.py:missing", "has no 'missing'"),
        ("python:{tmp}/my_agents.py:not_async", "must be an async function"),
        ("python:no_such_module_here:agent", "no module 'no_such_module_here'"),
        ("python:agent_without_function", "expected python:MODULE:FUNCTION"),
        ("http://", "not a URL with a host"),
    ],
)
def test_bad_agent_specs_are_usage_errors(
    mini_dir: Path, tmp_path: Path, spec: str, message: str
) -> None:
    with pytest.raises(UsageError, match=message):
        resolve_agent(spec.format(tmp=tmp_path))


# ---------------------------------------------------------------- http: agents

Reply = Callable[[dict[str, Any]], tuple[int, Any]]


@contextmanager
def agent_server(reply: Reply) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """An HTTP agent on 127.0.0.1: `reply(request) -> (status, body)`; body bytes go raw.
    Yields (URL, requests seen)."""
    seen: list[dict[str, Any]] = []
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with lock:
                seen.append(request)
                status, body = reply(request)
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/agent", seen
    finally:
        server.shutdown()
        server.server_close()


def looks_up_then_replies(request: dict[str, Any]) -> tuple[int, Any]:
    last = request["messages"][-1]
    if last["role"] == "user":
        call = {"id": "c1", "name": "get_order", "arguments": {"order_id": "B"}}
        return 200, {"tool_calls": [call], "usage": {"input_tokens": 50, "output_tokens": 5}}
    return 200, {"reply": f"Order B is {last['content']['status']}."}


def test_an_http_agent_calls_a_tool_then_replies_and_passes(mini_dir: Path, tmp_path: Path) -> None:
    with agent_server(looks_up_then_replies) as (url, seen):
        [result] = run(mini_dir, url, "status", tmp_path)
    assert (result.outcome, result.reason) == ("passed", "")
    first, second = seen
    assert first["trial"] == second["trial"] and len(first["trial"]) == 32
    assert first["policy"].startswith("You are a support agent.")
    assert {t["name"] for t in first["tools"]} == {"get_order", "cancel_order"}
    assert first["tools"][0].keys() == {"name", "description", "parameters"}
    assert first["messages"] == [{"role": "user", "content": "Where is order B?"}]
    assert second["messages"][1:] == [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": "c1", "name": "get_order", "arguments": {"order_id": "B"}}],
        },
        {
            "role": "tool",
            "tool_call_id": "c1",
            "name": "get_order",
            "content": {"status": "shipped"},
            "is_error": False,
        },
    ]
    turns = result.transcript.model_calls()
    assert [t.model for t in turns] == [url, url]
    assert turns[0].usage.input_tokens == 50 and turns[0].tool_calls[0].name == "get_order"
    assert result.usage.output_tokens == 5


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        (b"<html>oops</html>", "the answer is not JSON"),
        (["reply"], "expected a JSON object"),
        ({"text": "hi"}, "expected {'reply': ...} or {'tool_calls': [...]}"),
        ({"reply": 42}, "'reply' must be a string"),
        ({"tool_calls": []}, "'tool_calls' must be a non-empty list"),
        ({"tool_calls": [{"arguments": {}}]}, "tool_calls[0] needs a 'name' string"),
        ({"tool_calls": [{"name": "get_order", "arguments": [1]}]}, "must be an object or JSON"),
        ({"reply": "hi", "tool_calls": [{"name": "x"}]}, "not both"),
    ],
)
def test_an_answer_that_breaks_the_protocol_fails_the_trial(
    mini_dir: Path, tmp_path: Path, body: Any, problem: str
) -> None:
    with agent_server(lambda _: (200, body)) as (url, _):
        [result] = run(mini_dir, url, "status", tmp_path)
    assert (result.outcome, result.ended) == ("failed", "agent_protocol_error")
    assert result.reason.startswith(f"agent_protocol_error: {url}: ")
    assert problem in result.reason


def test_a_4xx_is_the_agents_protocol_error_at_once(mini_dir: Path, tmp_path: Path) -> None:
    with agent_server(lambda _: (404, {"detail": "Not Found"})) as (url, seen):
        [result] = run(mini_dir, url, "status", tmp_path)
    assert result.reason.startswith(f"agent_protocol_error: {url}: HTTP 404")
    assert len(seen) == 1


@pytest.mark.slow
def test_an_agent_that_always_answers_500_is_an_infra_error_after_retries(
    mini_dir: Path, tmp_path: Path
) -> None:
    with agent_server(lambda _: (500, {"error": "model down"})) as (url, seen):
        [result] = run(mini_dir, url, "status", tmp_path)
    assert result.outcome == "infra_error"
    assert (
        result.reason == f'agent at {url}: HTTP 500: {{"error": "model down"}} (after 3 attempts)'
    )
    assert len(seen) == 3


def test_a_recovered_5xx_and_an_unreachable_agent(mini_dir: Path, tmp_path: Path) -> None:
    answers = iter([(503, {"error": "busy"}), (200, {"reply": "Order B has shipped."})])
    with agent_server(lambda _: next(answers)) as (url, _):
        [result] = run(mini_dir, url, "status", tmp_path)
    assert result.outcome == "failed" and result.reason.startswith("reads:")  # no get_order
    with agent_server(lambda _: (200, {})) as (gone, _):
        pass
    suite = load_suite(mini_dir)
    fast = http_agent(gone, HttpSettings(attempts=2, backoff_s=0.01))
    result = trial_of(suite, "status", fast.factory, fast.label)
    assert result.outcome == "infra_error"
    assert result.reason.startswith(f"agent at {gone}: cannot connect")


def test_max_steps_cuts_an_agent_that_never_replies(mini_dir: Path, tmp_path: Path) -> None:
    call = {"tool_calls": [{"name": "get_order", "arguments": '{"order_id": "B"}'}]}
    with agent_server(lambda _: (200, call)) as (url, seen):
        [result] = run(mini_dir, url, "status", tmp_path, max_steps=3)
    assert (result.outcome, result.ended) == ("failed", "max_steps")
    assert len(seen) == 3 and len(result.transcript.tool_calls()) == 3
    assert seen[-1]["messages"][-1]["tool_call_id"] == "call_2_2"


def trial_of(suite: Suite, task_id: str, factory: Any, label: str) -> TrialResult:
    task = suite.task(task_id)
    gold = asyncio.run(gold_replays(suite, [task]))[task_id]
    spec = PlannedTrial(task_id=task_id, trial=0, seed=1)
    trial = Trial(spec, suite, factory, label, gold.hash, 10, expected_changes=gold.changes)
    return asyncio.run(run_trial(trial))


# ---------------------------------------------------------------- the worked examples


def load_example(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_simple_example_agent_answers_retail_lookups(tmp_path: Path) -> None:
    tasks = ",".join(
        [
            "status-latest-order-by-email",
            "tracking-number-by-phone",
            "payment-amount-and-card",
            "refund-status-cancelled-order",
            "auth-before-order-details",
            "cancel-processing-refund-card",
        ]
    )
    results = run(RETAIL, f"python:{EXAMPLES / 'simple_agent.py'}:agent", tasks, tmp_path)
    outcomes = {r.task_id: r.outcome for r in results}
    assert outcomes.pop("cancel-processing-refund-card") == "failed"  # it changes nothing
    assert set(outcomes.values()) == {"passed"}, [r.reason for r in results]


def test_the_http_example_turns_the_protocol_into_chat_completions(
    mini_dir: Path, tmp_path: Path
) -> None:
    example = load_example("http_agent")

    def model(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if body["messages"][-1]["role"] == "user":
            return 200, completion(
                tool_calls=[{"name": "get_order", "arguments": {"order_id": "B"}}]
            )
        return 200, completion("Order B has shipped.", prompt_tokens=120, completion_tokens=7)

    with openai_server(model) as (base_url, requests):
        server = example.make_server(base_url, "test-model", port=0, api_key="test")
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            url = f"http://127.0.0.1:{server.server_address[1]}/"
            [result] = run(mini_dir, url, "status", tmp_path)
        finally:
            server.shutdown()
            server.server_close()
    assert (result.outcome, result.reason) == ("passed", "")
    first, second = requests
    assert first["model"] == "test-model" and first["tool_choice"] == "auto"
    assert first["messages"][0]["role"] == "system"
    assert {t["function"]["name"] for t in first["tools"]} == {"get_order", "cancel_order"}
    assert second["messages"][-2]["tool_calls"][0]["function"] == {
        "name": "get_order",
        "arguments": '{"order_id": "B"}',
    }
    assert second["messages"][-1] == {
        "role": "tool",
        "tool_call_id": "call_0",
        "content": '{"status": "shipped"}',
    }
    assert result.usage.input_tokens == 100 + 120
