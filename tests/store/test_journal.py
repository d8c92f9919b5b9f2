"""The store itself: compressed results, a store of the previous schema upgraded and read,
creation by many processes at once, damaged files refused, run ids by prefix, leases."""

from __future__ import annotations

import asyncio
import os
import platform
import shutil
import sqlite3
import subprocess
import sys
import time
import zlib
from operator import itemgetter
from pathlib import Path

import orjson
import pytest
from sqlalchemy import select, update
from stored import mini_suite, stored_run
from together import SCHEMA_2, open_at_once

from toolproof.errors import StoreError, UsageError
from toolproof.records.run import RunConfig
from toolproof.runner.run import RunRequest, run_suite
from toolproof.store import lease
from toolproof.store.integrity import read_trials, written_trials
from toolproof.store.journal import NewRun, Store
from toolproof.store.manifest import load_manifest
from toolproof.store.queries import list_runs
from toolproof.store.schema import run_leases, trials
from toolproof.store.verify import verify_run
from toolproof.suite import load_suite
from toolproof.summaries import stored_summary

ORACLE_RUN, NULL_RUN = "20261201-120125-811e95", "20261201-120129-80c3f2"


def new_run(fingerprint: str = "f") -> NewRun:
    return NewRun(
        suite_name="mini",
        suite_version="1",
        suite_hash="0" * 64,
        fingerprint=fingerprint,
        agent="oracle",
        config=RunConfig(agent="oracle"),
        tasks=[],
        version="test",
    )


# ---------------------------------------------------------------- results, stored small


def test_results_are_stored_compressed_and_read_back_whole(tmp_path: Path) -> None:
    store = Store(str(tmp_path / "s.db"))
    suite = load_suite(mini_suite(tmp_path / "mini"))
    report = asyncio.run(run_suite(suite, RunRequest(agent="oracle", trials=2, k=[1]), store))
    with sqlite3.connect(tmp_path / "s.db") as conn:
        raw = conn.execute("SELECT result FROM trials ORDER BY id").fetchall()
    for (blob,) in raw:
        assert isinstance(blob, bytes)
        whole = zlib.decompress(blob)
        assert len(blob) * 2 < len(whole), "a trial's record is several times smaller stored"
    stored = [orjson.loads(zlib.decompress(blob)) for (blob,) in raw]
    back = [result.model_dump(mode="json") for _, result in store.results(report.run_id)]
    order = itemgetter("task_id", "trial")
    assert sorted(stored, key=order) == sorted(back, key=order)
    assert sorted(map(order, back)) == [(t, i) for t in ("cancel", "status") for i in (0, 1)]


def test_the_record_hash_written_with_a_trial_is_the_one_verify_computes(tmp_path: Path) -> None:
    store = Store(str(tmp_path / "s.db"))
    run_id = stored_run(store, {"cancel": "PFI", "status": "PP"}, cost=None)
    assert [t.hash for t in written_trials(store, run_id)] == [
        t.hash for t in read_trials(store, run_id)
    ]


# ---------------------------------------------------------------- the previous schema


def test_a_store_of_the_previous_schema_is_upgraded_and_stays_readable(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    shutil.copyfile(SCHEMA_2, path)
    store = Store(str(path))
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT value FROM toolproof_meta").fetchone() == ("5",)
        columns = {row[1] for row in conn.execute("PRAGMA table_info(trials)")}
        assert "sha256" in columns
    oracle = stored_summary(store, ORACLE_RUN)
    assert oracle.counts.passed == 6 and oracle.counts.total == 6
    assert stored_summary(store, NULL_RUN).counts.failed == 6
    results = [r for _, r in store.results(ORACLE_RUN)]
    assert len(results) == 6 and all(r.transcript.events for r in results)
    # The manifests of the first format verify, and still name a changed trial.
    manifest = load_manifest(store, ORACLE_RUN)
    assert manifest is not None and manifest.document["format"] == "toolproof-manifest/1"
    assert verify_run(store, ORACLE_RUN).ok, verify_run(store, ORACLE_RUN).problems
    with store.engine.begin() as conn:
        conn.execute(
            update(trials)
            .where(trials.c.run_id == NULL_RUN, trials.c.task_id == "status", trials.c.trial == 1)
            .values(outcome="passed")
        )
    changed = verify_run(store, NULL_RUN)
    assert changed.tampered == ["task status trial 1"]
    assert "task status trial 1: trials.outcome is 'passed' but its stored result says " in (
        "\n".join(changed.problems)
    )
    # New runs go into the same store, compressed, and verify.
    run_id = stored_run(store, {"cancel": "PF"})
    assert run_id in [r["id"] for r in list_runs(store)]
    assert len(list_runs(store)) == 3


def test_a_store_of_an_unknown_schema_is_refused_naming_what_to_do(tmp_path: Path) -> None:
    path = tmp_path / "future.db"
    Store(str(path)).engine.dispose()
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE toolproof_meta SET value = '9'")
    with pytest.raises(StoreError, match=r"has results schema 9, .* use another --store"):
        Store(str(path))


# ---------------------------------------------------------------- opening safely


@pytest.mark.slow
def test_many_processes_create_one_new_store_at_the_same_moment(tmp_path: Path) -> None:
    db = tmp_path / "new.db"
    assert open_at_once(str(db), 15, tmp_path) == []
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT key, value FROM toolproof_meta").fetchall() == [
            ("schema_version", "5")
        ]


