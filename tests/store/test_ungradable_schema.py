"""Schema 5: a store of schema 4 gains `run_tasks.ungradable` in place, and its runs still
read, every task of them counted as gradable."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from stored import stored_run

from toolproof.store.journal import Store
from toolproof.store.manifest import record_manifest
from toolproof.store.verify import verify_run
from toolproof.summaries import stored_summary, task_metas


def test_a_store_of_schema_4_is_upgraded_and_its_tasks_count(tmp_path: Path) -> None:
    path = tmp_path / "four.db"
    store = Store(str(path))
    run_id = stored_run(store, {"cancel": "PF", "status": "PP"})
    record_manifest(store, run_id)
    store.engine.dispose()
    with sqlite3.connect(path) as conn:  # what schema 4 looked like
        conn.execute("ALTER TABLE run_tasks DROP COLUMN ungradable")
        conn.execute("UPDATE toolproof_meta SET value = '4'")
    upgraded = Store(str(path))
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT value FROM toolproof_meta").fetchone() == ("5",)
        assert conn.execute("SELECT ungradable FROM run_tasks").fetchall() == [(None,), (None,)]
    assert [meta.ungradable for meta in task_metas(upgraded, run_id)] == [None, None]
    summary = stored_summary(upgraded, run_id)
    assert summary.ungradable is None
    assert summary.counts.passed == 3 and summary.counts.total == 4
    assert verify_run(upgraded, run_id).ok
