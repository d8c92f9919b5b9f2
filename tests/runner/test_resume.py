"""A run killed with SIGKILL resumes: nothing finished is lost or run twice; a run that is
still going is never run by a second process at the same time."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from support import write_files

# Slow: runs killed and resumed: the CLI as a process.
pytestmark = pytest.mark.slow

CLI = str(Path(sys.executable).parent / "toolproof")
SLOW_SCRIPT = """
latency_s: 0.05
default:
  - tool_calls: [{name: get_order, arguments: {order_id: B}}]
  - text: "Order B has shipped."
"""


def trial_keys(db: Path) -> list[tuple[str, int]]:
    try:
        with sqlite3.connect(db) as conn:
            return [(t, i) for t, i in conn.execute("SELECT task_id, trial FROM trials")]
    except sqlite3.OperationalError:  # the run has not created its tables yet
        return []


def test_resume_after_sigkill_runs_each_trial_once(mini_dir: Path, tmp_path: Path) -> None:
    script = write_files(tmp_path, {"slow.yaml": SLOW_SCRIPT}) / "slow.yaml"
    db = tmp_path / "runs.db"
    command = [
        CLI,
        "run",
        str(mini_dir),
        "--agent",
        f"scripted:{script}",
        "--trials",
        "30",
        "--k",
        "1,5",
        "--concurrency",
        "2",
        "--store",
        str(db),
    ]
    victim = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if db.exists() and len(trial_keys(db)) >= 10:
            break
        time.sleep(0.05)
    victim.send_signal(signal.SIGKILL)
    victim.wait()
    before = trial_keys(db)
    assert 10 <= len(before) < 60, "the run must be killed part-way"

    resumed = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    assert "resuming" in resumed.stdout
    assert f"{len(before)} of 60 trials done" in resumed.stdout
    # the last progress line counts the trials done before the kill too, as the summary does
    with sqlite3.connect(db) as conn:
        passed = conn.execute("SELECT count(*) FROM trials WHERE outcome = 'passed'").fetchone()[0]
    assert f"60/60 trials: {passed} passed" in resumed.stdout

    after = Counter(trial_keys(db))
    assert len(after) == 60
    assert set(after.values()) == {1}
    assert set(before) <= set(after)
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*), min(status) FROM runs").fetchone() == (1, "finished")


def test_a_second_identical_run_is_refused_while_the_first_goes(
    mini_dir: Path, tmp_path: Path
) -> None:
    # A first run of about a minute: long enough that the second command (which may take
    # many seconds to start on a loaded machine) finds it still going.
    slower = SLOW_SCRIPT.replace("latency_s: 0.05", "latency_s: 1.0")
    script = write_files(tmp_path, {"slow.yaml": slower}) / "slow.yaml"
    db = tmp_path / "runs.db"
    command = [CLI, "run", str(mini_dir), "--agent", f"scripted:{script}", "--trials", "30"]
    command += ["--k", "1", "--store", str(db)]
    first = subprocess.Popen(
        [*command, "--concurrency", "2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and len(trial_keys(db)) < 2:
        time.sleep(0.05)
    assert first.poll() is None, "the first run must still be going"

    second = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert first.poll() is None, "the first run must still be going"
    assert second.returncode == 2, second.stdout + second.stderr
    [line] = second.stderr.strip().splitlines()
    assert f"is being run right now by process {first.pid}" in line
    with sqlite3.connect(db) as conn:
        [(run_id,)] = conn.execute("SELECT id FROM runs").fetchall()
    regrade = subprocess.run(
        [CLI, "regrade", run_id, "--store", str(db)], capture_output=True, text=True, timeout=120
    )
    assert regrade.returncode == 2 and f"by process {first.pid}" in regrade.stderr

    # Killed, the run is free at once on its host: the same command finishes it, each trial
    # once, and lets go of its lease when it is done.
    first.kill()
    first.communicate(timeout=60)
    done = subprocess.run(
        [*command, "--concurrency", "30"], capture_output=True, text=True, timeout=180
    )
    assert done.returncode == 0, done.stderr
    assert "resuming" in done.stdout
    after = Counter(trial_keys(db))
    assert len(after) == 60 and set(after.values()) == {1}
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*), min(status) FROM runs").fetchone() == (1, "finished")
        assert conn.execute("SELECT count(*) FROM run_leases").fetchone() == (0,)
