"""Schema 4: a store of schema 3 gains the labels table and the judge's cost column in place,
and its runs still read and verify."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from stored import stored_run

from toolproof.store.journal import Store
from toolproof.store.labels import Label, run_labels, save_labels
from toolproof.store.manifest import record_manifest
from toolproof.store.verify import verify_run
from toolproof.summaries import stored_summary


def test_a_store_of_schema_3_is_upgraded_with_labels_and_judge_cost(tmp_path: Path) -> None:
    path = tmp_path / "three.db"
    store = Store(str(path))
    run_id = stored_run(store, {"cancel": "PF", "status": "PP"})
    record_manifest(store, run_id)
    store.engine.dispose()
    with sqlite3.connect(path) as conn:  # what schema 3 looked like
        conn.execute("DROP TABLE labels")
        conn.execute("ALTER TABLE trials DROP COLUMN judge_cost_usd")
        conn.execute("UPDATE toolproof_meta SET value = '3'")
    upgraded = Store(str(path))
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT value FROM toolproof_meta").fetchone() == ("5",)
        assert {row[0] for row in conn.execute("SELECT judge_cost_usd FROM trials")} == {0.0}
    assert stored_summary(upgraded, run_id).counts.passed == 3
    assert verify_run(upgraded, run_id).ok, verify_run(upgraded, run_id).problems
    key = ("", "", "cancel", 0)
    save_labels(upgraded, run_id, [Label(key, "outcome", "ann", True)])
    save_labels(upgraded, run_id, [Label(key, "outcome", "ann", False)])  # replaces
    assert run_labels(upgraded, run_id) == [Label(key, "outcome", "ann", False)]
