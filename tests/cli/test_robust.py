"""The command line under bad stores, bad outputs, pipes, Ctrl-C and broken suite files: one
located line and exit 2 (130 for Ctrl-C), never a traceback, nothing lost or written where it
must not be. And runs named by the start of their id or `latest`, listed with their
conditions."""

from __future__ import annotations

import gzip
import json
import os
import pstats
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from stored import toolproof_ci
from support import SOUND, edit, make_suite

from toolproof.store.journal import Store

# Slow: every test here runs the CLI as a process.
pytestmark = pytest.mark.slow

CLI = Path(sys.executable).parent / "toolproof"
RUN_ID = re.compile(r"\b\d{8}-\d{6}-[0-9a-f]{6}\b")
FAULTS = """
faults:
  profiles:
    flaky:
      - {kind: server_error, rate: 1.0, max_per_trial: 1}
"""
SLOW_SCRIPT = """
latency_s: 0.05
default:
  - tool_calls: [{name: get_order, arguments: {order_id: B}}]
  - text: "Order B has shipped."
"""


def one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    """The command's error: exactly one line on stderr."""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A store with a clean run and a run under a fault profile (in that order)."""
    root = make_suite(tmp_path_factory.mktemp("robust") / "suite", {"suite.yaml": SOUND + FAULTS})
    store = root.parent / "runs.db"
    ids = []
    for extra in ([], ["--faults", "flaky"]):
        ran = toolproof_ci(
            "run", ".", "--agent", "retrying-oracle", "--store", store, *extra, cwd=root
        )
        assert ran.returncode == 0, ran.stdout + ran.stderr
        ids.append(RUN_ID.findall(ran.stdout)[0])
    return {"root": root, "store": store, "clean": ids[0], "faults": ids[1]}


# ---------------------------------------------------------------- stores that cannot be used


@pytest.mark.parametrize(
    "args",
    [
        ["run", "."],
        ["show", "latest"],
        ["runs"],
        ["report", "latest", "-o", "r.html"],
        ["gate", "latest", "--min", "pass@1=0.5"],
        ["verify", "latest"],
        ["regrade", "latest"],
    ],
    ids=["run", "show", "runs", "report", "gate", "verify", "regrade"],
)
def test_a_file_that_is_not_a_database_is_one_line_and_exit_2(
    tmp_path: Path, args: list[str]
) -> None:
    make_suite(tmp_path)
    notes = tmp_path / "notes.db"
    notes.write_text("not a database\n")
    result = toolproof_ci(*args, "--store", notes, cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert one_error_line(result).endswith("file is not a database")
    assert notes.read_text() == "not a database\n"


def test_a_damaged_store_is_left_as_it_was(tmp_path: Path) -> None:
    make_suite(tmp_path)
    db = tmp_path / "runs.db"
    for _ in range(4):
        ran = toolproof_ci("run", ".", "--agent", "oracle", "--store", db, "--fresh", cwd=tmp_path)
        assert ran.returncode == 0, ran.stderr
    with sqlite3.connect(db) as conn:
        ids = [run_id for (run_id,) in conn.execute("SELECT id FROM runs")]
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
    with db.open("r+b") as file:  # pages in the middle overwritten, as a failing disk would
        file.seek(4096 * (pages // 2))
        file.write(b"\xa5" * 4096 * 2)
    before = db.read_bytes()
    again = toolproof_ci("run", ".", "--agent", "oracle", "--store", db, "--fresh", cwd=tmp_path)
    assert again.returncode == 2
    assert "is damaged" in one_error_line(again) and "nothing was written" in again.stderr
    verified = [toolproof_ci("verify", run_id, "--store", db, cwd=tmp_path) for run_id in ids]
    failed = [v for v in verified if v.returncode == 2]
    assert failed, "reading every trial of every run meets the damage"
    assert all(one_error_line(v).startswith("error: ") for v in failed)
    assert db.read_bytes() == before


# ---------------------------------------------------------------- checked before the run


@pytest.mark.parametrize("flag", ["--faults", "--drift"])
def test_an_unknown_condition_leaves_no_run(tmp_path: Path, flag: str) -> None:
    make_suite(tmp_path)
    db = tmp_path / "runs.db"
    result = toolproof_ci(
        "run", ".", "--agent", "oracle", flag, "nosuch", "--store", db, cwd=tmp_path
    )
    assert result.returncode == 2
    assert f"{flag} nosuch: no such" in one_error_line(result)
    assert Store(str(db)).runs() == []


def test_an_unwritable_output_of_a_run_is_refused_before_the_run(tmp_path: Path) -> None:
    make_suite(tmp_path)
    (tmp_path / "file.txt").write_text("a file, not a folder")
    db, out = tmp_path / "runs.db", tmp_path / "file.txt" / "out.json"
    result = toolproof_ci(
        "run", ".", "--agent", "oracle", "--store", db, "--json", out, cwd=tmp_path
    )
    assert result.returncode == 2
    assert f"--json {out}: {tmp_path / 'file.txt'} is a file, not a folder" in one_error_line(
        result
    )
    assert not db.exists() or Store(str(db)).runs() == []


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (["show", "latest", "--json"], "--json"),
        (["report", "latest", "-o"], "-o"),
        (["gate", "latest", "--min", "pass@1=0.5", "--junit"], "--junit"),
        (["gate", "latest", "--min", "pass@1=0.5", "--markdown"], "--markdown"),
        (["gate", "latest", "--min", "pass@1=0.5", "--json"], "--json"),
        (["verify", "latest", "--manifest"], "--manifest"),
        (["compare", "latest", "latest", "--json"], "--json"),
        (["regrade", "latest", "--json"], "--json"),
    ],
    ids=["show", "report", "junit", "markdown", "gate-json", "manifest", "compare", "regrade"],
)
def test_an_unwritable_output_is_refused_before_the_work(
    stored: dict[str, Any], tmp_path: Path, args: list[str], flag: str
) -> None:
    (tmp_path / "file.txt").write_text("a file, not a folder")
    out = tmp_path / "file.txt" / "out"
    result = toolproof_ci(*args, out, "--store", stored["store"], cwd=stored["root"])
    assert result.returncode == 2, result.stdout
    assert f"{flag} {out}: " in one_error_line(result)
    assert result.stdout == ""


def test_a_run_piped_into_head_still_writes_its_json(tmp_path: Path) -> None:
    make_suite(tmp_path)
    out = tmp_path / "out.json"
    command = [CLI, "run", ".", "--agent", "oracle", "--store", "runs.db", "--json", out]
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    run = subprocess.Popen(
        command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    assert run.stdout is not None and run.stderr is not None
    first = run.stdout.readline()
    run.stdout.close()  # the reader goes away, as `| head -1` does
    errors = run.stderr.read()
    assert run.wait(timeout=120) == 0, errors
    assert first.startswith("run ")
    assert "Traceback" not in errors and "BrokenPipe" not in errors
    assert json.loads(out.read_text())["counts"]["total"] == 6


@pytest.mark.parametrize("after_s", [0.3, 1.5, 4.0])
def test_ctrl_c_at_any_moment_exits_130_without_a_traceback(tmp_path: Path, after_s: float) -> None:
    """Whether it lands while the modules load, the suite loads or the trials run."""
    make_suite(tmp_path, {"slow.yaml": SLOW_SCRIPT})
    command = [CLI, "run", ".", "--agent", "scripted:slow.yaml", "--trials", "2000", "--k", "1"]
    run = subprocess.Popen(
        [*map(str, command), "--store", "runs.db"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(after_s)
    run.send_signal(signal.SIGINT)
    _, errors = run.communicate(timeout=120)
    assert run.returncode == 130, errors
    assert "Traceback" not in errors and "KeyboardInterrupt" not in errors


# ---------------------------------------------------------------- suite files


def test_sys_exit_in_a_tool_module_is_a_located_suite_error(tmp_path: Path) -> None:
    tools = (make_suite(tmp_path) / "tools.py").read_text()
    make_suite(tmp_path, {"tools.py": "import sys\n\nsys.exit(3)\n" + tools})
    result = toolproof_ci("validate", ".", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "tools.py:3: cannot import: it calls sys.exit(3)",
        "1 problem(s)",
    ]


def test_a_damaged_gz_world_file_is_a_located_error(tmp_path: Path) -> None:
    whole = gzip.compress(b'{"A": {"status": "pending"}, "B": {"status": "shipped"}}')
    suite = edit(SOUND, "data: [orders.yaml]", "data: [orders.json.gz]")
    make_suite(tmp_path, {"suite.yaml": suite})
    (tmp_path / "orders.json.gz").write_bytes(whole[: len(whole) // 2])
    result = toolproof_ci("validate", ".", cwd=tmp_path)
    assert result.returncode == 2
    assert "orders.json.gz: cannot read: " in result.stderr
    assert "Aborted" not in result.stdout + result.stderr


# ---------------------------------------------------------------- naming runs


def test_a_run_is_named_by_the_start_of_its_id_or_latest(stored: dict[str, Any]) -> None:
    store, root = stored["store"], stored["root"]
    clean, faults = stored["clean"], stored["faults"]
    latest = toolproof_ci("show", "latest", "--store", store, cwd=root)
    assert latest.returncode == 0 and f"run {faults}" in latest.stdout
    start = toolproof_ci("verify", clean[:-3], "--store", store, cwd=root)
    assert start.returncode == 0 and f"run {clean} verified" in start.stdout
    out = root.parent / "compared.json"
    command = ["compare", clean[:-3], "latest", "--store", store, "--json", out]
    compared = toolproof_ci(*command, cwd=root)
    assert compared.returncode == 0, compared.stderr
    written = json.loads(out.read_text())
    assert (written["run_a"], written["run_b"]) == (clean, faults)


@pytest.mark.parametrize(
    ("args", "code", "said"),
    [
        (["gate", "--min", "pass@1=0.5"], 0, "gate passed"),
        (["gate", "--max", "pass@1=0.5"], 1, "gate failed: 1 of"),
        (["verify"], 0, "verified"),
        (["compare", "{other}"], 0, "no variant in common"),
    ],
    ids=["gate-passed", "gate-failed", "verify", "compare"],
)
def test_ci_commands_exit_at_once_with_all_said_written_and_the_store_closed(
    stored: dict[str, Any], tmp_path: Path, args: list[str], code: int, said: str
) -> None:
    """gate, verify and compare end the process without the interpreter's teardown (to a
    large run's objects, a quarter of a second): their exit code, all they printed and the
    JSON they wrote are there, and the store was closed first (its WAL file is gone)."""
    copy = tmp_path / "copy.db"
    with sqlite3.connect(stored["store"]) as source, sqlite3.connect(copy) as target:
        source.backup(target)
    target.close()
    out = tmp_path / "out.json"
    command, *rest = [a.format(other=stored["faults"]) for a in args]
    flags = ["--store", copy, "--json", out]
    result = toolproof_ci(command, stored["clean"], *rest, *flags, cwd=tmp_path)
    assert result.returncode == code, result.stdout + result.stderr
    assert said in result.stdout and f"wrote {out}" in result.stdout
    assert json.loads(out.read_text())
    assert not Path(f"{copy}-wal").exists() and not Path(f"{copy}-shm").exists()


@pytest.mark.parametrize(
    ("args", "code"), [(["--min", "pass@1=0.5"], 0), (["--max", "pass@1=0.5"], 1)]
)
def test_a_command_started_with_its_output_closed_still_writes_and_exits_right(
    stored: dict[str, Any], tmp_path: Path, args: list[str], code: int
) -> None:
    """Standard output and error closed (`>&- 2>&-`, as a service may start it): what would
    be printed goes nowhere, the files are written, the exit code says how it went."""
    out = tmp_path / "gate.json"
    command = [sys.executable, "-m", "toolproof", "gate", stored["clean"], *args]
    command += ["--store", str(stored["store"]), "--json", str(out)]
    closed = ["sh", "-c", 'exec "$0" "$@" >&- 2>&-', *command]
    assert subprocess.run(closed, timeout=120, check=False).returncode == code
    assert json.loads(out.read_text())["passed"] is (code == 0)


def test_a_profiled_ci_command_still_writes_its_profile(
    stored: dict[str, Any], tmp_path: Path
) -> None:
    """Under a profiler (or a coverage tracer) a CI command exits as usual, so that what
    watched it writes what it saw at exit."""
    profile = tmp_path / "verify.prof"
    command = ["-m", "cProfile", "-o", profile, "-m", "toolproof", "verify", stored["clean"]]
    result = subprocess.run(
        [sys.executable, *map(str, command), "--store", str(stored["store"])],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert pstats.Stats(str(profile)).total_calls > 0


def test_an_ambiguous_start_of_a_run_id_lists_the_runs(stored: dict[str, Any]) -> None:
    clean, faults = stored["clean"], stored["faults"]
    shared = next(clean[:i] for i in range(len(clean), 0, -1) if faults.startswith(clean[:i]))
    result = toolproof_ci("gate", shared, "--store", stored["store"], cwd=stored["root"])
    assert result.returncode == 2
    line = one_error_line(result)
    assert f"run id '{shared}' is ambiguous: {faults}, {clean} start with it" in line


def test_runs_lists_the_conditions_of_each_run(stored: dict[str, Any]) -> None:
    listed = toolproof_ci("runs", "--store", stored["store"], cwd=stored["root"])
    rows = {
        RUN_ID.findall(line)[0]: line for line in listed.stdout.splitlines() if RUN_ID.search(line)
    }
    assert re.search(r"│ retrying-oracle\s+│ faults:flaky\s+│", rows[stored["faults"]])
    assert re.search(r"│ retrying-oracle\s+│ clean\s+│", rows[stored["clean"]])
