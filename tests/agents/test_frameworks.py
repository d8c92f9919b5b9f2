"""The trial's tools in each framework's own form: built from the drifted schemas the trial
shows, and calling through the gateway (recorded, under its faults)."""

from __future__ import annotations

import asyncio
import textwrap
from pathlib import Path

import pytest
from support import MINI_FILES, write_files

from toolproof.records.trial import TrialResult
from toolproof.runner.run import RunRequest, run_suite
from toolproof.store.journal import Store
from toolproof.suite import load_suite

pytest.importorskip("agents")
pytest.importorskip("langchain_core")
pytest.importorskip("pydantic_ai")

AGENTS = """
import json

from toolproof.agents.external import Conversation, ToolHandle


def lookup(names):
    [name] = [n for n in names if "cancel" not in n]
    return name


async def openai_agents(conversation: Conversation, tools: ToolHandle) -> str:
    found = {t.name: t for t in tools.openai_agents()}
    tool = found[lookup(found)]
    [param] = tool.params_json_schema["properties"]
    answer = json.loads(await tool.on_invoke_tool(None, json.dumps({param: "B"})))
    return f"Order B is {answer.get('status', answer)}."


async def langchain(conversation: Conversation, tools: ToolHandle) -> str:
    found = {t.name: t for t in tools.langchain()}
    tool = found[lookup(found)]
    [param] = tool.args
    answer = json.loads(await tool.ainvoke({param: "B"}))
    return f"Order B is {answer.get('status', answer)}."


async def pydantic_ai(conversation: Conversation, tools: ToolHandle) -> str:
    found = {t.name: t for t in tools.pydantic_ai()}
    tool = found[lookup(found)]
    [param] = tool.function_schema.json_schema["properties"]
    answer = json.loads(await tool.function(**{param: "B"}))
    return f"Order B is {answer.get('status', answer)}."
"""

DRIFT = """
drift:
  v2:
    - {op: rename_tool, tool: get_order, to: fetch_order}
    - {op: rename_param, tool: get_order, param: order_id, to: orderId}
faults:
  profiles:
    limited:
      - {kind: rate_limit, rate: 1.0, max_per_trial: 1, retry_after_s: 2}
"""


@pytest.fixture
def mini(tmp_path: Path) -> Path:
    root = write_files(tmp_path / "mini", MINI_FILES)
    suite = root / "suite.yaml"
    suite.write_text(suite.read_text() + DRIFT)
    (tmp_path / "framework_agents.py").write_text(textwrap.dedent(AGENTS), encoding="utf-8")
    return root


def run(mini: Path, function: str, tmp_path: Path, **kwargs: str) -> TrialResult:
    store = Store(str(tmp_path / "runs.db"))
    agent = f"python:{tmp_path / 'framework_agents.py'}:{function}"
    request = RunRequest(agent=agent, trials=1, k=[1], tasks="status", **kwargs)
    report = asyncio.run(run_suite(load_suite(mini), request, store, fresh=True))
    [(_, result)] = store.results(report.run_id)
    return result


@pytest.mark.parametrize("form", ["openai_agents", "langchain", "pydantic_ai"])
def test_a_frameworks_tools_are_the_drifted_ones_and_call_through_the_gateway(
    mini: Path, tmp_path: Path, form: str
) -> None:
    result = run(mini, form, tmp_path, drift="v2")
    assert (result.variant, result.outcome) == ("drift:v2", "passed"), result.reason
    [call] = result.transcript.tool_calls()
    assert (call.name, call.arguments, call.tool) == ("fetch_order", {"orderId": "B"}, "get_order")


@pytest.mark.parametrize("form", ["openai_agents", "langchain", "pydantic_ai"])
def test_a_frameworks_tool_answers_a_fault_as_an_error_result(
    mini: Path, tmp_path: Path, form: str
) -> None:
    result = run(mini, form, tmp_path, faults="limited")
    [call] = result.transcript.tool_calls()
    assert call.is_error and call.fault == "rate_limit"
    said = result.transcript.messages("assistant")[0].content
    assert "429" in said and result.outcome == "failed"
