"""Inputs a hostile user (or a bad day) hands the command line: files outside the suite, links
that loop, FIFOs and /dev/zero, numbers past any sense, nan, deep JSON, a full disk, a store
without its tables, a password in --store. Each gets exit 2 and one located line, never a
traceback or a hang, and nothing is written where it must not be."""

from __future__ import annotations

import json
import os
import re
import resource
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest
from stored import toolproof_ci
from support import SOUND, edit, make_suite

from toolproof.store.journal import Store

# Slow: every test here runs the CLI as a process.
pytestmark = pytest.mark.slow

RUN_ID = re.compile(r"\b\d{8}-\d{6}-[0-9a-f]{6}\b")
SLOW_SCRIPT = """
latency_s: 0.01
default:
  - tool_calls: [{name: get_order, arguments: {order_id: B}}]
  - text: "Order B has shipped."
"""


def one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    """The command's error: exactly one line on stderr."""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def problems(result: subprocess.CompletedProcess[str]) -> list[str]:
    """A suite error's located lines (the count line after them left out)."""
    assert result.returncode == 2, result.stdout + result.stderr
    *lines, count = result.stderr.strip().splitlines()
    assert count == f"{len(lines)} problem(s)", result.stderr
    return lines


# ---------------------------------------------------------------- files outside the suite


def test_a_policy_outside_the_suite_folder_is_refused_until_its_folder_is_allowed(
    tmp_path: Path,
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "policy.md").write_text("You are a support agent. Confirm before any change.\n")
    suite = edit(SOUND, "policy: policy.md", f"policy: {shared / 'policy.md'}")
    root = make_suite(tmp_path / "suite", {"suite.yaml": suite})
    refused = toolproof_ci("validate", ".", cwd=root)
    [line] = problems(refused)
    assert line.startswith(f"suite.yaml:2: policy {shared / 'policy.md'}: outside the suite folder")
    assert "allow_outside" in line
    allowed = edit(suite, "name: mini\n", "name: mini\nallow_outside: [../shared]\n")
    make_suite(root, {"suite.yaml": allowed})
    assert toolproof_ci("validate", ".", cwd=root).returncode == 0


@pytest.mark.parametrize("entry", ["{outside}/*.yaml", "../tasks/extra.yaml"])
def test_a_task_glob_that_leaves_the_suite_folder_is_refused(tmp_path: Path, entry: str) -> None:
    outside = tmp_path / "tasks"
    outside.mkdir()
    (outside / "extra.yaml").write_text("id: extra\nuser: {opening: hi}\nexpect: {must_say: [x]}\n")
    pattern = entry.format(outside=outside)
    suite = edit(SOUND, "tasks:\n", f"tasks:\n  - {pattern}\n")
    root = make_suite(tmp_path / "suite", {"suite.yaml": suite})
    [line] = problems(toolproof_ci("validate", ".", cwd=root))
    assert line.startswith(f"suite.yaml:12: tasks '{pattern}': outside the suite folder")


def test_a_module_linked_from_outside_the_suite_folder_is_refused(tmp_path: Path) -> None:
    root = make_suite(tmp_path / "suite")
    elsewhere = tmp_path / "tools.py"
    (root / "tools.py").rename(elsewhere)
    (root / "tools.py").symlink_to(elsewhere)
    [line] = problems(toolproof_ci("validate", ".", cwd=root))
    assert line.startswith("suite.yaml:7: tools.py: outside the suite folder")


@pytest.mark.parametrize("which", ["suite.yaml", "task file"])
def test_a_symlink_loop_is_a_located_error(tmp_path: Path, which: str) -> None:
    root = make_suite(tmp_path)
    if which == "suite.yaml":
        (root / "suite.yaml").unlink()
        (root / "suite.yaml").symlink_to(root / "suite.yaml")
        expected = "suite.yaml: a symlink loop"
    else:
        (root / "a.yaml").symlink_to(root / "b.yaml")
        (root / "b.yaml").symlink_to(root / "a.yaml")
        make_suite(root, {"suite.yaml": edit(SOUND, "tasks:\n", "tasks:\n  - a.yaml\n")})
        expected = "suite.yaml:12: a.yaml: a symlink loop"
    assert problems(toolproof_ci("validate", ".", cwd=root, timeout=30)) == [expected]


# ---------------------------------------------------------------- what is no regular file


def test_a_fifo_as_a_task_file_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    root = make_suite(tmp_path, {"suite.yaml": edit(SOUND, "tasks:\n", "tasks:\n  - pipe.yaml\n")})
    os.mkfifo(root / "pipe.yaml")
    result = toolproof_ci("validate", ".", cwd=root, timeout=30)
    assert problems(result) == [
        "suite.yaml:12: pipe.yaml: not a regular file (a FIFO); give a file"
    ]


