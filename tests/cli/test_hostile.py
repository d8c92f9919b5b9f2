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
from collections import Counter
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from stored import invoke, toolproof_ci
from support import SOUND, edit, make_suite

from toolproof.errors import SuiteError
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


# ---------------------------------------------------------------- a generated hostile corpus
#
# Cases generated from parameter lists, many to a process: one `toolproof run` plays a task
# per hostile tool behaviour (in-process and in a worker process), another a task per
# hostile agent behaviour; suite values, flags, agent specs, scripted files and outputs are
# checked in this process. Every case ends in exit 2 with a located line, or in a stored
# failed trial: never a traceback, a hang, an early end of the run, or a file overwritten.

CORPUS: Counter[str] = Counter()
"""How the corpus's cases ended: `exit 2`, `failed trial stored`, and how many of those
stored trials also left a one-line warning (`handled`)."""

TOOL_BEHAVIOURS: dict[str, list[str]] = {
    "posix_exit": ["posix._exit(3)"],
    "os_exit": ["os._exit(4)"],
    "sys_exit": ["sys.exit(5)"],
    "sys_exit_none": ["sys.exit()"],
    "system_exit_text": ["raise SystemExit('bye')"],
    "sigterm": ["os.kill(os.getpid(), signal.SIGTERM)", "time.sleep(5)"],
    "sigint": ["os.kill(os.getpid(), signal.SIGINT)", "time.sleep(5)"],
    "sigkill": ["os.kill(os.getpid(), signal.SIGKILL)", "time.sleep(5)"],
    "sigalrm": ["os.kill(os.getpid(), signal.SIGALRM)", "time.sleep(5)"],
    "killpg": ["os.killpg(os.getpgrp(), signal.SIGTERM)", "time.sleep(5)"],
    "kill_group": ["os.kill(0, signal.SIGTERM)", "time.sleep(5)"],
    "raise_signal": ["signal.raise_signal(signal.SIGTERM)"],
    "pthread_kill": ["signal.pthread_kill(threading.main_thread().ident, signal.SIGTERM)"],
    "interrupt_main": ["_thread.interrupt_main()", "time.sleep(5)"],
    "abort": ["os.abort()"],
    "fork": ["return {'pid': os.fork()}"],
    "fork_child_exits": ["if os.fork() == 0:", "    os._exit(0)"],
    "disarm": ["signal.setitimer(signal.ITIMER_REAL, 0)", "time.sleep(60)"],
    "alarm": ["signal.alarm(0)", "time.sleep(60)"],
    "ignore_alarm": ["signal.signal(signal.SIGALRM, signal.SIG_IGN)", "time.sleep(60)"],
    "default_alarm": ["signal.signal(signal.SIGALRM, signal.SIG_DFL)", "time.sleep(60)"],
    "swallow_once": ["try:", "    time.sleep(60)", "except BaseException:", "    time.sleep(60)"],
    "sleep": ["time.sleep(60)"],
    "spin": ["while True:", "    pass"],
    "keyboard_interrupt": ["raise KeyboardInterrupt"],
    "custom": ["raise Custom('mine')"],
    "generator_exit": ["raise GeneratorExit"],
    "cancelled": ["raise asyncio.CancelledError"],
    "memory_error": ["raise MemoryError"],
    "recursion": ["return (lambda f: f(f))(lambda f: f(f))"],
    "bigint": ["return {'n': 2**70, 'm': -(2**80)}"],
    "hugeint": ["return [10**5000]"],
    "nan": ["return {'x': float('nan')}"],
    "bytes": ["return b'\\x00\\xff'"],
    "object": ["return object()"],
    "escapes": ["return '\\x1b]52;c;aGk=\\x07\\x1b[2J\\x1b[31mred\\r\\x08'"],
    "thread_exit": ["threading.Thread(target=lambda: (time.sleep(0.1), os._exit(5))).start()"],
    "thread_sigterm": ["threading.Thread(target=lambda: os.kill(os.getpid(), 15)).start()"],
    "world_bigint": ["world['orders']['A']['n'] = 2**70"],
    "world_hugeint": ["world['orders']['A']['n'] = 10**5000"],
}

HOSTILE_TOOL = '''

@tool(timeout_s=1)
def {name}(world: World, how: str) -> object:
    """Misbehaves as asked.

    Args:
        how: Which way.
    """
    return globals()["b_" + how](world)
'''


