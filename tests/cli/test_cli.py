"""The command line, run as a user runs it: exit 0 ok, 1 fell short, 2 bad input.

Every command is a subprocess of the installed console script; each costs about a second of
imports, so the runs that several tests read are made once per module.
"""

from __future__ import annotations

import inspect
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from support import MINI_TOOLS, SOUND, SPEC_FIXTURE, line_with, make_suite

from toolproof.store.journal import Store

# Slow: every test here runs the CLI as a process.
pytestmark = pytest.mark.slow

CLI = Path(sys.executable).parent / "toolproof"
FIXTURE = SPEC_FIXTURE
RUN_ID = re.compile(r"\b\d{8}-\d{6}-[0-9a-f]{6}\b")


def toolproof(*args: str | Path, cwd: Path, columns: int = 200) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": str(columns), "NO_COLOR": "1"}
    result = subprocess.run(
        [str(CLI), *map(str, args)], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )
    assert "Traceback" not in result.stdout + result.stderr, result.stderr
    return result


def with_task(task: str) -> str:
    """The mini suite.yaml with one more inline task (YAML list item) before `status`."""
    marker = "  - id: status\n"
    assert SOUND.count(marker) == 1
    return SOUND.replace(marker, task + marker)


# ---------------------------------------------------------------- schema


