"""Reading a stored run back as the data metrics and reports need."""

from __future__ import annotations

import gc
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, func, inspect, select
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DBAPIError

from toolproof.errors import StoreError, UsageError
from toolproof.metrics.breakdown import TaskMeta
from toolproof.metrics.summary import InfraPolicy, RunSummary, run_summary
from toolproof.redact import redacted
from toolproof.store.journal import Store, failure, store_url
from toolproof.store.schema import run_tasks, runs, trials


@contextmanager
def bulk_read() -> Iterator[None]:
    """Cyclic garbage collection paused while a run's rows become Python objects and are
    summarized: rows, their columns and hashes hold no reference cycles, yet every
    collection would walk all of them again, a third of the time of reading a run of
    100,000 trials. Whatever is left to collect is collected once it resumes."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def task_metas(store: Store, run_id: str) -> list[TaskMeta]:
    return [
        TaskMeta(
            task_id=row["task_id"],
            tags=tuple(row["tags"]),
            tools={name: (tier, weight) for name, (tier, weight) in row["tools"].items()},
        )
        for row in store.run_tasks(run_id)
    ]


def stored_summary(
    store: Store,
    run_id: str,
    ks: Sequence[int] | None = None,
    infra: InfraPolicy | None = None,
) -> RunSummary:
    """The summary of a stored run; k and the infra policy default to the run's own."""
    run = store.run(run_id)
    return run_summary(run, store.outcomes(run_id), task_metas(store, run_id), ks, infra)


def open_existing(value: str | None) -> Store:
    """The store at --store for a reader that must not create one: a missing SQLite file,
    an unreachable server or a database without toolproof's tables is a StoreError."""
    url = store_url(value)
    shown = redacted(url)
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise UsageError(f"--store {shown!r}: give a SQLite file or a SQLAlchemy URL") from None
    if parsed.get_backend_name() == "sqlite":
        path = parsed.database or ""
        if path in ("", ":memory:") or not Path(path).is_file():
            raise StoreError(
                f"no results store at {path or shown}: give the file or URL `toolproof run` "
                "wrote to (--store)"
            )
    try:
        engine = create_engine(url)
    except Exception as exc:
        raise StoreError(redacted(f"--store {shown}: {exc}")) from None
    try:
        tables = set(inspect(engine).get_table_names())
    except DBAPIError as exc:
        raise StoreError(f"cannot open store {shown}: {failure(exc)}") from None
    finally:
        engine.dispose()
    if not {"runs", "trials"} <= tables:
        raise StoreError(f"{shown} holds no toolproof results (no runs and trials tables)")
    return Store(url)


def list_runs(store: Store, limit: int | None = None) -> list[dict[str, Any]]:
    """Every run (or the newest `limit`), newest first, with its trial count (`trials`), the
    tags of its tasks (`tags`, sorted), the models it ran (`models`: its --model names, else
    its agent) and the conditions it ran under (`conditions`: its variants, `clean` for the
    one without faults, drift or load)."""
    count = select(func.count()).where(trials.c.run_id == runs.c.id).scalar_subquery()
    columns = [c for c in runs.c if c.name not in ("fingerprint", "suite_hash")]
    query = select(*columns, count.label("trials")).order_by(runs.c.created_at.desc())
    if limit is not None:
        query = query.limit(limit)
    tags: dict[str, set[str]] = {}
    with store.engine.connect() as conn:
        rows = [dict(r) for r in conn.execute(query).mappings()]
        for run_id, task_tags in conn.execute(select(run_tasks.c.run_id, run_tasks.c.tags)):
            tags.setdefault(run_id, set()).update(task_tags or [])
    for row in rows:
        row["tags"] = sorted(tags.get(row["id"], ()))
        row["models"] = list(row["config"].get("models") or []) or [row["agent"]]
        row["conditions"] = [v or "clean" for v in row["config"].get("variants") or [""]]
    return rows
