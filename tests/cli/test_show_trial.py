"""`toolproof show RUN --task ID`: one stored trial in the terminal (its messages, its tool
calls with what came back and the faults injected into them, its verdicts with their
reasons), its whole record with --json, and a located line for a task or trial the run does
not hold."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from stored import stored_run, toolproof_ci
from support import MINI_FILES, write_files

from toolproof.report.trial import RESULT_CHARS, cut
from toolproof.store.journal import Store

# Looks order A up (the lookup meets an injected 503), then cancels it without asking; asks
# again for order B after the 503 and answers.
HASTY = """
tasks:
  cancel:
    - tool_calls: [{name: get_order, arguments: {order_id: A}}]
    - tool_calls: [{name: cancel_order, arguments: {order_id: A}}]
    - text: "Order A is cancelled."
  status:
    - tool_calls: [{name: get_order, arguments: {order_id: B}}]
    - tool_calls: [{name: get_order, arguments: {order_id: B}}]
    - text: "Order B has shipped."
"""
FLAKY = """
faults:
  profiles:
    flaky:
      - {kind: server_error, tools: [get_order], rate: 1.0, max_per_trial: 1}
"""


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run of the mini suite under the flaky profile, two trials per task; its store."""
    root = tmp_path_factory.mktemp("show")
    files = {**MINI_FILES, "suite.yaml": MINI_FILES["suite.yaml"] + FLAKY}
    suite = write_files(root / "mini", files)
    agent = write_files(root, {"hasty.yaml": HASTY}) / "hasty.yaml"
    store = root / "runs.db"
    done = toolproof_ci(
        "run", suite, "--agent", f"scripted:{agent}", "--faults", "flaky", "--trials", "2",
        "--k", "1", "--store", store, "--time-scale", "0.01",
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return store


def show(store: Path, *flags: str | Path) -> tuple[int, str]:
    done = toolproof_ci("show", "latest", "--store", store, *flags)
    return done.returncode, done.stdout + done.stderr


@pytest.mark.slow
def test_show_task_prints_the_first_failed_trial_turn_by_turn(stored: Path) -> None:
    code, out = show(stored, "--task", "cancel", "--variant", "faults:flaky")
    assert code == 0, out
    assert "cancel · trial 0 (of 0, 1; the first that did not pass) · faults:flaky" in out
    assert "failed: confirm_before_write: cancel_order called without the user's" in out
    lines = [line.strip() for line in out.splitlines()]
    user = next(i for i, line in enumerate(lines) if "user   Please call off order A" in line)
    call = next(i for i, line in enumerate(lines) if 'get_order(order_id="A")' in line)
    assert lines[call + 1] == "⚡ fault injected: server_error"
    assert lines[call + 2].startswith("✗ server_error:") and "503" in lines[call + 2]
    cancel = next(i for i, line in enumerate(lines) if 'cancel_order(order_id="A")' in line)
    assert lines[cancel + 1].startswith('→ {"status": "cancelled"')
    reply = next(i for i, line in enumerate(lines) if "agent  Order A is cancelled." in line)
    assert user < call < cancel < reply
    assert "✗ │ confirm_before_write │ cancel_order called without the user's confirmation" in out
    assert "/orders/A/status" in out  # what it changed
    assert "to blame: agent" in out


@pytest.mark.slow
def test_show_task_takes_the_trial_asked_for(stored: Path) -> None:
    code, out = show(stored, "--task", "status", "--trial", "1", "--variant", "faults:flaky")
    assert code == 0, out
    assert "status · trial 1 (of 0, 1) · faults:flaky" in out
    assert "passed" in out and "✓ │ must_say" in out


@pytest.mark.slow
def test_show_task_json_writes_the_raw_record(stored: Path, tmp_path: Path) -> None:
    out = tmp_path / "trial.json"
    code, text = show(stored, "--task", "cancel", "--trial", "1", "--json", out)
    assert code == 0, text
    record = json.loads(out.read_text())
    assert (record["task_id"], record["trial"], record["variant"]) == ("cancel", 1, "faults:flaky")
    calls = [e for e in record["transcript"]["events"] if e["type"] == "tool_call"]
    assert [c["name"] for c in calls] == ["get_order", "cancel_order"]
    assert calls[0]["fault"] == "server_error"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("flags", "line"),
    [
        (["--task", "refund"], "error: --task refund: run {run} has no such task (tasks: "
         "cancel, status)"),
        (["--task", "cancel", "--trial", "2"], "error: --trial 2: task cancel has trials 0, 1 "
         "in run {run}"),
        (["--task", "cancel", "--variant", "clean"], "error: --variant clean: run {run} has "
         "faults:flaky for this task"),
        (["--trial", "1"], "error: --trial needs --task ID: it picks a trial of one task"),
        (["--task", "cancel", "--k", "2"], "error: --k is for the run's summary; --task shows "
         "one trial"),
    ],
)  # fmt: skip
def test_what_the_run_does_not_hold_is_one_line_exit_2(
    stored: Path, flags: list[str], line: str
) -> None:
    code, out = show(stored, *flags)
    assert code == 2
    run = Store(str(stored)).resolve("latest")
    assert out.strip() == line.format(run=run)


def test_a_long_result_is_cut_with_how_much_was_left_out() -> None:
    result = {"orders": [{"id": f"W{i:05d}", "status": "delivered"} for i in range(40)]}
    text = json.dumps(result, ensure_ascii=False)
    shown = cut(result)
    assert shown.startswith(text[:RESULT_CHARS])
    assert shown.endswith(f"… ({len(text) - RESULT_CHARS:,} more characters in --json)")
    assert cut({"id": "W1"}) == '{"id": "W1"}'


@pytest.mark.slow
def test_a_trial_never_graded_says_how_it_ended(tmp_path: Path) -> None:
    store = Store(str(tmp_path / "runs.db"))
    stored_run(store, {"cancel": "PI"})
    code, out = show(tmp_path / "runs.db", "--task", "cancel")
    assert code == 0, out
    assert "cancel · trial 1 (of 0, 1; the first that did not pass)" in out
    assert "infra error: provider: 503 overloaded" in out
    assert "not graded: the trial ended as infra error before grading" in out