def test_a_data_file_linked_to_dev_zero_is_refused_even_where_dev_is_allowed(
    tmp_path: Path,
) -> None:
    suite = edit(SOUND, "data: [orders.yaml]", "data: [orders.yaml, zero.json]")
    root = make_suite(tmp_path, {"suite.yaml": suite})
    (root / "zero.json").symlink_to("/dev/zero")
    [outside] = problems(toolproof_ci("validate", ".", cwd=root, timeout=30))
    assert outside.startswith("suite.yaml:5: world data zero.json: outside the suite folder")
    make_suite(root, {"suite.yaml": "allow_outside: [/dev]\n" + suite})
    result = toolproof_ci("validate", ".", cwd=root, timeout=30)
    assert problems(result) == [
        "suite.yaml:6: zero.json: not a regular file (a device); give a file"
    ]


def test_a_file_over_the_size_limit_is_refused_and_the_limit_is_configurable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = edit(SOUND, "data: [orders.yaml]", "data: [orders.yaml, big.json]")
    root = make_suite(tmp_path, {"suite.yaml": suite})
    (root / "big.json").write_text(json.dumps({"blob": "x" * 2 * 2**20}))
    assert toolproof_ci("validate", ".", cwd=root).returncode == 0  # within the default 64 MB
    monkeypatch.setenv("TOOLPROOF_MAX_FILE_MB", "1")
    assert problems(toolproof_ci("validate", ".", cwd=root)) == [
        "suite.yaml:5: big.json: larger than 1 MB; raise TOOLPROOF_MAX_FILE_MB to read it"
    ]
    monkeypatch.setenv("TOOLPROOF_MAX_FILE_MB", "nan")
    bad_limit = toolproof_ci("validate", ".", cwd=root)
    assert bad_limit.returncode == 2
    assert one_error_line(bad_limit).startswith("error: TOOLPROOF_MAX_FILE_MB=nan: give the")


# ---------------------------------------------------------------- numbers and enumerations

BEYOND_64_BITS = str(2**64)


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--seed", BEYOND_64_BITS], f"--seed {BEYOND_64_BITS}: give a whole number from 0 to"),
        (["--trials", "1000000000000"], "--trials 1000000000000: give a whole number from 1 to"),
        (["--concurrency", "1000000000000"], "--concurrency 1000000000000: give a whole number"),
        (["--max-tokens", BEYOND_64_BITS], f"--max-tokens {BEYOND_64_BITS}: give a whole number"),
        (["--time-scale", "nan"], "--time-scale nan: give a number above 0, at most 1,000"),
        (["--time-scale", "inf"], "--time-scale inf: give a number above 0, at most 1,000"),
        (["--max-cost", "nan"], "--max-cost nan: give a number above 0"),
        (["--request-timeout", "inf"], "--request-timeout inf: give a number above 0"),
        (["--temperature", "nan"], "--temperature nan: give a number from 0 to 10"),
        (["--load", BEYOND_64_BITS], f"--load '{BEYOND_64_BITS}': expected positive integers"),
        (["--model-param", "x=notjson{"], "--model-param x=notjson{: not JSON"),
        (["--store", ""], "--store '': give a SQLite file or a SQLAlchemy URL"),
    ],
)
def test_a_flag_out_of_range_is_refused_before_the_store_is_touched(
    tmp_path: Path, args: list[str], said: str
) -> None:
    root = make_suite(tmp_path / "suite")
    store = ["--store", str(tmp_path / "runs.db")] if "--store" not in args else []
    result = toolproof_ci("run", ".", "--agent", "oracle", *store, *args, cwd=root, timeout=60)
    assert result.returncode == 2, result.stdout + result.stderr
    assert one_error_line(result).startswith(f"error: {said}")
    assert not (tmp_path / "runs.db").exists() and not (root / "toolproof.db").exists()


def test_a_tool_choice_names_a_mode_or_a_tool_of_the_suite(tmp_path: Path) -> None:
    root = make_suite(tmp_path)
    result = toolproof_ci("run", ".", "--agent", "oracle", "--tool-choice", "sometimes", cwd=root)
    assert result.returncode == 2
    assert one_error_line(result) == (
        "error: --tool-choice sometimes: use auto, required, none, or one of the suite's tools "
        "to force it (cancel_order, get_order)"
    )
    forced = toolproof_ci("run", ".", "--agent", "oracle", "--tool-choice", "get_order", cwd=root)
    assert forced.returncode == 0, forced.stderr


