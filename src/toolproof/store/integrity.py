"""The hashes that make stored results audit evidence, and a run's trials hashed as stored.

A trial's record hash is the sha256 of its result's bytes exactly as the store holds them and
its row's other columns (outcome, reason, tokens, cost...): `rows.record_hash`, written along
with the trial. The run hash is the sha256 over the trial hashes in a fixed order. Reading a
run back here hashes what the store holds now without parsing a single result; a manifest of
the first format (one hash per trial, of its result's canonical JSON) is the exception, and
opens every result. `manifest.py` records these hashes when a run finishes; `verify.py`
recomputes and compares them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from operator import itemgetter
from typing import Any, NamedTuple

import orjson
from sqlalchemy import JSON, Connection, LargeBinary, select, text, type_coerce

from toolproof.perf import gc_paused
from toolproof.store import payload
from toolproof.store.journal import OUTCOME_COLUMNS, Store
from toolproof.store.rows import (
    HASHED_COLUMNS,
    KEY_COLUMNS,
    TrialKey,
    outcome_dicts,
    record_hash,
    row_columns,
)
from toolproof.store.schema import trials


def canonical_json(value: Any) -> bytes:
    """JSON with sorted keys and no whitespace: equal data, equal bytes."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def trial_hash(result: Any) -> str:
    """sha256 of a trial's `result` JSON, canonical: the first format's trial hash."""
    return sha256(canonical_json(result))


def run_hash(run_id: str, hashes: Mapping[TrialKey, str]) -> str:
    """sha256 over the run id and its trials' hashes, one line per trial ordered by
    (variant, model, task, trial): `variant<TAB>model<TAB>task<TAB>trial<TAB>sha256`."""
    return hash_lines(run_id, sorted((*key, digest) for key, digest in hashes.items()))


def hash_lines(run_id: str, ordered: Iterable[tuple[str, str, str, int, str]]) -> str:
    """The run hash over (variant, model, task, trial, sha256) rows already in key order."""
    lines = [f"{run_id}\n"]
    lines.extend(f"{v}\t{m}\t{t}\t{i}\t{h}\n" for v, m, t, i, h in ordered)
    return sha256("".join(lines).encode())


def trial_name(key: TrialKey) -> str:
    """'task cancel trial 2 [faults:flaky] (openai/gpt-4o)': how a trial is named to users."""
    variant, model, task_id, index = key
    out = f"task {task_id} trial {index}"
    if variant:
        out += f" [{variant}]"
    if model:
        out += f" ({model})"
    return out


class StoredTrial(NamedTuple):
    """One trial row as the store holds it now, hashed."""

    key: TrialKey
    row_id: int
    hash: str
    seed: int
    outcome: str
    problems: tuple[str, ...] = ()


def _scan(
    conn: Connection, run_id: str, first_format: bool, outcomes: list[dict[str, Any]] | None
) -> list[StoredTrial]:
    """Every trial of the run, hashed from what the store holds (`rows.record_hash` over the
    result's bytes and the columns read back), in key order. Only the first format opens
    every result (its hash is of the result's canonical JSON). Given `outcomes`, the same
    pass appends each trial's light columns to it, as `Store.outcomes` gives them: where the
    gate cannot verify aside, it reads a run once for its metrics and its verification. One
    tight loop: a run may hold 100,000 trials."""
    read = ["id", *KEY_COLUMNS, "result", *HASHED_COLUMNS]
    if outcomes is not None:
        read += [n for n in OUTCOME_COLUMNS if n not in read]
    # Plain SQL: its rows come as the driver gives them, without a conversion per value
    # (JSON columns as their stored text, the result as its stored bytes).
    fields = [f"CAST({n} AS TEXT)" if isinstance(trials.c[n].type, JSON) else n for n in read]
    query = text(
        f"SELECT {', '.join(fields)} FROM trials WHERE run_id = :run_id "
        f"ORDER BY {', '.join(KEY_COLUMNS)}"
    ).bindparams(run_id=run_id)
    seed_at, outcome_at = (read.index(name) for name in ("seed", "outcome"))
    end = 6 + len(HASHED_COLUMNS)
    pick = itemgetter(*(read.index(name) for name in OUTCOME_COLUMNS if name in read))
    as_bytes = payload.stored_bytes
    out: list[StoredTrial] = []
    light: list[tuple[Any, ...]] = []
    for part in conn.execute(query).partitions(5000):
        for row in part:
            stored = row[5] if type(row[5]) is bytes else as_bytes(row[5])
            problems: tuple[str, ...] = ()
            if first_format:
                data, problems = _opened(stored)
                digest = trial_hash(data) if data is not None else sha256(stored)
            else:
                digest = record_hash(stored, row[6:end])
            key = (row[1], row[2], row[3], row[4])
            out.append(StoredTrial(key, row[0], digest, row[seed_at], row[outcome_at], problems))
            if outcomes is not None:
                light.append(pick(row))
    if outcomes is not None:
        outcomes.extend(outcome_dicts(OUTCOME_COLUMNS, light))
    out.sort(key=itemgetter(0))
    return out


