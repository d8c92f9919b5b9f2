"""Users who act (dual control): the suite's `user: tools:`, the scripted and the simulated
user calling them through the gateway, the oracle playing both sides, and the graders checking
the user's part of the world (tests/fixtures/dual-control)."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest
from rich.console import Console
from support import edit, write_files

from toolproof.agents.base import AgentFactory
from toolproof.agents.baselines import NullAgent, OracleAgent
from toolproof.agents.registry import resolve_agent
from toolproof.errors import SuiteError
from toolproof.gateway import Gateway
from toolproof.models.scripted import ScriptedModel, ScriptedTurn
from toolproof.records.trial import TrialResult
from toolproof.report.trial import conversation
from toolproof.runner import RunRequest, run_suite
from toolproof.runner import trial as trials
from toolproof.runner.gold import replay_gold
from toolproof.runner.plan import PlannedTrial
from toolproof.runner.variants import Variant, VariantSetup
from toolproof.store import Store
from toolproof.suite import Suite, load_suite
from toolproof.tools.base import ToolContext
from toolproof.transcript import Transcript
from toolproof.users.llm import LLMUser
from toolproof.world import World

FIXTURE = Path(__file__).parent.parent / "fixtures" / "dual-control"

ASKS = """
tasks:
  roaming:
    - tool_calls: [{name: enable_roaming, arguments: {line_id: L1}}]
    - text: "Your line L1 now roams. Please turn on data roaming on your phone."
    - text: "You're all set."
  roaming-any-way:
    - tool_calls: [{name: enable_roaming, arguments: {line_id: L1}}]
    - text: "Your line L1 now roams. Please turn on data roaming on your phone."
    - text: "You're all set."
"""

NEVER_ASKS = """
tasks:
  roaming:
    - tool_calls: [{name: enable_roaming, arguments: {line_id: L1}}]
    - text: "Done: your line L1 is fixed."