def test_a_run_stored_with_a_value_that_does_not_read_back_is_one_line(tmp_path: Path) -> None:
    """Runs stored before nan was refused (its time scale stored as null): every reader says
    which value, in one line."""
    root = make_suite(tmp_path)
    made = toolproof_ci("run", ".", "--agent", "oracle", "--store", "runs.db", cwd=root)
    run_id = RUN_ID.findall(made.stdout)[0]
    with closing(sqlite3.connect(root / "runs.db")) as db, db:
        db.execute("UPDATE runs SET config = json_set(config, '$.time_scale', json('null'))")
    commands = [["show"], ["report", "-o", "r.html"], ["verify"], ["gate", "--min", "pass@1=0"]]
    for name, *rest in commands:
        result = toolproof_ci(name, run_id, *rest, "--store", "runs.db", cwd=root)
        assert result.returncode == 2, name
        assert one_error_line(result).endswith(
            f"{run_id} in sqlite:///runs.db cannot be read: its config.time_scale is None, not a "
            "valid value (an earlier toolproof stored it)"
        )


@pytest.mark.parametrize(
    ("value", "as_count", "as_rate"),
    [
        ("true", "a valid integer", "a valid number"),
        (".nan", "a finite number", "a finite number"),
        (".inf", "a finite number", "a finite number"),
    ],
)
def test_a_suite_number_that_is_no_finite_number_is_located(
    tmp_path: Path, value: str, as_count: str, as_rate: str
) -> None:
    faults = f"faults: {{profiles: {{p: [{{kind: server_error, rate: {value}}}]}}}}\n"
    suite = edit(SOUND, "defaults: {trials: 3,", f"defaults: {{trials: {value},") + faults
    root = make_suite(tmp_path, {"suite.yaml": suite})
    assert problems(toolproof_ci("validate", ".", cwd=root)) == [
        f"suite.yaml:28: defaults.trials: Input should be {as_count}",
        f"suite.yaml:29: faults.profiles.p.0.rate: Input should be {as_rate}",
    ]


# ---------------------------------------------------------------- imports


def test_a_tau_bench_file_of_deeply_nested_json_is_located(tmp_path: Path) -> None:
    for depth, name in ((100_000, "deep.json"), (300, "deeper-than-data.json")):
        (tmp_path / name).write_text("[" * depth + "]" * depth)
        result = toolproof_ci("import", "tau-bench", name, "--store", "runs.db", cwd=tmp_path)
        assert problems(result) == [f"{name}: nesting deeper than 100 levels"]
    assert not (tmp_path / "runs.db").exists() or Store(str(tmp_path / "runs.db")).runs() == []


# ---------------------------------------------------------------- stores


def test_a_store_without_its_trials_table_is_refused_before_anything_is_written(
    tmp_path: Path,
) -> None:
    root = make_suite(tmp_path)
    assert (
        toolproof_ci("run", ".", "--agent", "oracle", "--store", "runs.db", cwd=root).returncode
        == 0
    )
    with closing(sqlite3.connect(root / "runs.db")) as db:
        db.execute("DROP TABLE trials")
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    before = (root / "runs.db").read_bytes()
    result = toolproof_ci(
        "run", ".", "--agent", "oracle", "--store", "runs.db", "--fresh", cwd=root
    )
    assert result.returncode == 2
    line = one_error_line(result)
    assert "is damaged (its trials table is missing): nothing was written to it" in line
    assert (root / "runs.db").read_bytes() == before


def test_resuming_from_a_store_that_is_not_there_creates_none(tmp_path: Path) -> None:
    root = make_suite(tmp_path)
    result = toolproof_ci("run", ".", "--resume", "latest", "--store", "gone.db", cwd=root)
    assert result.returncode == 2
    assert one_error_line(result).startswith("error: no results store at gone.db")
    assert not (root / "gone.db").exists()


@pytest.mark.parametrize(
    "args",
    [
        ["show", "nosuchrun"],
        ["runs"],
        ["gate", "latest", "--min", "pass@1=0.5"],
        ["run", ".", "--agent", "oracle"],
    ],
    ids=["show", "runs", "gate", "run"],
)
def test_no_password_of_the_store_reaches_an_error_line(tmp_path: Path, args: list[str]) -> None:
    root = make_suite(tmp_path)
    url = "postgresql+psycopg://toolproof:HUNTER2@127.0.0.1:9/results"
    result = toolproof_ci(*args, "--store", url, cwd=root)
    assert result.returncode == 2
    line = one_error_line(result)
    assert "HUNTER2" not in result.stdout + result.stderr
    assert "postgresql+psycopg://<redacted>@127.0.0.1:9/results" in line


