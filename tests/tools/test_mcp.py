"""MCP backends against real servers: mcp-server-git and mcp-server-time from PyPI (over
stdio and streamable HTTP) and a fixture server built on the SDK's MCPServer (tool errors,
protocol errors, crashes, servers that do not start). Also hooks, checks and per-trial
isolation, which every real backend uses."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import textwrap
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from toolproof.agents.base import Agent
from toolproof.agents.baselines import NullAgent, OracleAgent
from toolproof.errors import SuiteError
from toolproof.gateway import Conditions, Gateway
from toolproof.gateway.faults import FaultInjector
from toolproof.records.trial import TrialResult
from toolproof.runner.gold import replay_gold
from toolproof.runner.grading import judge
from toolproof.runner.plan import PlannedTrial
from toolproof.runner.trial import Trial, run_trial
from toolproof.runner.validate import validate_suite
from toolproof.spec.conditions import FaultRule
from toolproof.suite import Suite, load_suite
from toolproof.tools.base import ToolContext, ToolResult
from toolproof.tools.mcp import DiscoveredTool, MCPTool
from toolproof.transcript import CheckEvent, Transcript
from toolproof.world import World

FIXTURES = Path(__file__).parent / "fixtures"
SERVER = FIXTURES / "mcp_fixture_server.py"
TIME_HTTP = FIXTURES / "mcp_time_http.py"
MCP_GIT = Path(__file__).parents[2] / "examples" / "mcp-git"

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def write_suite(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return root


def problems_of(root: Path) -> list[str]:
    with pytest.raises(SuiteError) as caught:
        load_suite(root)
    return [str(p) for p in caught.value.problems]


class Scripted(Agent):
    """Calls the given tools through the gateway, then says `text`."""

    def __init__(self, calls: list[tuple[str, dict[str, Any]]], text: str = "Done.") -> None:
        self.calls = calls
        self.text = text
        self.results: list[ToolResult] = []

    async def reply(self, message: str, tools: Gateway) -> str:
        for name, args in self.calls:
            self.results.append(await tools.call(name, args))
        self.calls = []
        return self.text


def trial(
    suite: Suite, task_id: str, agent: Any = OracleAgent, seed: int = 1, **kwargs: Any
) -> TrialResult:
    make = agent if isinstance(agent, type) else (lambda _ctx: agent)
    spec = PlannedTrial(task_id, 0, seed)
    replay = asyncio.run(replay_gold(suite, suite.task(task_id)))
    return asyncio.run(run_trial(Trial(spec, suite, make, "test", replay.hash, 10, **kwargs)))


def call(suite: Suite, tool: str, args: dict[str, Any]) -> ToolResult:
    """A tool call outside any trial (per-run backends)."""
    context = ToolContext(world=World(suite.world), seed=0)
    return asyncio.run(suite.tools[tool].tool.call(args, context))


# ---------------------------------------------------------------- mcp-server-git (stdio)


@pytest.fixture(scope="module")
def git_suite() -> Iterator[Suite]:
    with load_suite(MCP_GIT) as suite:
        yield suite


@pytest.mark.slow
def test_git_tools_are_discovered_with_repo_path_bound(git_suite: Suite) -> None:
    tools = git_suite.tools
    assert len(tools) == 12
    for binding in tools.values():
        assert binding.simulated is False
        assert "repo_path" not in binding.schema.parameters["properties"]
        assert "repo_path" not in binding.schema.parameters.get("required", [])
    assert tools["git_show"].schema.parameters["required"] == ["revision"]
    # read/write kinds come from the server's annotations (readOnlyHint)
    assert not tools["git_log"].write and not tools["git_diff_staged"].write
    assert tools["git_commit"].write and tools["git_checkout"].write
    assert tools["git_commit"].tier == 3 and tools["git_log"].weight == 0.22


@pytest.mark.slow
def test_git_gold_actions_are_not_replayed_on_the_world(git_suite: Suite) -> None:
    replay = asyncio.run(replay_gold(git_suite, git_suite.task("commit-config-alone")))
    assert replay.hash is None
    assert replay.real_tools == ["git_add", "git_commit", "git_reset"]
    assert replay.errors == []


@pytest.mark.slow
def test_git_suite_is_sound_oracle_passes_and_every_baseline_fails(git_suite: Suite) -> None:
    checks = asyncio.run(validate_suite(git_suite))
    assert [(c.task.id, c.oracle) for c in checks if c.oracle != "passed"] == []
    assert [(c.task.id, c.passing_baselines) for c in checks if not c.ok] == []
    assert len(checks) == 14
    # the null agent changed nothing, so the check on the repository fails it too
    null = trial(git_suite, "switch-to-release", NullAgent)
    assert [(e.name, e.passed, e.message) for e in null.transcript.checks()] == [
        ("on release-1.0", False, "output 'main', expected 'release-1.0'")
    ]


@pytest.mark.slow
def test_git_failed_check_fails_the_trial_with_its_message(git_suite: Suite) -> None:
    agent = Scripted([("git_commit", {"message": "wip"})], "Committed.")
    result = trial(git_suite, "commit-staged", agent)
    assert agent.results[0].is_error is False
    assert "Changes committed successfully with hash" in agent.results[0].content
    assert result.outcome == "failed"
    assert result.reason == (
        "check: checks.py:head_commit: HEAD is 'wip', expected 'Add changelog for 1.1'"
    )
    events = result.transcript.checks()
    assert [(e.name, e.passed) for e in events] == [("checks.py:head_commit", False)]
    # no world hash verdict: the world does not see a real repository
    assert [v.grader for v in result.verdicts] == ["check", "writes", "confirm_before_write"]


@pytest.mark.slow
def test_git_tool_error_reaches_the_agent_as_is_error(git_suite: Suite) -> None:
    agent = Scripted([("git_show", {"revision": "no-such-rev"}), ("git_log", {"max_count": 1})])
    result = trial(git_suite, "last-commit", agent)
    error, log = agent.results
    assert error.is_error and error.error_kind == "tool_error"
    assert "no-such-rev" in error.content["error"]
    assert "Raise request timeout to 60s" in log.content
    assert result.outcome == "failed"  # the agent never said the facts
    assert result.transcript.checks()[0].passed  # ... and changed nothing


# ---------------------------------------------------------------- mcp-server-time (stdio + HTTP)

TIME_SUITE = f"""
name: time
services:
  time:
    command: [python, "{TIME_HTTP}", "{{port}}"]
