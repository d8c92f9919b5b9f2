"""Reading stores for the dashboard: an existing store is opened and never created, and the
dashboard reads PostgreSQL as it reads SQLite."""

from __future__ import annotations

from pathlib import Path

import pytest
from dashboard import DATA_BLOCK, fill_store, get, serving
from sqlalchemy import create_engine, inspect

from toolproof.errors import StoreError, UsageError
from toolproof.store.queries import list_runs, open_existing


def test_open_existing_never_creates_a_store(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no results store at"):
        open_existing(str(tmp_path / "missing.db"))
    with pytest.raises(StoreError, match="no results store at"):
        open_existing("sqlite://")
    with pytest.raises(UsageError, match="give a SQLite file or a SQLAlchemy URL"):
        open_existing("not a url://x")
    assert not (tmp_path / "missing.db").exists()


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