@pytest.mark.parametrize(("kind", "field"), [("suite", "tasks"), ("task", "expect")])
def test_schema_prints_json_schema(tmp_path: Path, kind: str, field: str) -> None:
    result = toolproof("schema", kind, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    schema = json.loads(result.stdout)
    assert schema["type"] == "object"
    assert field in schema["properties"]
    assert schema["additionalProperties"] is False
    assert "$defs" in schema


def test_schema_of_unknown_kind_exits_2(tmp_path: Path) -> None:
    result = toolproof("schema", "world", cwd=tmp_path)
    assert result.returncode == 2
    assert "use 'suite' or 'task'" in result.stderr


# ---------------------------------------------------------------- validate


def test_validate_sound_suite_exits_0_with_a_row_per_task(tmp_path: Path) -> None:
    make_suite(tmp_path)
    result = toolproof("validate", ".", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    rows = {line.split()[1]: line for line in result.stdout.splitlines() if line.startswith("│")}
    assert set(rows) == {"cancel", "status"}
    assert re.search(r"│ cancel\s+│ 2\s+│ passed\s+│ all 10 failed\s+│", rows["cancel"])
    assert re.search(r"│ status\s+│ 1\s+│ passed\s+│ all 9 failed \(1 n/a\)\s+│", rows["status"])
    assert "suite 'mini' is sound: 2 tasks checked" in result.stdout


def test_validate_reports_task_the_null_agent_passes(tmp_path: Path) -> None:
    text = with_task(
        "  - id: forbid-only\n"
        '    user: {opening: "Where is order B?"}\n'
        "    expect:\n"
        "      forbidden_calls: [{tool: cancel_order}]\n"
    )
    make_suite(tmp_path, {"suite.yaml": text})
    result = toolproof("validate", ".", cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    line = line_with(text, "- id: forbid-only")
    assert f"suite.yaml:{line}: task 'forbid-only': the null agent passes it" in result.stderr
    assert "1 of 3 tasks are unsound" in result.stderr


def test_validate_reports_task_the_oracle_fails(tmp_path: Path) -> None:
    # confirm_before_write holds, the gold action writes, and this user never says yes
    text = with_task(
        "  - id: never-confirms\n"
        '    user: {opening: "Cancel order A please"}\n'
        "    expect:\n"
        "      actions: [{tool: cancel_order, args: {order_id: A}}]\n"
    )
    make_suite(tmp_path, {"suite.yaml": text})
    result = toolproof("validate", ".", cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    line = line_with(text, "- id: never-confirms")
    assert f"suite.yaml:{line}: task 'never-confirms': the oracle agent fails it" in result.stderr
    assert "1 of 3 tasks are unsound" in result.stderr


def test_validate_reports_gold_action_that_returns_a_tool_error(tmp_path: Path) -> None:
    text = with_task(
        "  - id: missing-order\n"
        '    user: {opening: "Where is order Z?"}\n'
        "    expect:\n"
        "      actions: [{tool: get_order, args: {order_id: Z}}]\n"
        "      must_say: [unknown]\n"
    )
    make_suite(tmp_path, {"suite.yaml": text})
    result = toolproof("validate", ".", cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    line = line_with(text, "- id: missing-order")
    assert (
        f"suite.yaml:{line}: task 'missing-order': gold action 1 get_order failed" in result.stderr
    )
    assert "no order Z" in result.stderr
    assert "1 of 3 tasks are unsound" in result.stderr


def test_validate_reports_gold_actions_that_leave_a_different_world_each_time(
    tmp_path: Path,
) -> None:
    # A ticket id drawn from the tool's seed: the gold replay's world is never the same twice,
    # so no trial (which gets a seed of its own) could match it.
    tools = (
        MINI_TOOLS
        + textwrap.dedent('''

        @tool(write=True)
        def open_ticket(world: World, order_id: str, context: ToolContext) -> dict:
            """Open a support ticket about an order.

            Args:
                order_id: The order id.
            """
            ticket = {"order_id": order_id, "id": f"T{context.seed % 100000}"}
            world["orders"][order_id]["ticket"] = ticket
            return ticket
        ''')
    ).replace("from toolproof.tools import", "from toolproof.tools import ToolContext,")
    text = with_task(
        "  - id: ticket\n"
        '    user: {opening: "Open a ticket about order A",\n'
        '           replies: [{when: asks_confirmation, say: "Yes."}]}\n'
        "    expect:\n"
        "      actions: [{tool: open_ticket, args: {order_id: A}}]\n"
    ).replace(
        "  cancel_order: {tier: 3, weight: 0.3}",
        "  cancel_order: {tier: 3, weight: 0.3}\n  open_ticket: {tier: 3, weight: 0.1}",
    )
    make_suite(tmp_path, {"suite.yaml": text, "tools.py": tools})
    result = toolproof("validate", ".", cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    line = line_with(text, "- id: ticket")
    assert f"suite.yaml:{line}: task 'ticket': gold actions leave a different world" in (
        result.stderr
    )
    assert "/orders/A/ticket: expected {'order_id': 'A', 'id': 'T" in result.stderr


# ---------------------------------------------------------------- run, runs, show


class Ran:
    """A finished command: its result and the JSON summary it wrote."""

    def __init__(self, result: subprocess.CompletedProcess[str], summary: dict[str, Any]):
        self.result = result
        self.summary = summary


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One store with: the oracle run twice (same command), then the null agent once."""
    root = make_suite(tmp_path_factory.mktemp("cli-runs") / "suite")
    store = root.parent / "runs.db"
    out: dict[str, Any] = {"root": root, "store": store}
    for name, agent in (("oracle", "oracle"), ("oracle-again", "oracle"), ("null", "null")):
        path = root.parent / f"{agent}.json"  # the very same command line, twice for the oracle
        path.unlink(missing_ok=True)
        command: list[str | Path] = ["run", ".", "--agent", agent, "--store", store, "--json", path]
        result = toolproof(*command, "--fail-under", "pass^1=0.5", cwd=root)
        out[name] = Ran(result, json.loads(path.read_text()) if path.exists() else {})
    return out


def test_run_with_oracle_passes_fail_under_and_exits_0(runs: dict[str, Any]) -> None:
    ran: Ran = runs["oracle"]
    assert ran.result.returncode == 0, ran.result.stdout + ran.result.stderr
    assert f"run {ran.summary['run_id']}: 0 of 6 trials done" in ran.result.stdout
    assert "fail-under" not in ran.result.stdout


def test_run_json_has_counts_metrics_and_tasks(runs: dict[str, Any]) -> None:
    summary = runs["oracle"].summary
    assert RUN_ID.fullmatch(summary["run_id"])
    assert summary["counts"] == {"passed": 6, "failed": 0, "infra_error": 0, "total": 6}
    metrics = summary["metrics"]
    for name in ("pass@1", "pass^1", "pass@3", "pass^3", "pass^3_strict", "reliability_tax@3"):
        assert metrics[name] == (0.0 if name.startswith("reliability_tax") else 1.0), name
    assert [t["id"] for t in summary["tasks"]] == ["cancel", "status"]
    for task in summary["tasks"]:
        assert (task["trials"], task["passed"]) == (3, 3)
        assert task["metrics"]["pass^3"] == 1.0


def test_run_with_null_agent_falls_short_of_fail_under_and_exits_1(
    runs: dict[str, Any],
) -> None:
    ran: Ran = runs["null"]
    assert ran.result.returncode == 1, ran.result.stdout + ran.result.stderr
    assert "fail-under: pass^1 = 0.0000 is below 0.5" in ran.result.stdout
    assert ran.summary["counts"] == {"passed": 0, "failed": 6, "infra_error": 0, "total": 6}
    assert ran.summary["metrics"]["pass@1"] == 0.0


def test_same_command_after_a_finished_run_starts_a_new_run(runs: dict[str, Any]) -> None:
    first, again = runs["oracle"].summary["run_id"], runs["oracle-again"].summary["run_id"]
    assert first != again
    assert f"run {again}: 0 of 6 trials done" in runs["oracle-again"].result.stdout
    listed = toolproof("runs", "--store", runs["store"], cwd=runs["root"])
    assert listed.returncode == 0, listed.stderr
    ids = RUN_ID.findall(listed.stdout)
    assert sorted(ids) == sorted({first, again, runs["null"].summary["run_id"]})
    assert ids[-2:] == [again, first], "newest first"


def test_show_recomputes_a_stored_run_at_another_k(runs: dict[str, Any], tmp_path: Path) -> None:
    run_id = runs["oracle"].summary["run_id"]
    path = tmp_path / "shown.json"
    result = toolproof(
        "show", run_id, "--k", "1", "--store", runs["store"], "--json", path, cwd=runs["root"]
    )
    assert result.returncode == 0, result.stderr
    assert run_id in result.stdout
    shown = json.loads(path.read_text())
    assert shown["run_id"] == run_id
    assert shown["counts"] == runs["oracle"].summary["counts"]
    assert "pass^1" in shown["metrics"]
    assert "pass^3" not in shown["metrics"]


def test_fail_under_takes_every_metric_the_gate_takes(runs: dict[str, Any]) -> None:
    """--fail-under is the gate's `min`: one grammar, so a named metric like the Reliability
    Score is held to a floor too (and a condition metric no run measured fails it)."""
    show = ["show", runs["null"].summary["run_id"], "--store", runs["store"], "--fail-under"]
    low = toolproof(*show, "reliability_score=0.5", cwd=runs["root"])
    assert low.returncode == 1, low.stdout + low.stderr
    assert "fail-under: reliability_score = 0.0000 (1 of 4 parts) is below 0.5" in low.stdout
    assert "note: Reliability Score built from pass^k alone" in low.stdout
    cheap = toolproof(*show, "tool_calls_per_trial=0", cwd=runs["root"])
    assert cheap.returncode == 0, cheap.stdout + cheap.stderr
    unmeasured = toolproof(*show, "drift_robustness=0.1", cwd=runs["root"])
    assert unmeasured.returncode == 1
    assert "fail-under: drift_robustness was not measured in this run" in unmeasured.stdout


def test_show_unknown_run_exits_2_naming_it(runs: dict[str, Any]) -> None:
    result = toolproof("show", "nosuchrun", "--store", runs["store"], cwd=runs["root"])
    assert result.returncode == 2
    assert "no run 'nosuchrun'" in result.stderr


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--fail-under", "nonsense"], "--fail-under 'nonsense': expected METRIC=VALUE"),
        (["--fail-under", "bogus_metric=0.5"], "--fail-under bogus_metric: unknown metric"),
        (["--k", "9"], "k=9 needs at least 9 trials per task"),
        (["--k", "two"], "--k 'two': expected positive integers"),
        (["--agent", "nosuch"], "--agent 'nosuch': unknown agent"),
        (["--tasks", "unknown-id"], "--tasks: no task id or tag 'unknown-id'"),
        (["--infra-errors", "ignore"], "--infra-errors 'ignore': use 'fail' or 'exclude'"),
    ],
    ids=[
        "threshold-syntax",
        "unknown-metric",
        "k-above-trials",
        "k-syntax",
        "agent",
        "tasks",
        "infra",
    ],
)
def test_run_with_bad_option_exits_2_with_a_message(
    tmp_path: Path, args: list[str], said: str
) -> None:
    make_suite(tmp_path)
    result = toolproof("run", ".", "--store", tmp_path / "runs.db", *args, cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert said in result.stderr


def test_run_without_suite_or_resume_exits_2(tmp_path: Path) -> None:
    result = toolproof("run", "--store", tmp_path / "runs.db", cwd=tmp_path)
    assert result.returncode == 2
    assert "give a SUITE folder, or --resume RUN_ID" in result.stderr


def test_runs_prints_whole_run_ids_in_a_narrow_terminal(runs: dict[str, Any]) -> None:
    listed = toolproof("runs", "--store", runs["store"], cwd=runs["root"], columns=80)
    assert runs["oracle"].summary["run_id"] in listed.stdout


def test_run_refused_for_a_failing_gold_action_leaves_no_run(tmp_path: Path) -> None:
    text = with_task(
        "  - id: missing-order\n"
        '    user: {opening: "Where is order Z?"}\n'
        "    expect:\n"
        "      actions: [{tool: get_order, args: {order_id: Z}}]\n"
    )
    make_suite(tmp_path, {"suite.yaml": text})
    store = tmp_path / "runs.db"
    result = toolproof("run", ".", "--store", store, cwd=tmp_path)
    assert result.returncode == 2
    line = line_with(text, "- id: missing-order")
    assert f"suite.yaml:{line}: gold action 1 get_order failed" in result.stderr
    assert Store(str(store)).runs() == []


# ---------------------------------------------------------------- reading a missing store


@pytest.mark.parametrize(
    "args",
    [
        ["show", "R1"],
        ["runs"],
        ["regrade", "R1"],
        ["report", "R1", "-o", "report.html"],
        ["gate", "R1"],
        ["compare", "R1", "R2"],
        ["verify", "R1"],
    ],
)
def test_commands_that_read_results_never_create_a_store(tmp_path: Path, args: list[str]) -> None:
    missing = tmp_path / "typo.db"
    result = toolproof(*args, "--store", missing, cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"no results store at {missing}" in result.stdout + result.stderr
    assert not missing.exists()


@pytest.mark.parametrize("command", [[], ["run"], ["gate"], ["import"]])
def test_help_at_80_columns_shows_every_option_name_whole(
    tmp_path: Path, command: list[str]
) -> None:
    result = toolproof(*command, "--help", cwd=tmp_path, columns=80)
    assert result.returncode == 0, result.stderr
    assert "…" not in result.stdout
    assert max(len(line) for line in result.stdout.splitlines()) <= 80
    if command == ["run"]:
        assert "--parallel-tool-calls / --no-parallel-tool-calls" in result.stdout


def test_every_option_of_run_is_declared_in_the_options_module() -> None:
    """`toolproof run` parses, builds its configuration and renders: its options are declared
    once, in cli/options.py, beside those the other commands share."""
    from toolproof.cli import options
    from toolproof.cli.suite import run

    declared = [p.annotation for p in inspect.signature(run).parameters.values()]
    assert len(declared) > 30
    assert [name for name in declared if not hasattr(options, name)] == []