backends:
  local:
    type: mcp
    command: [python, -m, mcp_server_time, --local-timezone, UTC]
  remote:
    type: mcp
    url: "{{services.time.url}}/mcp"
    headers: {{X-Caller: "${{TOOLPROOF_TEST_CALLER:-tests}}"}}
tools:
  get_current_time: {{tier: 1, backend: local}}
  convert_time: {{tier: 2, backend: remote}}
tasks:
  - id: convert
    user: {{opening: "What time is noon in Paris in Tokyo?"}}
    expect:
      actions:
        - tool: convert_time
          args: {{source_timezone: Europe/Paris, time: "12:00", target_timezone: Asia/Tokyo}}
      must_say: ["20:00"]
      check:
        - {{command: ["true"]}}
"""


@pytest.fixture(scope="module")
def time_suite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Suite]:
    root = write_suite(tmp_path_factory.mktemp("time"), {"suite.yaml": TIME_SUITE})
    with load_suite(root) as suite:
        yield suite


@pytest.mark.slow
def test_time_over_stdio_and_streamable_http(time_suite: Suite) -> None:
    assert time_suite.runtime is not None
    assert time_suite.runtime.services["time"].alive()
    converted = call(
        time_suite,
        "convert_time",
        {"source_timezone": "Europe/Paris", "time": "12:00", "target_timezone": "Asia/Tokyo"},
    )
    assert converted.is_error is False
    assert converted.content["target"]["timezone"] == "Asia/Tokyo"
    assert converted.content["target"]["datetime"].endswith("T20:00:00+09:00")
    now = call(time_suite, "get_current_time", {"timezone": "UTC"})
    assert now.content["timezone"] == "UTC"
    # a tool error (isError) over stdio: the server's own text
    bad = call(time_suite, "get_current_time", {"timezone": "Mars/Olympus_Mons"})
    assert bad.is_error and bad.error_kind == "tool_error"
    assert "Invalid timezone" in bad.content["error"]
    # the oracle and the gateway over HTTP
    result = trial(time_suite, "convert")
    assert result.outcome == "passed", result.reason


@pytest.mark.slow
def test_time_jsonrpc_error_over_stdio_and_http(time_suite: Suite) -> None:
    assert time_suite.runtime is not None
    ghost = DiscoveredTool("no_such_tool", "", {"type": "object", "properties": {}}, True)
    for backend in ("local", "remote"):
        tool = MCPTool(ghost, set(), partial(time_suite.runtime.call_mcp, backend))
        context = ToolContext(world=World(time_suite.world), seed=0)
        result = asyncio.run(tool.call({}, context))
        assert result.is_error and result.error_kind == "jsonrpc_error"
        assert result.content == {
            "error": {"code": -32602, "message": "Unknown tool: no_such_tool"}
        }


@pytest.mark.slow
def test_gateway_faults_apply_to_mcp_tools(time_suite: Suite) -> None:
    rule = FaultRule(kind="rate_limit", rate=1.0, tools=["get_current_time"])
    faults = FaultInjector(
        rules=[rule], tiers={"get_current_time": 1}, writes=frozenset(), refresh_tool=None, seed=3
    )
    transcript = Transcript()
    context = ToolContext(world=World(time_suite.world), seed=3)
    gateway = Gateway(time_suite.tools, context, transcript, Conditions(faults=faults))
    limited = asyncio.run(gateway.call("get_current_time", {"timezone": "UTC"}))
    assert limited.error_kind == "rate_limit"
    assert transcript.tool_calls()[0].fault == "rate_limit"
    clean = Gateway(time_suite.tools, context, transcript)
    assert asyncio.run(clean.call("get_current_time", {"timezone": "UTC"})).is_error is False


# ---------------------------------------------------------------- the fixture server

FIXTURE_SUITE = f"""
name: fixture
backends:
  fx:
    type: mcp
    command: [python, "{SERVER}"]
    env: [FIXTURE_ALLOWED]
    set_env: {{FIXTURE_SECRET: "from-set-env"}}
    bind: {{folder: "{{trial_dir}}"}}
    call_timeout_s: 30