def written_trials(store: Store, run_id: str) -> list[StoredTrial]:
    """Every trial of the run with the record hash written along with it, in key order: what
    a manifest records, without reading a result. Rows from before schema 3 have none: then
    every trial is hashed from what the store holds."""
    keys = [trials.c[name] for name in KEY_COLUMNS]
    query = (
        select(trials.c.id, *keys, trials.c.sha256, trials.c.seed, trials.c.outcome)
        .where(trials.c.run_id == run_id)
        .order_by(*keys)
    )
    with store.engine.connect() as conn:
        rows = conn.execute(query).all()
    if any(row[5] is None for row in rows):
        return read_trials(store, run_id)
    out = [StoredTrial((r[1], r[2], r[3], r[4]), r[0], r[5], r[6], r[7]) for r in rows]
    out.sort(key=itemgetter(0))
    return out


def _opened(stored: bytes) -> tuple[Any, tuple[str, ...]]:
    """A stored result parsed, or why it cannot be."""
    try:
        data = payload.decode(stored)
        row_columns(data)
    except Exception as exc:  # damaged bytes, bad JSON, or not a trial's result any more
        return None, (f"its stored result no longer parses ({type(exc).__name__})",)
    return data, ()


def read_trials(
    store: Store,
    run_id: str,
    first_format: bool = False,
    outcomes: list[dict[str, Any]] | None = None,
) -> list[StoredTrial]:
    """Every trial of the run as stored now, ordered by (variant, model, task, trial); given
    `outcomes`, each trial's light columns are appended to it in that order too."""
    with gc_paused(), store.engine.connect() as conn:
        found = _scan(conn, run_id, first_format, outcomes)
    if first_format:
        disagreeing = disagreements(store, [t.row_id for t in found if not t.problems])
        found = [t._replace(problems=tuple(disagreeing.get(t.row_id, t.problems))) for t in found]
    return found


def disagreements(store: Store, row_ids: Iterable[int]) -> dict[int, list[str]]:
    """For rows by id: each column that disagrees with the row's own stored result."""
    out: dict[int, list[str]] = {}
    names = [c.name for c in trials.c if c.name != "result"]
    raw = type_coerce(trials.c.result, LargeBinary)
    ids = list(row_ids)
    with store.engine.connect() as conn:
        for start in range(0, len(ids), 500):
            query = select(*(trials.c[n] for n in names), raw).where(
                trials.c.id.in_(ids[start : start + 500])
            )
            for record in conn.execute(query):
                row = dict(zip(names, record, strict=False))
                data, problems = _opened(payload.stored_bytes(record[-1]))
                found = list(problems)
                if data is not None:
                    for name, value in row_columns(data).items():
                        if row[name] != value:
                            found.append(
                                f"trials.{name} is {row[name]!r} but its stored result says "
                                f"{value!r}"
                            )
                if found:
                    out[row["id"]] = found
    return out