def hostile_tools(name: str) -> str:
    """A tool module whose one tool, `name`, misbehaves as its argument says."""
    lines = [
        "import _thread, asyncio, os, posix, signal, sys, threading, time",
        "from toolproof.tools import tool",
        "from toolproof.world import World",
        "",
        "class Custom(BaseException):",
        "    pass",
    ]
    for how, body in TOOL_BEHAVIOURS.items():
        lines += ["", f"def b_{how}(world):", *(f"    {line}" for line in body), "    return 'x'"]
    return "\n".join(lines) + HOSTILE_TOOL.format(name=name)


HOSTILE_AGENT = """
import _thread, asyncio, os, posix, signal, sys, threading, time

ESC = "\\x1b]52;c;aGk=\\x07\\x1b[2J\\x1b[31m"


class Custom(BaseException):
    pass


async def agent(conversation, tools):
    tool, _, how = conversation.latest.partition(" ")
    if tool != "agent":
        await tools.call(tool, {"how": how})
        return "done"
    if how == "forever":
        await asyncio.Event().wait()
    if how == "block":
        time.sleep(60)
    if how == "spin":
        while True:
            pass
    if how == "swallow_cancel":
        try:
            await asyncio.sleep(60)
        except BaseException:
            await asyncio.sleep(60)
    if how == "sys_exit":
        sys.exit(3)
    if how == "keyboard_interrupt":
        raise KeyboardInterrupt
    if how == "cancelled":
        raise asyncio.CancelledError
    if how == "os_exit":
        os._exit(0)
    if how == "posix_exit":
        posix._exit(1)
    if how == "sigterm":
        os.kill(os.getpid(), signal.SIGTERM)
    if how == "interrupt_main":
        _thread.interrupt_main()
    if how == "raise_signal":
        signal.raise_signal(signal.SIGINT)
    if how == "abort":
        os.abort()
    if how == "fork":
        os.fork()
    if how == "disarm":
        signal.setitimer(signal.ITIMER_REAL, 0)
    if how == "ignore_alarm":
        signal.signal(signal.SIGALRM, signal.SIG_IGN)
    if how == "custom":
        raise Custom("mine")
    if how == "generator_exit":
        raise GeneratorExit
    if how == "returns_int":
        return 2**70
    if how == "returns_none":
        return None
    if how == "unknown_nested":
        await tools.call("nosuch", {"a": {"b": [1, {"c": [2, {"d": None}]}]}})
    if how == "unknown_hugeint":
        await tools.call("nosuch", {"a": 10**5000})
    if how == "unknown_bigint":
        await tools.call("nosuch", {"a": 2**70})
    if how == "bad_json":
        await tools.call("get_order", "{not json")
    if how == "json_list":
        await tools.call("get_order", "[1, 2]")
    if how == "long_name":
        await tools.call("x" * 10_000, {})
    if how == "escaped_name":
        await tools.call(ESC + "tool", {})
    if how == "escaped_reply":
        return ESC + "reply\\r\\x08"
    if how == "thread_exit":
        threading.Thread(target=lambda: (time.sleep(0.1), os._exit(5))).start()
    if how == "big_argument":
        await tools.call("get_order", {"order_id": 2**70})
    return "nothing to say"
"""

AGENT_BEHAVIOURS = [
    line.split('"')[1]
    for line in HOSTILE_AGENT.splitlines()
    if line.strip().startswith('if how == "')
]
TOOL_CASES = [(tool, how) for tool in ("hostile", "hostile_isolated") for how in TOOL_BEHAVIOURS]
AGENT_CASES = [("agent", how) for how in AGENT_BEHAVIOURS]


def hostile_suite(root: Path) -> Path:
    """The mini suite with a hostile tool in-process, one in a worker process, and a task
    for each case of the corpus (each asks for what no reply says: every trial fails)."""
    cases = TOOL_CASES + AGENT_CASES
    tasks = "".join(
        f"  - id: {tool}-{how}\n    user: {{opening: '{tool} {how}'}}\n"
        "    expect: {must_say: [never said]}\n"
        for tool, how in cases
    )
    suite = (
        "name: hostile\npolicy: policy.md\nworld:\n  data: [orders.yaml]\nbackends:\n"
        "  t: {type: python, module: tools.py}\n"
        "  h: {type: python, module: hostile.py}\n"
        "  hi: {type: python, module: hostile_isolated.py, isolation: process}\n"
        "tools:\n  get_order: {tier: 1, backend: t}\n  cancel_order: {tier: 3, backend: t}\n"
        "  hostile: {tier: 1, backend: h}\n  hostile_isolated: {tier: 1, backend: hi}\n"
        f"tasks:\n{tasks}defaults: {{trials: 1, k: [1], concurrency: 8}}\n"
    )
    return make_suite(
        root,
        {
            "suite.yaml": suite,
            "hostile.py": hostile_tools("hostile"),
            "hostile_isolated.py": hostile_tools("hostile_isolated"),
            "agent.py": HOSTILE_AGENT,
        },
    )


