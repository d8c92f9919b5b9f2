"""PostgreSQL as the team's store behaves as SQLite does: a run written through the command
line, killed and resumed, shown, gated, compared and verified; stored values round-trip."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import JSON, MetaData, create_engine, select, text
from stored import invoke, mini_suite, stored_run
from together import SCHEMA_2, open_at_once

from toolproof.records.trial import TrialResult
from toolproof.runner.run import RunRequest, run_suite
from toolproof.store.integrity import read_trials, written_trials
from toolproof.store.journal import Store
from toolproof.store.manifest import load_manifest, record_manifest
from toolproof.store.schema import runs, trials
from toolproof.store.verify import verify_run
from toolproof.suite import load_suite
from toolproof.transcript import Transcript

# Slow: a real PostgreSQL server (tests/store/conftest.py).
pytestmark = pytest.mark.slow

CLI = str(Path(sys.executable).parent / "toolproof")
SLOW_SCRIPT = """
latency_s: 0.05
default:
  - tool_calls: [{name: get_order, arguments: {order_id: B}}]
  - text: "Order B has shipped."
"""


def trial_keys(url: str) -> list[tuple[str, int]]:
    try:
        store = Store(url)
        with store.engine.connect() as conn:
            rows = conn.execute(select(trials.c.task_id, trials.c.trial)).all()
        store.engine.dispose()
        return [(t, i) for t, i in rows]
    except Exception:  # the run has not created its tables yet
        return []


def cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    result = subprocess.run(
        [CLI, *map(str, args)], capture_output=True, text=True, timeout=180, env=env
    )
    assert "Traceback" not in result.stdout + result.stderr, result.stderr
    return result


def comparable(summary: dict[str, Any]) -> dict[str, Any]:
    """A summary without what differs between two runs of the same command (ids, timings)."""
    timing = ("latency", "throughput")
    out = {k: v for k, v in summary.items() if k not in ("run_id", "models", "tasks", "metrics")}
    out["metrics"] = {
        k: v for k, v in summary["metrics"].items() if not any(t in k for t in timing)
    }
    out["tasks"] = [{k: v for k, v in task.items() if k != "metrics"} for task in summary["tasks"]]
    return out


def test_a_run_on_postgresql_resumes_shows_gates_and_verifies(
    postgres_url: str, tmp_path: Path
) -> None:
    mini_dir = mini_suite(tmp_path / "mini")
    script = tmp_path / "slow.yaml"
    script.write_text(SLOW_SCRIPT, encoding="utf-8")
    args = ["--agent", f"scripted:{script}", "--trials", "20", "--k", "1,5", "--concurrency", "2"]
    command = [CLI, "run", str(mini_dir), *args, "--store", postgres_url]
    victim = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and len(trial_keys(postgres_url)) < 10:
        time.sleep(0.1)
    victim.send_signal(signal.SIGKILL)
    victim.wait()
    before = trial_keys(postgres_url)
    assert 10 <= len(before) < 40, "the run must be killed part-way"

    resumed = subprocess.run(command, capture_output=True, text=True, timeout=180)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{len(before)} of 40 trials done" in resumed.stdout and "resuming" in resumed.stdout
    after = Counter(trial_keys(postgres_url))
    assert len(after) == 40 and set(after.values()) == {1}
    store = Store(postgres_url)
    with store.engine.connect() as conn:
        [(run_id, status)] = conn.execute(select(runs.c.id, runs.c.status)).all()
    assert status == "finished"

    # The same command on SQLite gives the same summary.
    shown = cli("show", run_id, "--store", postgres_url, "--json", tmp_path / "pg.json")
    assert shown.returncode == 0, shown.stderr
    request = RunRequest(agent=f"scripted:{script}", trials=20, k=[1, 5], concurrency=2)
    reference = asyncio.run(run_suite(load_suite(mini_dir), request, Store(str(tmp_path / "l.db"))))
    pg_summary = json.loads((tmp_path / "pg.json").read_text())
    lite_summary = reference.summary.as_json()
    assert pg_summary["counts"] == {"passed": 20, "failed": 20, "infra_error": 0, "total": 40}
    assert comparable(pg_summary) == comparable(lite_summary)

    # Gate: a threshold the run meets passes, one it misses fails; JUnit from PostgreSQL.
    junit = tmp_path / "junit.xml"
    ok = invoke("gate", run_id, "--store", postgres_url, "--min", "pass@1=0.5", "--junit", junit)
    assert ok.code == 0, ok.stdout
    assert 'name="cancel"' in junit.read_text()
    blocked = invoke("gate", run_id, "--store", postgres_url, "--min", "pass^5=0.9")
    assert blocked.code == 1
    assert "pass^5 = 0.5000 is below 0.9" in blocked.stdout

    # Verify: the manifest recorded at the end of the run matches; tampering is caught.
    if load_manifest(store, run_id) is None:
        record_manifest(store, run_id)
    verified = invoke("verify", run_id, "--store", postgres_url)
    assert verified.code == 0, verified.stdout
    with store.engine.begin() as conn:
        conn.execute(
            text(
                "UPDATE trials SET outcome = 'passed', reason = '' "
                "WHERE run_id = :run AND task_id = 'cancel' AND trial = 7"
            ),
            {"run": run_id},
        )
    tampered = invoke("verify", run_id, "--store", postgres_url)
    assert tampered.code == 1
    assert "task cancel trial 7: outcome is 'passed', the manifest recorded 'failed'" in (
        tampered.stdout
    )
    gated = invoke("gate", run_id, "--store", postgres_url, "--min", "pass@1=0.5")
    assert gated.code == 1 and "manifest verified" in gated.stdout


def result(seed: int, **changes: Any) -> TrialResult:
    data: dict[str, Any] = {
        "task_id": "tâche-ü",
        "trial": 0,
        "seed": seed,
        "outcome": "failed",
        "reason": "must_say: not said: '€ 12,50' — « quoted »",
        "transcript": Transcript(),
        "conditions": {"tool_errors": 2, "failed": {"rate_limit": 1}, "nested": [1.5, None]},
        "cost_usd": 0.1 + 0.2,
        "duration_s": 1e-7,
        "started_at": "2026-01-01T00:00:00.123+00:00",
        **changes,
    }
    return TrialResult.model_validate(data)


def test_stored_values_round_trip_as_in_sqlite(fresh_postgres_url: str, tmp_path: Path) -> None:
    pg, lite = Store(fresh_postgres_url), Store(str(tmp_path / "lite.db"))
    written = [
        result(2**63 - 1),  # the largest seed a trial can have
        result(0, trial=1, outcome="passed", reason="", cost_usd=None),
        result(5, trial=2, transcript=Transcript.model_validate({"events": []})),
    ]
    for store in (pg, lite):
        run_id = stored_run(store, {"tâche-ü": ""})
        for item in written:
            store.write(run_id, item)
        store.finish(run_id)
        back = sorted((r for _, r in store.results(run_id)), key=lambda r: r.trial)
        assert [r.model_dump() for r in back] == [r.model_dump() for r in written]
        rows = store.outcomes(run_id)
        assert [r["seed"] for r in rows] == [2**63 - 1, 0, 5]
        assert rows[0]["conditions"] == written[0].conditions
        assert [t.hash for t in written_trials(store, run_id)] == [
            t.hash for t in read_trials(store, run_id)
        ]
        record_manifest(store, run_id)
        assert verify_run(store, run_id).ok
    # The trial hashes do not depend on the database: the stored bytes and columns are the same.
    [pg_run] = [r["id"] for r in pg.runs()]
    [lite_run] = [r["id"] for r in lite.runs()]
    assert [t.hash for t in read_trials(pg, pg_run)] == [
        t.hash for t in read_trials(lite, lite_run)
    ]


def test_compare_on_postgresql(fresh_postgres_url: str) -> None:
    store = Store(fresh_postgres_url)
    base = {f"t{i}": "PPPPPP" for i in range(4)}
    a = stored_run(store, base, k=[1, 3])
    b = stored_run(store, {**base, "t0": "FFFFFF"}, k=[1, 3])
    compared = invoke("compare", a, b, "--store", fresh_postgres_url)
    assert compared.code == 0, compared.stdout
    assert "1 task(s) passed fewer matched trials" in compared.stdout


def test_a_nul_character_in_a_reason_is_stored(fresh_postgres_url: str) -> None:
    store = Store(fresh_postgres_url)
    run_id = stored_run(store, {"t": ""})
    store.write(run_id, result(1, task_id="t", reason="infra: provider said 'A\u0000B'"))
    [row] = store.outcomes(run_id)
    assert row["reason"].startswith("infra: provider said")


def test_a_long_agent_label_is_stored(fresh_postgres_url: str) -> None:
    store = Store(fresh_postgres_url)
    run_id = stored_run(store, {"t": "P"}, agent="scripted:/" + "x" * 240 + "/script.yaml")
    assert store.run(run_id).agent.endswith("/script.yaml")


def test_a_postgresql_store_of_the_previous_schema_is_upgraded(fresh_postgres_url: str) -> None:
    """The schema-2 fixture's tables and rows, as that version made them in PostgreSQL (json
    columns), become schema 3: results in bytea, readable, manifests verified."""
    old = MetaData()
    lite = create_engine(f"sqlite:///{SCHEMA_2}")
    old.reflect(lite)
    pg = create_engine(fresh_postgres_url)
    old.create_all(pg)
    with lite.connect() as source, pg.begin() as target:
        for table in old.sorted_tables:
            rows = [dict(r) for r in source.execute(table.select()).mappings()]
            if rows:
                target.execute(table.insert(), rows)
        # The rows came with their ids: the id sequence goes on after them, as it had.
        target.execute(text("SELECT setval('trials_id_seq', (SELECT max(id) FROM trials))"))
    assert isinstance(old.tables["trials"].c.result.type, JSON)
    pg.dispose()
    store = Store(fresh_postgres_url)
    with store.engine.connect() as conn:
        kind = conn.execute(
            text("SELECT data_type FROM information_schema.columns WHERE column_name = 'result'")
        ).scalar_one()
    assert kind == "bytea"
    oracle = "20261201-120125-811e95"
    assert len([r for _, r in store.results(oracle)]) == 6
    assert verify_run(store, oracle).ok, verify_run(store, oracle).problems
    run_id = stored_run(store, {"cancel": "PF"})
    record_manifest(store, run_id)
    assert verify_run(store, run_id).ok


def test_processes_create_one_postgresql_store_at_the_same_moment(
    fresh_postgres_url: str, tmp_path: Path
) -> None:
    assert open_at_once(fresh_postgres_url, 8, tmp_path) == []
    store = Store(fresh_postgres_url)
    with store.engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM toolproof_meta")).scalar_one() == 1
