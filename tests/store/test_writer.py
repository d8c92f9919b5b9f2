"""The run's trial writer: finished trials recorded by a thread, in batches, none lost; a
trial recorded twice stops it with an error that names the trial."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event
from test_journal import new_run

from toolproof.errors import StoreError
from toolproof.records.trial import TrialResult
from toolproof.store.journal import Store
from toolproof.store.writer import MAX_BATCH, TrialWriter
from toolproof.transcript import Transcript


def result(seed: int, trial: int) -> TrialResult:
    data: dict[str, Any] = {
        "task_id": "tâche-ü",
        "trial": trial,
        "seed": seed,
        "outcome": "passed",
        "transcript": Transcript(),
        "duration_s": 0.5,
        "started_at": "2026-01-01T00:00:00.123+00:00",
    }
    return TrialResult.model_validate(data)


def test_writer_records_every_queued_trial_by_close(tmp_path: Path) -> None:
    store = Store(str(tmp_path / "s.db"))
    run_id = store.create_run(**vars(new_run()))
    count = MAX_BATCH * 2 + 7  # more than one batch
    with TrialWriter(store, run_id) as writer:
        for i in range(count):
            writer.put(result(i, trial=i))
    assert store.done(run_id) == {("", "", "tâche-ü", i) for i in range(count)}
    assert sorted(r.seed for _, r in store.results(run_id)) == list(range(count))


def test_writer_names_a_trial_recorded_twice_and_keeps_the_others(tmp_path: Path) -> None:
    store = Store(str(tmp_path / "s.db"))
    run_id = store.create_run(**vars(new_run()))
    store.write(run_id, result(0, trial=3))
    writer = TrialWriter(store, run_id)
    for i in range(5):
        writer.put(result(i, trial=i))
    with pytest.raises(StoreError, match="already has tâche-ü trial 3"):
        writer.close()
    assert writer.failure is not None
    with pytest.raises(StoreError, match="trial 3"):
        writer.put(result(9, trial=9))  # a failed writer takes nothing more
    assert {key[3] for key in store.done(run_id)} >= {0, 1, 2, 3}
    assert 9 not in {key[3] for key in store.done(run_id)}


def test_write_many_is_one_transaction_per_batch(tmp_path: Path) -> None:
    store = Store(str(tmp_path / "s.db"))
    run_id = store.create_run(**vars(new_run()))
    commits = 0

    def count(_: object) -> None:
        nonlocal commits
        commits += 1

    event.listen(store.engine, "commit", count)
    store.write_many(run_id, [result(i, trial=i) for i in range(20)])
    assert commits == 1
    assert len(store.done(run_id)) == 20


def test_a_write_refused_by_another_constraint_says_what_the_database_said(
    tmp_path: Path,
) -> None:
    store = Store(str(tmp_path / "s.db"))
    run_id = store.create_run(**vars(new_run()))
    with store.engine.begin() as conn:
        conn.exec_driver_sql(
            "CREATE TRIGGER quota BEFORE INSERT ON trials WHEN NEW.trial >= 2 "
            "BEGIN SELECT RAISE(ABORT, 'trial quota reached'); END"
        )
    with pytest.raises(StoreError, match=r"cannot record tâche-ü trial 2 in .*trial quota reached"):
        store.write_many(run_id, [result(i, trial=i) for i in range(4)])
    assert {key[3] for key in store.done(run_id)} == {0, 1}