tools:
  echo: {{tier: 1}}
  where: {{tier: 1}}
  refuse: {{tier: 2}}
  protocol_error: {{tier: 3}}
  crash: {{tier: 3}}
tasks:
  - id: echo
    user: {{opening: "Say hi"}}
    expect:
      actions: [{{tool: echo, args: {{text: hi}}}}]
      must_say: [{{fact: hi, source: user}}]
      check: [{{command: ["true"]}}]
  - id: crash
    user: {{opening: "Crash"}}
    expect:
      actions: [{{tool: echo, args: {{text: before}}}}, {{tool: crash}}]
      check: [{{command: ["true"]}}]
"""


@pytest.fixture(scope="module")
def fixture_suite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Suite]:
    root = write_suite(tmp_path_factory.mktemp("fixture"), {"suite.yaml": FIXTURE_SUITE})
    os.environ["FIXTURE_NOT_ALLOWED"] = "leak"
    try:
        with load_suite(root) as suite:
            yield suite
    finally:
        del os.environ["FIXTURE_NOT_ALLOWED"]


@pytest.mark.slow
def test_tool_error_and_jsonrpc_error_results(fixture_suite: Suite) -> None:
    refused = call(fixture_suite, "refuse", {"reason": "no budget"})
    assert refused == ToolResult(
        content={"error": "Error executing tool refuse: refused: no budget"},
        is_error=True,
        error_kind="tool_error",
    )
    protocol = call(fixture_suite, "protocol_error", {})
    assert protocol.error_kind == "jsonrpc_error"
    assert protocol.content == {
        "error": {
            "code": -32050,
            "message": "upstream ledger unavailable",
            "data": {"retry": False},
        }
    }


@pytest.mark.slow
def test_stdio_server_gets_only_the_allowed_environment(fixture_suite: Suite) -> None:
    agent = Scripted([("where", {})])
    trial(fixture_suite, "echo", agent)
    where = agent.results[0].content
    assert where["secret"] == "from-set-env"
    assert where["leaked"] is None
    assert where["cwd"] == str(fixture_suite.root)  # a run's server runs in the suite folder
    assert "folder" not in fixture_suite.tools["where"].schema.parameters["properties"]


@pytest.mark.slow
def test_crash_mid_trial_is_an_infra_error_with_stderr(fixture_suite: Suite) -> None:
    result = trial(fixture_suite, "crash")
    assert result.outcome == "infra_error"
    assert result.ended == "infra_error"
    assert "MCP server 'fx'" in result.reason and "closed the connection" in result.reason
    assert "fixture: fatal: ledger corrupted, exiting" in result.reason
    assert result.verdicts == []
    # the echo before the crash is in the transcript; the crashing call is not an agent error
    assert [c.name for c in result.transcript.tool_calls()] == ["echo"]
    # the run's server is started again for the next trial
    again = trial(fixture_suite, "echo")
    assert again.outcome == "passed", again.reason


# ---------------------------------------------------------------- per-trial servers, hooks

PER_TRIAL_SUITE = f"""
name: per-trial
backends:
  fx:
    type: mcp
    command: [python, "{SERVER}"]
    per_trial: true
    bind: {{folder: "{{trial_dir}}/box"}}