"""


@pytest.fixture(scope="module")
def suite() -> Suite:
    return load_suite(FIXTURE)


def play(
    suite: Suite, agent: AgentFactory, faults: str | None = None, task_id: str = "roaming"
) -> TrialResult:
    task = suite.task(task_id)
    gold = asyncio.run(replay_gold(suite, task))
    setup = VariantSetup(suite, Variant(faults=faults), 0.001)
    return asyncio.run(
        trials.run_trial(
            trials.Trial(
                PlannedTrial(task_id, 0, 3, faults or "clean"),
                suite,
                agent,
                "agent",
                gold.hash,
                max_steps=10,
                conditions=setup.conditions(task, 3),
                expected_changes=gold.changes,
            )
        )
    )


def scripted(tmp_path: Path, script: str) -> AgentFactory:
    path = write_files(tmp_path, {"script.yaml": script}) / "script.yaml"
    return resolve_agent(f"scripted:{path}").factory


def test_the_scripted_user_acts_when_asked_and_the_task_passes(
    suite: Suite, tmp_path: Path
) -> None:
    result = play(suite, scripted(tmp_path, ASKS))
    assert result.outcome == "passed", result.reason
    assert [c.name for c in result.transcript.tool_calls()] == ["enable_roaming"]
    user_calls = result.transcript.tool_calls("user")
    assert [(c.name, c.by) for c in user_calls] == [
        ("toggle_roaming", "user"),
        ("check_phone", "user"),
    ]
    assert user_calls[1].result == {"roaming": True, "data": "working"}
    assert result.world_diff  # the phone's record changed in the world the graders saw


def test_the_task_fails_when_the_agent_never_asks_the_user_to_act(
    suite: Suite, tmp_path: Path
) -> None:
    result = play(suite, scripted(tmp_path, NEVER_ASKS))
    assert result.outcome == "failed"
    assert "final state differs" in result.reason
    assert "phone" in result.reason
    assert result.transcript.tool_calls("user") == []


def test_the_oracle_plays_both_sides_and_the_null_agent_fails(suite: Suite) -> None:
    good = play(suite, OracleAgent)
    assert good.outcome == "passed", good.reason
    assert [c.name for c in good.transcript.tool_calls("user")] == ["toggle_roaming"]
    idle = play(suite, NullAgent)
    assert idle.outcome == "failed"


def test_a_fault_on_a_user_tool_applies_to_the_users_call(suite: Suite, tmp_path: Path) -> None:
    result = play(suite, scripted(tmp_path, ASKS), faults="flaky-phone")
    toggle = result.transcript.tool_calls("user")[0]
    assert (toggle.name, toggle.fault, toggle.is_error) == ("toggle_roaming", "server_error", True)
    assert result.transcript.tool_calls("user")[1].result["data"] == "no service"
    assert result.outcome == "failed"


def test_the_users_calls_are_in_the_stored_transcript(tmp_path: Path) -> None:
    folder = tmp_path / "suite"
    shutil.copytree(FIXTURE, folder)
    script = write_files(tmp_path, {"script.yaml": ASKS}) / "script.yaml"
    store = Store(f"sqlite:///{tmp_path / 'runs.db'}")
    with load_suite(folder) as loaded:
        summary = asyncio.run(
            run_suite(
                loaded,
                RunRequest(agent=f"scripted:{script}", trials=1, k=[1], tasks="roaming"),
                store,
            )
        )
    [(_, stored)] = list(store.results(summary.run_id))
    assert stored.outcome == "passed", stored.reason
    called = [(c.name, c.by) for c in stored.transcript.tool_calls("user")]
    assert called == [("toggle_roaming", "user"), ("check_phone", "user")]
    assert [c.name for c in stored.transcript.tool_calls()] == ["enable_roaming"]


def test_a_simulated_user_calls_its_tools_before_it_answers(suite: Suite) -> None:
    task = suite.task("roaming")
    model = ScriptedModel(
        [
            ScriptedTurn.model_validate({"tool_calls": [{"name": "toggle_roaming"}]}),
            ScriptedTurn.model_validate({"text": "Roaming is on now."}),
        ]
    )
    transcript = Transcript()
    user = LLMUser(model, task.spec.user, task.spec.story, transcript)
    world = World(suite.start_state(task))
    user.reach(Gateway(suite.user_tools, ToolContext(world, 0), transcript, by="user"))
    said = asyncio.run(user.respond("Please turn on roaming on your phone."))
    assert said == "Roaming is on now."
    [call] = transcript.tool_calls("user")
    assert (call.name, call.result) == ("toggle_roaming", {"roaming": True})
    assert world["phone"]["roaming"] is True
    assert len(transcript.model_calls("user")) == 2


@pytest.mark.parametrize(
    ("old", "new", "problem"),
    [
        (
            "do: [{tool: toggle_roaming}, {tool: check_phone}]",
            "do: [{tool: reboot}]",
            "'reboot' is not a user tool (user tools: check_phone, restart_phone, toggle_roaming)",
        ),
        (
            "- {tool: toggle_roaming, by: user}\n      reads: []",
            "- {tool: get_line, by: user, args: {line_id: L1}}\n      reads: []",
            "unknown user tool 'get_line' in actions",
        ),
        (
            "    check_phone: {}",
            "    check_phone: {}\n    get_line: {}",
            "user tool 'get_line' is also an agent tool under tools:",
        ),
    ],
)
def test_a_bad_user_tool_is_a_located_suite_error(
    tmp_path: Path, old: str, new: str, problem: str
) -> None:
    folder = tmp_path / "suite"
    shutil.copytree(FIXTURE, folder)
    text = (folder / "suite.yaml").read_text()
    (folder / "suite.yaml").write_text(edit(text, old, new))
    with pytest.raises(SuiteError) as raised:
        load_suite(folder)
    assert problem in str(raised.value)
    assert "suite.yaml:" in str(raised.value)


def test_show_marks_the_users_calls_apart_from_the_agents(suite: Suite, tmp_path: Path) -> None:
    result = play(suite, scripted(tmp_path, ASKS))
    console = Console(record=True, width=200)
    console.print(conversation(result))
    rows = [line for line in console.export_text().splitlines() if "(" in line]
    [agent_row] = [line for line in rows if "enable_roaming(" in line]
    [user_row] = [line for line in rows if "toggle_roaming(" in line]
    assert "user tool" in user_row and "user tool" not in agent_row


def test_the_users_calls_are_spans_with_their_caller(suite: Suite, tmp_path: Path) -> None:
    pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed")
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from toolproof.telemetry import TraceExport

    result = play(suite, scripted(tmp_path, ASKS))
    memory = InMemorySpanExporter()
    export = TraceExport([memory], content=False)
    export.run_id = "run-1"
    export.add(result)
    export.close()
    tools = {
        s.attributes["gen_ai.tool.name"]: s.attributes["toolproof.tool.caller"]
        for s in memory.get_finished_spans()
        if s.attributes["gen_ai.operation.name"] == "execute_tool"
    }
    assert tools == {"enable_roaming": "agent", "toggle_roaming": "user", "check_phone": "user"}


def test_a_task_judged_by_its_checks_passes_another_path_to_the_same_outcome(
    suite: Suite, tmp_path: Path
) -> None:
    result = play(suite, scripted(tmp_path, ASKS), task_id="roaming-any-way")
    assert result.outcome == "passed", result.reason
    assert [c.name for c in result.transcript.tool_calls("user")] == [
        "restart_phone",
        "toggle_roaming",
    ]
    assert result.final_hash != result.expected_hash  # the restart the gold never made
    [check] = result.transcript.checks()
    assert (check.name, check.passed) == ("data works", True)
    idle = play(suite, NullAgent, task_id="roaming-any-way")
    assert idle.outcome == "failed"
    assert "the phone shows no service" in idle.reason


def test_a_task_judged_by_checks_without_any_is_a_located_error(tmp_path: Path) -> None:
    folder = tmp_path / "suite"
    shutil.copytree(FIXTURE, folder)
    text = (folder / "suite.yaml").read_text()
    old = '      check:\n        - {name: data works, python: "tools.py:data_works"}\n'
    (folder / "suite.yaml").write_text(edit(text, old, ""))
    with pytest.raises(SuiteError) as raised:
        load_suite(folder)
    assert "final_state: checks judges the final world by the task's state and check" in str(
        raised.value
    )
    assert "suite.yaml:" in str(raised.value)