def no_core_files() -> None:
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One run over every tool and agent case: its exit, its output, its stored trials."""
    root = hostile_suite(tmp_path_factory.mktemp("hostile"))
    before = {p.name: p.read_bytes() for p in root.iterdir()}
    command = ["run", ".", "--agent", "python:agent.py:agent", "--agent-timeout", "2"]
    done = subprocess.run(
        [sys.executable, "-m", "toolproof", *command, "--store", "runs.db"],
        cwd=root,
        env={**os.environ, "COLUMNS": "200", "NO_COLOR": "1"},
        capture_output=True,
        text=True,
        timeout=400,
        preexec_fn=no_core_files,
        start_new_session=True,  # what reaches past the guard reaches no one else
    )
    with closing(sqlite3.connect(root / "runs.db")) as db:
        rows = db.execute("SELECT task_id, outcome, reason FROM trials").fetchall()
    unchanged = all((root / name).read_bytes() == data for name, data in before.items())
    return {
        "done": done,
        "trials": {task: (outcome, reason) for task, outcome, reason in rows},
        "unchanged": unchanged,
    }


@pytest.mark.parametrize(("tool", "how"), TOOL_CASES + AGENT_CASES)
def test_hostile_code_fails_only_its_own_trial(
    hostile_run: dict[str, Any], tool: str, how: str
) -> None:
    done: subprocess.CompletedProcess[str] = hostile_run["done"]
    assert done.returncode in (0, 1), done.stderr[-2000:]
    assert "Traceback" not in done.stdout + done.stderr
    assert "\x1b" not in done.stdout + done.stderr  # escapes from the suite's code stay inert
    assert hostile_run["unchanged"]
    outcome, reason = hostile_run["trials"][f"{tool}-{how}"]
    assert outcome == "failed", reason
    CORPUS["failed trial stored"] += 1
    if tool == "agent" and how in ("forever", "block", "spin", "swallow_cancel"):
        assert reason == "agent_error: the agent's turn did not end within 2 s (--agent-timeout)"
    if tool == "hostile" and how in ("sleep", "spin", "swallow_once"):
        assert reason == "tool_crashed: hostile did not return within 1 s (its timeout_s)"
    if how.startswith("thread_") and tool != "hostile_isolated":
        assert "of the suite's code ended" in done.stderr
        CORPUS["handled (one-line warning)"] += 1


def test_every_hostile_case_is_one_stored_trial(hostile_run: dict[str, Any]) -> None:
    cases = TOOL_CASES + AGENT_CASES
    assert sorted(hostile_run["trials"]) == sorted(f"{tool}-{how}" for tool, how in cases)
    assert f"{len(cases)} trials" in hostile_run["done"].stdout or hostile_run["trials"]


HOSTILE_NUMBERS = [
    ".nan",
    ".inf",
    "-.inf",
    "-1",
    "1e400",
    "true",
    "ten",
    "[1]",
    "{a: 1}",
    "''",
    str(2**64),
]
SUITE_NUMBERS = {
    "defaults.trials": ("defaults: {trials: 3,", "defaults: {{trials: {v},"),
    "defaults.seed": ("defaults: {trials: 3,", "defaults: {{seed: {v}, trials: 3,"),
    "defaults.max_steps": ("defaults: {trials: 3,", "defaults: {{max_steps: {v}, trials: 3,"),
    "defaults.concurrency": ("defaults: {trials: 3,", "defaults: {{concurrency: {v}, trials: 3,"),
    "defaults.agent_timeout_s": (
        "defaults: {trials: 3,",
        "defaults: {{agent_timeout_s: {v}, trials: 3,",
    ),
    "backends.t.timeout_s": ("module: tools.py}", "module: tools.py, timeout_s: {v}}}"),
    "backends.t.isolation": ("module: tools.py}", "module: tools.py, isolation: {v}}}"),
    "tools.get_order.weight": ("get_order: {tier: 1, weight: 0.7}", "get_order: {{weight: {v}}}"),
    "tools.get_order.tier": ("get_order: {tier: 1, weight: 0.7}", "get_order: {{tier: {v}}}"),
    "defaults.k": ("k: [1, 3]", "k: [1, {v}]"),
}


@pytest.fixture(scope="module")
def mini_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_suite(tmp_path_factory.mktemp("mini"))


@pytest.mark.parametrize("value", HOSTILE_NUMBERS)
@pytest.mark.parametrize("field", list(SUITE_NUMBERS))
def test_a_hostile_suite_value_is_a_located_error(tmp_path: Path, field: str, value: str) -> None:
    old, new = SUITE_NUMBERS[field]
    root = make_suite(tmp_path, {"suite.yaml": edit(SOUND, old, new.format(v=value))})
    outcome = invoke("validate", str(root))
    assert outcome.code == 2, outcome.stdout
    assert isinstance(outcome.error, SuiteError)
    assert all(p.path.endswith("suite.yaml") and p.line for p in outcome.error.problems)
    CORPUS["exit 2"] += 1


HOSTILE_FLAGS = [
    ["--agent-timeout", value] for value in ("nan", "inf", "-inf", "-1", "0", "1e400", "86401")
] + [
    ["--agent", spec]
    for spec in (
        "python:",
        "python:agent.py",
        "python:agent.py:",
        "python:agent.py:1bad",
        "python:nosuch.py:agent",
        "python:nosuch_module_xyz:agent",
        "python:agent.py:missing",
        "python:agent.py:sync_agent",
        "python:exits.py:agent",
        "python:os_exits.py:agent",
        "python:interrupts.py:agent",
        "python:raises_base.py:agent",
        "python:signals.py:agent",
        "python:alarms.py:agent",
        "python:syntax.py:agent",
        "python:/dev/null:agent",
        "python:.:agent",
    )
]
AGENT_MODULES = {
    "agent.py": "async def agent(c, t):\n    return 'x'\n\ndef sync_agent(c, t):\n    return 'x'\n",
    "exits.py": "import sys\nsys.exit(0)\n",
    "os_exits.py": "import os\nos._exit(0)\n",
    "interrupts.py": "raise KeyboardInterrupt\n",
    "raises_base.py": "class Mine(BaseException):\n    pass\n\nraise Mine('at import')\n",
    "signals.py": "import os, signal\nos.kill(os.getpid(), signal.SIGTERM)\n",
    "alarms.py": "import signal\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\n",
    "syntax.py": "async def agent(:\n",
}


@pytest.mark.parametrize("flags", HOSTILE_FLAGS, ids=" ".join)
def test_a_hostile_flag_or_agent_module_is_refused_before_a_run(
    tmp_path: Path, flags: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_suite(tmp_path, AGENT_MODULES)
    monkeypatch.chdir(root)
    agent = [] if "--agent" in flags else ["--agent", "python:agent.py:agent"]
    before = {p.name: p.read_bytes() for p in root.iterdir()}
    outcome = invoke("run", ".", *agent, *flags, "--store", "runs.db")
    assert outcome.code == 2, outcome.stdout
    assert outcome.error is not None and "\n" not in str(outcome.error)
    if "--agent" not in flags:  # a flag is refused before the store is opened
        assert not (root / "runs.db").exists()
    assert {p.name: p.read_bytes() for p in root.iterdir() if p.name in before} == before
    CORPUS["exit 2"] += 1


HOSTILE_SCRIPTS = (
    [f"latency_s: {value}\ndefault: [{{text: hi}}]\n" for value in [*HOSTILE_NUMBERS, "61"]]
    + [
        f"default: [{{text: hi, usage: {{{kind}: {value}}}}}]\n"
        for kind in ("input_tokens", "output_tokens")
        for value in ("-1", "18446744073709551616", ".nan", "1.5", "true")
    ]
    + [
        "default: {text: hi}\n",
        "default: [{tool_calls: [{arguments: {}}]}]\n",
        "default: [{tool_calls: [{name: get_order, arguments: [1]}]}]\n",
        "default: [{text: [nested, list]}]\n",
        "tasks: {nosuch: [{text: hi}]}\n",
        "default: [{text: hi, extra: 1}]\n",
        "[" * 200 + "]" * 200 + "\n",
        "default: [{text: hi}\n",
        "\x00\x01binary",
        "",
    ]
)


@pytest.mark.parametrize("script", HOSTILE_SCRIPTS)
def test_a_hostile_scripted_file_is_a_located_error(
    mini_root: Path, script: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "script.yaml").write_text(script, encoding="utf-8")
    store = tmp_path / "runs.db"
    outcome = invoke(
        "run", mini_root, "--agent", f"scripted:{tmp_path / 'script.yaml'}", "--store", store
    )
    assert outcome.code == 2, outcome.stdout
    assert outcome.error is not None
    assert not store.exists() or Store(str(store)).runs() == []
    CORPUS["exit 2"] += 1


def played(call: str) -> str:
    """A script whose first turn makes `call`, then says it is done."""
    return "default: [{tool_calls: [" + call + "]}, {text: done}]\n"


PLAYED_SCRIPTS = (
    [
        played("{name: get_order, arguments: {order_id: " + value + "}}")
        for value in ("18446744073709551616", "1" * 5000, "-.inf", "[1, [2, [3]]]", "{a: {b: 1}}")
    ]
    + [
        played("{name: " + name + ", arguments: {}}")
        for name in ("nosuch", '"\\e[31mred"', '"x\\ny"', "''", "'" + "n" * 5000 + "'")
    ]
    + [
        played("{name: get_order, raw_arguments: " + raw + "}")
        for raw in ("'{not json'", "'[1]'", "'null'", "''", '"\\"\\e]52;c;aGk=\\a\\""')
    ]
    + [
        "default: [{text: " + text + "}]\n"
        for text in ('"\\e]52;c;aGk=\\a"', '"\\e[2J\\e[H"', '"\\r\\b\\b"', '"\\e]8;;x\\a"')
    ]
)


@pytest.mark.parametrize("script", PLAYED_SCRIPTS)
def test_a_hostile_scripted_turn_is_a_stored_failed_trial(
    mini_root: Path, script: str, tmp_path: Path
) -> None:
    (tmp_path / "script.yaml").write_text(script, encoding="utf-8")
    store = tmp_path / "runs.db"
    outcome = invoke(
        "run",
        mini_root,
        "--agent",
        f"scripted:{tmp_path / 'script.yaml'}",
        "--store",
        store,
        "--trials",
        "1",
        "--k",
        "1",
        "--tasks",
        "cancel",
    )
    if outcome.code == 2:  # refused where it is written: a number too long to read
        assert isinstance(outcome.error, SuiteError) and "script.yaml:1:" in str(outcome.error)
        CORPUS["exit 2"] += 1
        return
    assert outcome.code in (0, 1), outcome.error
    assert "\x1b" not in outcome.stdout
    with closing(sqlite3.connect(store)) as db:
        assert db.execute("SELECT outcome FROM trials").fetchall() == [("failed",)]
    CORPUS["failed trial stored"] += 1


HOSTILE_OUTPUTS = ["suite.yaml", "tools.py", "policy.md", "orders.yaml", "runs.db", ".", "pipe"]


@pytest.mark.parametrize("flag", ["--json", "--otel-file"])
@pytest.mark.parametrize("target", HOSTILE_OUTPUTS)
def test_a_hostile_output_path_is_refused_and_nothing_is_overwritten(
    tmp_path: Path, flag: str, target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_suite(tmp_path)
    monkeypatch.chdir(root)
    if target == "pipe":
        os.mkfifo(root / "pipe")
    (root / "runs.db").write_bytes(b"")  # a store that is there, to be kept
    before = {p.name: p.read_bytes() for p in root.iterdir() if p.is_file()}
    outcome = invoke("run", ".", "--agent", "oracle", "--store", "runs.db", flag, target)
    assert outcome.code == 2, outcome.stdout
    assert {p.name: p.read_bytes() for p in root.iterdir() if p.is_file()} == before
    CORPUS["exit 2"] += 1


def test_the_corpus_outcomes_are_counted(capsys: pytest.CaptureFixture[str]) -> None:
    """Runs last in this file: the table of how the corpus's cases ended."""
    total = CORPUS["exit 2"] + CORPUS["failed trial stored"]
    with capsys.disabled():
        print(f"\nhostile corpus: {total} cases")
        for outcome, count in sorted(CORPUS.items()):
            print(f"  {outcome:<28} {count:>4}")
    if CORPUS["failed trial stored"] >= len(TOOL_CASES + AGENT_CASES):  # the whole corpus ran
        assert total >= 300, CORPUS