hooks:
  setup: {{python: "hooks.py:setup"}}
  teardown: {{command: [sh, -c, 'test "$TOOLPROOF_TASK" != bad-teardown || exit 7']}}
tools:
  note: {{tier: 1}}
  where: {{tier: 1}}
tasks:
  - id: note
    user: {{opening: "Note it"}}
    expect:
      actions: [{{tool: note, args: {{text: first}}}}]
      check:
        - {{python: "checks.py:notes_are", args: {{lines: [first]}}}}
        - {{command: [cat, box/seed.txt], stdout_contains: "seed"}}
  - id: bad-setup
    user: {{opening: "Anything"}}
    expect: {{must_say: [never]}}
  - id: bad-teardown
    user: {{opening: "Anything"}}
    expect: {{must_say: [never]}}
"""

PER_TRIAL_HOOKS = """
from pathlib import Path


def setup(trial_dir: Path, seed: int, task: str) -> None:
    if task == "bad-setup":
        raise RuntimeError("disk full")
    (trial_dir / "box").mkdir()
    (trial_dir / "box" / "seed.txt").write_text(f"seed {seed}")
"""

PER_TRIAL_CHECKS = """
from pathlib import Path


def notes_are(trial_dir: Path, lines: list[str]) -> None:
    found = (trial_dir / "box" / "notes.txt").read_text().splitlines()
    assert found == lines, f"notes are {found}"