def test_a_file_that_is_not_a_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_text("meeting notes, not results\n")
    with pytest.raises(StoreError, match=r"cannot open store .*: file is not a database"):
        Store(str(path))
    assert path.read_text() == "meeting notes, not results\n"


def damage(path: Path) -> None:
    """Overwrite pages in the middle of a SQLite file, as a failing disk would."""
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
    assert pages > 6
    with path.open("r+b") as file:
        file.seek(4096 * (pages // 2))
        file.write(b"\xa5" * 4096 * 2)


def test_nothing_is_written_into_a_damaged_store(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    store = Store(str(path))
    for _ in range(4):
        stored_run(store, {"cancel": "PPPPP", "status": "FFFFF"})
    store.engine.dispose()
    damage(path)
    before = path.read_bytes()
    damaged = Store(str(path))
    with pytest.raises(StoreError, match=r"is damaged .*nothing was written to it"):
        damaged.create_run(**vars(new_run()))
    with pytest.raises(StoreError, match="is damaged"):
        damaged.open_run(new_run())
    assert path.read_bytes() == before


# ---------------------------------------------------------------- naming a run


def test_a_run_is_named_by_its_id_its_start_or_latest(tmp_path: Path) -> None:
    store = Store(str(tmp_path / "s.db"))
    with pytest.raises(StoreError, match=r"no run in .* yet"):
        store.resolve("latest")
    first = stored_run(store, {"t": "P"})
    second = stored_run(store, {"t": "F"})
    assert store.resolve(first) == first
    assert store.resolve("latest") == second
    with store.engine.begin() as conn:  # two ids sharing a start, as runs of one second do
        conn.exec_driver_sql("UPDATE runs SET id = 'R1-aaa' WHERE id = ?", (first,))
        conn.exec_driver_sql("UPDATE trials SET run_id = 'R1-aaa' WHERE run_id = ?", (first,))
        conn.exec_driver_sql("UPDATE runs SET id = 'R1-abb' WHERE id = ?", (second,))
        conn.exec_driver_sql("UPDATE trials SET run_id = 'R1-abb' WHERE run_id = ?", (second,))
    assert store.resolve("R1-ab") == "R1-abb"
    with pytest.raises(UsageError, match="run id 'R1-a' is ambiguous: R1-abb, R1-aaa start"):
        store.resolve("R1-a")
    with pytest.raises(StoreError, match="no run 'R2'"):
        store.resolve("R2")
    with pytest.raises(StoreError, match="no run 'R1_a'"):  # '_' is no wildcard
        store.resolve("R1_a")


# ---------------------------------------------------------------- leases


def test_a_live_run_cannot_be_taken_and_a_released_one_can(tmp_path: Path) -> None:
    store = Store(str(tmp_path / "s.db"))
    held = store.open_run(new_run())
    assert not held.resumed
    with pytest.raises(StoreError, match=f"is being run right now by process {os.getpid()}"):
        store.open_run(new_run())
    separate = store.open_run(new_run(), fresh=True)  # --fresh: another run, leased too
    assert separate.run_id != held.run_id
    separate.release()
    with store.engine.begin() as conn:
        conn.exec_driver_sql("UPDATE runs SET status = 'finished' WHERE id = ?", (separate.run_id,))
    held.release()
    again = store.open_run(new_run())
    assert again.run_id == held.run_id and again.resumed
    again.release()


def lease_held_by(store: Store, host: str, pid: int, expires: float) -> str:
    """An unfinished run of `new_run()` whose lease another process holds."""
    run_id = store.create_run(**vars(new_run()))
    with store.engine.begin() as conn:
        conn.execute(
            run_leases.insert().values(
                run_id=run_id, owner="other", host=host, pid=pid, renewed_at="then", expires=expires
            )
        )
    return run_id


def test_a_lease_held_elsewhere_is_taken_only_once_it_lapses(tmp_path: Path) -> None:
    store = Store(str(tmp_path / "s.db"))
    run_id = lease_held_by(store, "another-host", 1, time.time() + 60)
    with pytest.raises(StoreError, match=r"by process 1 on another-host.*can be resumed after"):
        store.open_run(new_run())
    with store.engine.begin() as conn:
        conn.execute(update(run_leases).values(expires=time.time() - 1))
    taken = store.open_run(new_run())
    assert taken.run_id == run_id and taken.resumed
    taken.release()


@pytest.mark.slow
def test_the_lease_of_a_process_gone_from_this_host_is_taken_at_once(tmp_path: Path) -> None:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    store = Store(str(tmp_path / "s.db"))
    run_id = lease_held_by(store, platform.node(), gone.pid, time.time() + 60)
    taken = store.open_run(new_run())
    assert taken.run_id == run_id
    taken.release()


def test_a_lease_is_renewed_while_held_and_lost_when_taken_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(lease, "RENEW_SECONDS", 0.05)
    store = Store(str(tmp_path / "s.db"))
    held = store.open_run(new_run())

    def expires() -> float:
        with store.engine.connect() as conn:
            return float(conn.execute(select(run_leases.c.expires)).scalar_one())

    first = expires()
    time.sleep(0.3)
    assert expires() > first
    assert not held.lost.is_set()
    with store.engine.begin() as conn:  # another process took the run over
        conn.execute(update(run_leases).values(owner="someone-else"))
    deadline = time.monotonic() + 5
    while not held.lost.is_set() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert held.lost.is_set()
    held.release()
    with store.engine.connect() as conn:  # releasing leaves the new holder's lease alone
        assert conn.execute(select(run_leases.c.owner)).scalar_one() == "someone-else"
