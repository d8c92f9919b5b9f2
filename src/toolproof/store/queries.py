"""Reading stored runs back as the data metrics and reports need."""

from __future__ import annotations

import os
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import (
    JSON,
    LargeBinary,
    Text,
    case,
    create_engine,
    func,
    inspect,
    select,
    type_coerce,
)
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DBAPIError

from toolproof.errors import StoreError, UsageError
from toolproof.redact import redacted
from toolproof.store.journal import OUTCOME_COLUMNS, Store, failure, store_url
from toolproof.store.rows import KEY_COLUMNS, outcome_dicts
from toolproof.store.schema import run_tasks, runs, trials

if TYPE_CHECKING:
    from toolproof.records.trial import TrialResult


def outcomes_and_failures(
    store: Store, run_id: str, failing: Callable[[int, bytes | str], None]
) -> tuple[list[dict[str, Any]], list[int]]:
    """A run's trial rows as `Store.outcomes` gives them (same keys, same order) and their
    row ids, read in one pass. The whole record of each trial that did not pass is handed to
    `failing` with the trial's position as the rows stream by, as stored (compressed, or JSON
    text in an older store), never parsed: the HTML report packs those while the rest is
    still being read."""
    columns = [trials.c[name] for name in OUTCOME_COLUMNS]
    light = [type_coerce(c, Text) if isinstance(c.type, JSON) else c for c in columns]
    failing_record = case(
        (trials.c.outcome != "passed", type_coerce(trials.c.result, LargeBinary)), else_=None
    )
    query = (
        select(trials.c.id, *light, failing_record)
        .where(trials.c.run_id == run_id)
        .order_by(*(trials.c[name] for name in KEY_COLUMNS))
    )
    rows: list[dict[str, Any]] = []
    ids: list[int] = []
    with store.engine.connect() as conn:
        result = conn.execution_options(yield_per=2000).execute(query)
        for part in result.partitions():
            for record in part:
                if (stored := record[-1]) is not None:
                    failing(len(ids), stored)
                ids.append(record[0])
            rows.extend(outcome_dicts(OUTCOME_COLUMNS, [record[1:-1] for record in part]))
    return rows, ids


def stored_records(
    store: Store, row_ids: Sequence[int], batch: int = 500
) -> Generator[dict[int, bytes | str]]:
    """The whole records of trials by row id, as stored, a batch of `batch` at a time on one
    connection: {row id: record}. A reader that has enough stops early by closing the
    iterator."""
    column = type_coerce(trials.c.result, LargeBinary)
    with store.engine.connect() as conn:
        for start in range(0, len(row_ids), batch):
            wanted = list(row_ids[start : start + batch])
            query = select(trials.c.id, column).where(trials.c.id.in_(wanted))
            yield {row_id: stored for row_id, stored in conn.execute(query)}


def store_file(value: str | None) -> Path | None:
    """The SQLite file --store names, its links followed; None for a server's URL, an
    in-memory database, or a value that is no URL (opening the store says why)."""
    try:
        parsed = make_url(store_url(value))
    except (ArgumentError, UsageError):
        return None
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    return Path(os.path.realpath(parsed.database))


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


@dataclass(frozen=True)
class PickedTrial:
    """One stored trial picked for `show --task`, and what else the run holds of its task
    (the header tells a reader which trial this is and how to see another)."""

    result: TrialResult
    trials: list[int]
    """The trial numbers of its task, variant and model."""
    first_failure: bool
    """No trial was asked for and this is the first that did not pass."""
    variants: list[str]
    models: list[str]


def pick_trial(
    store: Store,
    run_id: str,
    task_id: str,
    trial: int | None = None,
    variant: str | None = None,
    model: str | None = None,
) -> PickedTrial:
    """A trial of a task: the one asked for, else the first that did not pass, else the
    first; of the plain variant and the run's first model unless told. Anything the run does
    not hold is a usage error naming what it does hold."""
    rows = [r for r in store.outcomes(run_id) if r["task_id"] == task_id]
    if not rows:
        tasks = sorted({r["task_id"] for r in store.outcomes(run_id)})
        shown = ", ".join(tasks[:8]) + (f" and {len(tasks) - 8} more" if len(tasks) > 8 else "")
        raise UsageError(f"--task {task_id}: run {run_id} has no such task (tasks: {shown})")
    variants = list(dict.fromkeys(r["variant"] for r in rows))
    models = list(dict.fromkeys(r["model"] for r in rows))
    chosen_variant = _one_of("--variant", variant_key(variant), variants, run_id)
    chosen_model = _one_of("--model", model, models, run_id)
    mine = [r for r in rows if (r["variant"], r["model"]) == (chosen_variant, chosen_model)]
    numbers = sorted(r["trial"] for r in mine)
    if trial is None:
        failed = [r["trial"] for r in mine if r["outcome"] != "passed"]
        number = min(failed) if failed else numbers[0]
    elif trial in numbers:
        number = trial
    else:
        raise UsageError(
            f"--trial {trial}: task {task_id} has trials {_span(numbers)} in run {run_id}"
        )
    result = store.trial(run_id, chosen_variant, chosen_model, task_id, number)
    assert result is not None  # its light row was just read
    return PickedTrial(
        result=result,
        trials=numbers,
        first_failure=trial is None and result.outcome != "passed",
        variants=variants,
        models=models,
    )


def variant_key(name: str | None) -> str | None:
    """--variant as stored: `clean` is the plain variant's empty key."""
    return "" if name == "clean" else name


def _one_of(flag: str, wanted: str | None, held: list[str], run_id: str) -> str:
    if wanted is None:
        return "" if "" in held else held[0]
    if wanted in held:
        return wanted
    names = ", ".join(name or ("clean" if flag == "--variant" else "(none)") for name in held)
    raise UsageError(f"{flag} {wanted or 'clean'}: run {run_id} has {names} for this task")


def _span(numbers: list[int]) -> str:
    """`0 to 4`, or the numbers themselves when some are missing (an unfinished run)."""
    if numbers == list(range(numbers[0], numbers[-1] + 1)) and len(numbers) > 2:
        return f"{numbers[0]} to {numbers[-1]}"
    return ", ".join(map(str, numbers))