"""


@pytest.fixture(scope="module")
def per_trial_suite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Suite]:
    root = write_suite(
        tmp_path_factory.mktemp("per-trial"),
        {"suite.yaml": PER_TRIAL_SUITE, "hooks.py": PER_TRIAL_HOOKS, "checks.py": PER_TRIAL_CHECKS},
    )
    with load_suite(root) as suite:
        yield suite


@pytest.mark.slow
def test_per_trial_server_runs_in_a_fresh_trial_dir(per_trial_suite: Suite) -> None:
    first = trial(per_trial_suite, "note", seed=5)
    assert first.outcome == "passed", first.reason
    assert [e.passed for e in first.transcript.checks()] == [True, True]
    agent = Scripted([("where", {})])
    trial(per_trial_suite, "note", agent, seed=7)
    where = agent.results[0].content
    assert Path(where["cwd"]).name.startswith("toolproof-trial-")
    assert where["files"] == ["seed.txt"]  # a fresh box: no notes from earlier trials
    assert not Path(where["cwd"]).exists()  # removed after the trial


@pytest.mark.slow
def test_setup_and_teardown_failures_are_infra_errors(per_trial_suite: Suite) -> None:
    setup = trial(per_trial_suite, "bad-setup", Scripted([]))
    assert setup.outcome == "infra_error"
    assert setup.reason == "setup hook hooks.py:setup failed: RuntimeError: disk full"
    teardown = trial(per_trial_suite, "bad-teardown", Scripted([]))
    assert teardown.outcome == "infra_error"
    assert teardown.reason.startswith("after the trial: teardown hook sh -c")
    assert "exit status 7" in teardown.reason


@pytest.mark.slow
def test_per_trial_tools_need_a_trial(per_trial_suite: Suite) -> None:
    from toolproof.errors import InfraError

    with pytest.raises(InfraError, match="server per trial"):
        call(per_trial_suite, "where", {})


# ---------------------------------------------------------------- HTTP server crash

CRASH_HTTP_SUITE = f"""
name: crash-http
services:
  fx:
    command: [python, "{SERVER}", --http, "{{port}}"]
backends:
  fx:
    type: mcp
    url: "{{services.fx.url}}/mcp"
tools:
  echo: {{tier: 1}}
tasks:
  - id: echo
    user: {{opening: "Say hi"}}
    expect:
      actions: [{{tool: echo, args: {{text: hi}}}}]
      must_say: [{{fact: hi, source: user}}]
      check: [{{command: ["true"]}}]
