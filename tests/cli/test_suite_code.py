"""A suite's own Python code that hangs or tries to end the process: a tool that never
returns, calls sys.exit or os._exit, or raises KeyboardInterrupt ends its trial as failed
(the environment's fault) and the run goes on; a module that does so at import is a located
suite error; a thread a module leaves running never keeps the command alive."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from stored import toolproof_ci
from support import SOUND, edit, make_suite

from toolproof.store.journal import Store

# Slow: every test here runs the CLI as a process.
pytestmark = pytest.mark.slow

MISBEHAVIOURS = {
    "hangs": "    while True:\n        pass\n",
    "sleeps": "    import time\n\n    time.sleep(3600)\n",
    "sys-exit": "    raise SystemExit(5)\n",
    "os-exit": "    import os\n\n    os._exit(3)\n",
    "ctrl-c": "    raise KeyboardInterrupt\n",
}
REASONS = {
    "hangs": "get_order did not return within 0.5 s (its timeout_s)",
    "sleeps": "get_order did not return within 0.5 s (its timeout_s)",
    "sys-exit": "get_order called sys.exit(5) (at tools.py:13)",
    "os-exit": "get_order called os._exit(3) (at tools.py:15)",
    "ctrl-c": "get_order raised KeyboardInterrupt (at tools.py:13)",
}
ASK_FOR_C = """
default:
  - tool_calls: [{name: get_order, arguments: {order_id: C}}]
  - text: "Order C is lost."
"""


def misbehaving_tools(root: Path, how: str) -> str:
    """The fixture's tools.py with get_order misbehaving for order C (the gold actions ask
    for A and B only, so the suite itself loads)."""
    tools = (root / "tools.py").read_text()
    head, sep, rest = tools.partition('        order_id: The order id.\n    """\n')
    assert sep, "the fixture's get_order docstring moved"
    body = MISBEHAVIOURS[how].replace("\n", "\n    ").rstrip(" ")
    return head + sep + '    if order_id == "C":\n    ' + body + rest


@pytest.mark.parametrize("how", list(MISBEHAVIOURS))
def test_a_tool_that_hangs_or_ends_the_process_fails_its_trial_and_the_run_goes_on(
    tmp_path: Path, how: str
) -> None:
    root = make_suite(tmp_path, {"ask-c.yaml": ASK_FOR_C})
    suite = edit(SOUND, "module: tools.py}", "module: tools.py, timeout_s: 0.5}")
    make_suite(root, {"suite.yaml": suite, "tools.py": misbehaving_tools(root, how)})
    command = ["run", ".", "--agent", "scripted:ask-c.yaml", "--trials", "2", "--k", "1"]
    result = toolproof_ci(*command, "--store", "runs.db", "--json", "out.json", cwd=root)
    assert result.returncode == 0, result.stdout + result.stderr
    assert json.loads((root / "out.json").read_text())["counts"]["failed"] == 4
    [run] = Store(str(root / "runs.db")).runs()
    for _, trial in Store(str(root / "runs.db")).results(run["id"]):
        assert trial.outcome == "failed" and trial.ended == "tool_crashed"
        assert trial.reason == f"tool_crashed: {REASONS[how]}"
        assert trial.blame is not None
        assert (trial.blame.party, trial.blame.rule) == ("environment", "tool_crashed")
        [call] = trial.transcript.tool_calls()
        assert (call.is_error, call.error_kind) == (True, "exception")


def test_a_tool_s_own_timeout_wins_over_its_backend_s(tmp_path: Path) -> None:
    root = make_suite(tmp_path, {"ask-c.yaml": ASK_FOR_C})
    tools = misbehaving_tools(root, "sleeps").replace("@tool\n", "@tool(timeout_s=0.2)\n", 1)
    make_suite(root, {"tools.py": tools})
    command = ["run", ".", "--agent", "scripted:ask-c.yaml", "--trials", "1", "--k", "1"]
    assert toolproof_ci(*command, "--store", "runs.db", cwd=root).returncode == 0
    [run] = Store(str(root / "runs.db")).runs()
    reasons = {t.reason for _, t in Store(str(root / "runs.db")).results(run["id"])}
    assert reasons == {"tool_crashed: get_order did not return within 0.2 s (its timeout_s)"}


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ("import os\n\nos._exit(0)\n", "tools.py:3: cannot import: it calls os._exit(0)"),
        ("raise KeyboardInterrupt\n", "tools.py:1: cannot import: it raises KeyboardInterrupt"),
    ],
)
def test_a_module_that_ends_the_process_at_import_is_a_located_error(
    tmp_path: Path, line: str, said: str
) -> None:
    tools = (make_suite(tmp_path) / "tools.py").read_text()
    make_suite(tmp_path, {"tools.py": line + tools})
    result = toolproof_ci("validate", ".", cwd=tmp_path, timeout=60)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [said, "1 problem(s)"]


@pytest.mark.parametrize("command", ["validate", "run"])
def test_a_thread_a_tool_module_leaves_running_keeps_no_command_alive(
    tmp_path: Path, command: str
) -> None:
    started = (
        "import threading\nimport time\n\n"
        "threading.Thread(target=time.sleep, args=(3600,)).start()\n"
    )
    tools = (make_suite(tmp_path) / "tools.py").read_text()
    make_suite(tmp_path, {"tools.py": started + tools})
    args = ["--agent", "oracle", "--store", "runs.db"] if command == "run" else []
    try:
        result = toolproof_ci(command, ".", *args, cwd=tmp_path, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{command} waited for the module's thread")
    assert result.returncode == 0, result.stderr
