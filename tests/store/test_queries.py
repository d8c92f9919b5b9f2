"""Reading stores for the dashboard and the HTML report: an existing store is opened and never
created, the dashboard reads PostgreSQL as it reads SQLite, and the report reads a run's rows
and records through the store's queries."""

from __future__ import annotations

from pathlib import Path

import pytest
from dashboard import DATA_BLOCK, fill_store, get, serving
from sqlalchemy import create_engine, inspect
from stored import stored_run

from toolproof.errors import StoreError, UsageError
from toolproof.store import Store, payload
from toolproof.store.queries import (
    list_runs,
    open_existing,
    outcomes_and_failures,
    stored_records,
)


def test_open_existing_never_creates_a_store(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no results store at"):
        open_existing(str(tmp_path / "missing.db"))
    with pytest.raises(StoreError, match="no results store at"):
        open_existing("sqlite://")
    with pytest.raises(UsageError, match="give a SQLite file or a SQLAlchemy URL"):
        open_existing("not a url://x")
    assert not (tmp_path / "missing.db").exists()


@pytest.mark.slow
def test_the_dashboard_reads_a_postgresql_store(fresh_postgres_url: str, tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="holds no toolproof results"):
        open_existing(fresh_postgres_url)
    engine = create_engine(fresh_postgres_url)
    assert inspect(engine).get_table_names() == []  # still empty: nothing was created
    engine.dispose()
    runs = fill_store(fresh_postgres_url, tmp_path)
    store = open_existing(fresh_postgres_url)
    rows = list_runs(store)
    assert [r["id"] for r in rows] == [runs.shop, *reversed(runs.mini)]
    assert rows[0]["tags"] == ["lookup", "refund"] and rows[0]["trials"] == 6
    assert rows[-2]["models"] == ["openai-compatible/alpha", "openai-compatible/beta"]
    store.engine.dispose()
    with serving(fresh_postgres_url) as base:
        listed = get(f"{base}api/runs?suite=mini&model=oracle").json()
        assert [r["id"] for r in listed["runs"]] == [runs.oracle_again, runs.oracle]
        trends = get(f"{base}api/trends?suite=mini").json()
        pass_at_1 = {s["model"]: s["values"] for s in trends["metrics"][0]["series"]}
        assert pass_at_1["openai-compatible/alpha"] == [None, 0.5, None, None, None]
        assert pass_at_1["oracle"] == [1.0, None, None, None, 1.0]
        report = get(f"{base}runs/{runs.models}/report")
        assert report.status == 200 and DATA_BLOCK.search(report.text)
        assert get(f"{base}runs/no-such-run/report").status == 404


def test_a_run_read_for_the_report_is_the_run_the_metrics_read(tmp_path: Path) -> None:
    """`outcomes_and_failures` gives the very rows `Store.outcomes` gives, their row ids, and
    the stored record of every trial that did not pass, at its position, as it streams."""
    store = Store(str(tmp_path / "runs.db"))
    run = stored_run(store, {"a": "PFP", "b": "IPP"}, variants=["", "faults:flaky"])
    failing: dict[int, bytes | str] = {}
    rows, ids = outcomes_and_failures(store, run, failing.__setitem__)
    assert rows == store.outcomes(run)
    assert len(set(ids)) == len(rows) == 12
    assert sorted(failing) == [i for i, row in enumerate(rows) if row["outcome"] != "passed"]
    assert [rows[i]["outcome"] for i in sorted(failing)] == ["failed", "infra_error"] * 2
    for at, stored in failing.items():
        record = payload.decode(stored)
        assert (record["task_id"], record["trial"]) == (rows[at]["task_id"], rows[at]["trial"])


def test_stored_records_come_by_row_id_in_batches(tmp_path: Path) -> None:
    store = Store(str(tmp_path / "runs.db"))
    run = stored_run(store, {"a": "PPPPP"})
    _, ids = outcomes_and_failures(store, run, lambda at, stored: None)
    wanted = [ids[4], ids[0], ids[2], 10**9]  # one id the store does not hold
    batches = list(stored_records(store, wanted, batch=2))
    assert [sorted(batch) for batch in batches] == [sorted(wanted[:2]), [ids[2]]]
    trials = {row_id: payload.decode(r)["trial"] for b in batches for row_id, r in b.items()}
    assert trials == {ids[4]: 4, ids[0]: 0, ids[2]: 2}