"""


@pytest.mark.slow
def test_http_server_that_dies_mid_run_is_an_infra_error(tmp_path: Path) -> None:
    with load_suite(write_suite(tmp_path, {"suite.yaml": CRASH_HTTP_SUITE})) as suite:
        assert trial(suite, "echo").outcome == "passed"
        assert suite.runtime is not None
        service = suite.runtime.services["fx"]
        assert service.process is not None
        service.process.kill()
        service.process.wait()
        result = trial(suite, "echo")
        assert result.outcome == "infra_error"
        assert "service 'fx' died" in result.reason
        assert "fixture server starting" in result.reason  # its log


# ---------------------------------------------------------------- load-time problems


@pytest.mark.slow
def test_unserved_tool_and_unchecked_real_actions_are_located(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    text = FIXTURE_SUITE.replace(
        "  crash: {tier: 3}\n", "  crash: {tier: 3}\n  teleport: {tier: 3}\n"
    )
    text = text.replace('      check: [{command: ["true"]}]\n  - id: crash', "  - id: crash")
    suite_path = write_suite(tmp_path, {"suite.yaml": text})
    lines = (suite_path / "suite.yaml").read_text().splitlines()
    problems = problems_of(suite_path)
    teleport = next(i for i, line in enumerate(lines, 1) if "teleport" in line)
    actions = next(i for i, line in enumerate(lines, 1) if "text: hi" in line)
    assert problems == [
        f"suite.yaml:{teleport}: tool 'teleport' not found in backend 'fx' (it has: crash, echo, "
        "note, protocol_error, refuse, where)",
        f"suite.yaml:{actions}: task 'echo': its gold actions call tools of real systems (echo), "
        "whose effects the world hash cannot see; give `check` expectations that verify the "
        "final state (a task that cannot fail proves nothing)",
    ]


@pytest.mark.slow
def test_server_that_does_not_start_is_located_with_its_stderr(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    text = FIXTURE_SUITE.replace(f'"{SERVER}"]', f'"{SERVER}", --fail-on-start]')
    problems = problems_of(write_suite(tmp_path, {"suite.yaml": text}))
    assert len(problems) == 1
    assert problems[0].startswith("suite.yaml:3: backend 'fx': MCP server 'fx' (")
    assert "failed to start" in problems[0]
    assert "fixture: cannot open ledger.db: permission denied" in problems[0]


def test_configuration_problems_are_located_before_anything_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    suite = """
    name: broken
    backends:
      a:
        type: mcp
        command: [python, server.py, "{trial_dir}"]
      b:
        type: mcp
        url: "http://127.0.0.1:9/{nope}"
        headers: {Authorization: "Bearer ${TOOLPROOF_TEST_UNSET_TOKEN}"}
    hooks:
      setup: {python: "hooks.py:missing"}
    tools:
      t: {tier: 1, backend: a}
    tasks:
      - id: t
        user: {opening: hi}
        expect:
          must_say: [x]
          check:
            - {command: [ls, "{trial_dir}", "{colour}"]}
            - {python: "checks.py:ok", args: {trial_dir: x}}
    """
    both = suite.replace(
        "    hooks:",
        "      c:\n        type: mcp\n        command: [x]\n        url: http://x\n    hooks:",
    )
    checks = "def ok(trial_dir, seed):\n    return True\n"
    root = write_suite(tmp_path, {"suite.yaml": both, "hooks.py": "", "checks.py": checks})
    assert problems_of(root) == [
        "suite.yaml:10: backends.c: Value error, give exactly one of 'command' (stdio) or "
        "'url' (streamable HTTP)",
    ]
    write_suite(tmp_path, {"suite.yaml": suite})
    assert problems_of(root) == [
        "suite.yaml:5: unknown placeholder '{trial_dir}' here (known: {python}, {suite_dir})",
        "suite.yaml:8: unknown placeholder '{nope}' here (known: {python}, {suite_dir})",
        "suite.yaml:9: environment variable TOOLPROOF_TEST_UNSET_TOKEN is not set",
        "suite.yaml:11: no function 'missing' in hooks.py",
        "suite.yaml:20: unknown placeholder '{colour}' here (known: {python}, {seed}, "
        "{suite_dir}, {task}, {trial_dir}, {trial_id})",
        "suite.yaml:21: args trial_dir: these names are filled in by toolproof",
    ]


# ---------------------------------------------------------------- the check grader


@pytest.mark.slow
def test_recorded_checks_grade_without_the_live_system(git_suite: Suite) -> None:
    task = git_suite.task("create-feature-branch")
    transcript = Transcript()
    transcript.say("user", "Create a branch")
    transcript.add(
        CheckEvent(t=1.0, index=0, name="checks.py:branch_at", passed=True, message="holds")
    )
    world = World(git_suite.start_state(task))
    judged = judge(git_suite, task, transcript, world, world.hash(), None, "user_done")
    assert judged.outcome == "failed"
    assert judged.reason == "check: still on main: not run"
    checks = [(v.grader, v.passed) for v in judged.verdicts if v.grader == "check"]
    assert checks == [("check", True), ("check", False)]
    transcript.add(CheckEvent(t=1.1, index=1, name="still on main", passed=True))
    judged = judge(git_suite, task, transcript, world, world.hash(), None, "user_done")
    assert [v.grader for v in judged.verdicts if not v.passed] == []
    assert judged.outcome == "passed"


def test_python_is_the_running_interpreter() -> None:
    from toolproof.runtime.processes import program

    assert program(["python", "-m", "x"]) == [sys.executable, "-m", "x"]
    assert program(["uvx", "python"]) == ["uvx", "python"]