def test_a_malformed_header_is_refused_without_repeating_its_value(tmp_path: Path) -> None:
    root = make_suite(tmp_path)
    header = "Authorization: Bearer HUNTER2"
    result = toolproof_ci("run", ".", "--agent", "oracle", "--header", header, cwd=root)
    assert result.returncode == 2
    assert one_error_line(result) == "error: --header 'Auth'...: expected KEY=VALUE"


def test_an_unknown_driver_in_a_store_url_shows_no_password(tmp_path: Path) -> None:
    result = toolproof_ci("runs", "--store", "nosuch+driver://u:HUNTER2@h/db", cwd=tmp_path)
    assert result.returncode == 2
    assert "HUNTER2" not in result.stdout + result.stderr
    assert one_error_line(result).startswith("error: --store nosuch+driver://<redacted>@h/db")


# ---------------------------------------------------------------- a disk that fills up


@pytest.fixture
def full_disk(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[dict[str, object]]:
    """Somewhere a store runs out of room mid-run. As root where mounting works: a 600 kB
    tmpfs, which fills as a real disk does (SQLite reports 'database or disk is full').
    Otherwise: the largest file a process may write (RLIMIT_FSIZE) set low in the command's
    own process, so the store's writes fail with EFBIG as they would on a full disk
    (SQLite reports a disk I/O error); Python ignores SIGXFSZ, which would kill it."""
    folder = tmp_path / "disk"
    folder.mkdir()
    kind = request.param
    if kind == "tmpfs":
        mount = ["mount", "-t", "tmpfs", "-o", "size=600k", "tmpfs", str(folder)]
        if os.geteuid() != 0 or subprocess.run(mount, capture_output=True).returncode != 0:
            pytest.skip("mounting a tmpfs needs root")
    try:
        yield {"folder": folder, "limit": None if kind == "tmpfs" else 600_000}
    finally:
        if kind == "tmpfs":
            subprocess.run(["umount", str(folder)], check=True)


def run_until_full(root: Path, store: Path, limit: int | None) -> subprocess.CompletedProcess[str]:
    def small_files() -> None:
        if limit is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    command = ["run", ".", "--agent", "scripted:slow.yaml", "--trials", "300", "--k", "1"]
    return subprocess.run(
        [sys.executable, "-m", "toolproof", *command, "--store", str(store)],
        cwd=root,
        env={**os.environ, "COLUMNS": "200", "NO_COLOR": "1"},
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=small_files,
    )


@pytest.mark.parametrize("full_disk", ["tmpfs", "fsize"], indirect=True)
def test_a_full_disk_mid_run_says_what_is_kept_and_the_same_command_resumes(
    tmp_path: Path, full_disk: dict[str, object]
) -> None:
    root = make_suite(tmp_path / "suite", {"slow.yaml": SLOW_SCRIPT})
    folder = full_disk["folder"]
    assert isinstance(folder, Path)
    store = folder / "runs.db"
    limit = full_disk["limit"]
    stopped = run_until_full(root, store, limit if isinstance(limit, int) else None)
    assert stopped.returncode == 2, stopped.stderr
    assert "Traceback" not in stopped.stderr
    line = one_error_line(stopped)
    found = re.search(r"run (\S+) stopped; (\d+) of 600 trials are kept; once the store", line)
    assert found is not None, line
    assert line.startswith(f"error: cannot write to the results store sqlite:///{store} (")
    run_id, kept = found[1], int(found[2])
    assert 0 < kept < 600
    with closing(sqlite3.connect(store)) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert db.execute("SELECT count(*) FROM trials").fetchone() == (kept,)
        moved = tmp_path / "roomy.db"  # the disk has room again
        with closing(sqlite3.connect(moved)) as target:
            db.backup(target)
    again = run_until_full(root, moved, None)
    assert again.returncode == 0, again.stderr
    assert f"resuming {run_id}: {kept} of 600 trials done" in again.stdout
    with closing(sqlite3.connect(moved)) as db:
        assert db.execute("SELECT count(*) FROM trials").fetchone() == (600,)


def test_a_non_finite_limit_in_a_gate_flag_is_refused(tmp_path: Path) -> None:
    root = make_suite(tmp_path)
    assert (
        toolproof_ci("run", ".", "--agent", "oracle", "--store", "runs.db", cwd=root).returncode
        == 0
    )
    result = toolproof_ci("gate", "latest", "--min", "pass@1=inf", "--store", "runs.db", cwd=root)
    assert result.returncode == 2
    assert "--min 'pass@1=inf': expected METRIC=VALUE" in one_error_line(result)
