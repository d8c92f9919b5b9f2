"""The journal: runs and their trials, each trial written as soon as it is finished (a run
hands them to its writer thread, `writer.py`, which writes a batch per transaction).

A run killed at any point resumes by running only the trials the journal lacks; the unique
key (run, variant, model, task, trial) makes running a trial twice impossible to record, and
the run's lease (`lease.py`) keeps a second process from working on a run that is still going.
"""

from __future__ import annotations

import platform
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import orjson
from pydantic import ValidationError
from sqlalchemy import (
    JSON,
    Connection,
    Engine,
    Select,
    Text,
    create_engine,
    event,
    func,
    inspect,
    select,
    text,
    type_coerce,
    update,
)
from sqlalchemy.exc import DBAPIError, IntegrityError

from toolproof.errors import StoreError, UsageError
from toolproof.records.run import RunConfig, RunRecord
from toolproof.redact import redacted
from toolproof.store import lease as leases
from toolproof.store.lease import Lease
from toolproof.store.rows import json_text, outcome_dicts, stored_row
from toolproof.store.schema import (
    SCHEMA_VERSION,
    UPGRADABLE,
    meta,
    metadata,
    run_tasks,
    runs,
    trials,
    upgrade,
)

if TYPE_CHECKING:
    from toolproof.records.trial import TrialResult

DEFAULT_URL = "sqlite:///toolproof.db"

OUTCOME_COLUMNS = tuple(c.name for c in trials.c if c.name not in ("id", "result", "sha256"))
"""A trial's light columns: what metrics read (`Store.outcomes`)."""

REQUIRED_TABLES = frozenset({"runs", "run_tasks", "trials", "run_leases"})
"""The tables every store of this schema has; without one it is damaged."""

LOCK_KEY = 0x746F6F6C70726F66
"""The PostgreSQL advisory lock that serialises toolproof's check-then-write steps."""


def store_url(value: str | None) -> str:
    """A SQLAlchemy URL from --store: a URL as is, a plain path as a SQLite file; not given,
    ./toolproof.db. An empty one is a usage error (it would quietly mean ./toolproof.db)."""
    if value is None:
        return DEFAULT_URL
    if not value.strip():
        raise UsageError(f"--store {value!r}: give a SQLite file or a SQLAlchemy URL")
    return value if "://" in value else f"sqlite:///{value}"


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class WriteFailed(StoreError):
    """The database refused to record trials (a full disk, a lost connection); `reason` is
    what it said. Nothing of the refused transaction was kept."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class NewRun:
    """The row of a run to create: what `create_run` and `open_run` write."""

    suite_name: str
    suite_version: str
    suite_hash: str
    fingerprint: str
    agent: str
    config: RunConfig
    tasks: list[dict[str, Any]]
    version: str


class Store:
    """A results store at a SQLAlchemy URL: opened (created, or upgraded from an older
    schema) safely even when several processes open it at the same moment."""

    def __init__(self, url: str | None = None) -> None:
        self.url = store_url(url)
        self.shown = redacted(self.url)
        """The URL as messages show it: without its password."""
        self._sound = False
        try:
            self.engine: Engine = create_engine(
                self.url, json_serializer=json_text, json_deserializer=orjson.loads
            )
        except Exception as exc:
            raise StoreError(redacted(f"--store {self.shown}: {exc}")) from None
        if self.engine.dialect.name == "sqlite":
            event.listen(self.engine, "connect", _sqlite_pragmas)
        try:
            self._check_schema()
        except DBAPIError as exc:
            raise StoreError(f"cannot open store {self.shown}: {failure(exc)}") from None

    def _check_schema(self) -> None:
        """Create the tables in a new store, upgrade one of an older schema, refuse another,
        and one whose tables are missing. Everything that writes happens under the write
        lock, after looking again."""
        tables = inspect(self.engine).get_table_names()
        if self._version(tables) == SCHEMA_VERSION:
            missing = sorted(REQUIRED_TABLES - set(tables))
            if missing:
                raise StoreError(
                    f"store {self.shown} is damaged (its {', '.join(missing)} table is "
                    "missing): nothing was written to it; restore it from a copy, or give "
                    "another --store"
                )
            return
        with self._write_lock() as conn:
            tables = inspect(conn).get_table_names()
            version = self._version(tables, conn)
            if version == SCHEMA_VERSION:
                return
            if not set(tables) & {"runs", "trials"}:
                metadata.create_all(conn)
                conn.execute(meta.insert().values(key="schema_version", value=SCHEMA_VERSION))
            elif version in UPGRADABLE:
                self.check_sound()
                upgrade(conn, self.shown)
            else:
                raise StoreError(
                    f"store {self.shown} has results schema {version or 'of an early version'}, "
                    f"this toolproof writes schema {SCHEMA_VERSION}; use another --store "
                    "(the old one stays readable by the version that wrote it)"
                )

    def _version(self, tables: list[str], conn: Connection | None = None) -> str | None:
        if "toolproof_meta" not in tables:
            return None
        query = select(meta.c.value).where(meta.c.key == "schema_version")
        if conn is not None:
            return conn.execute(query).scalar()
        with self.engine.connect() as own:
            return own.execute(query).scalar()

    @contextmanager
    def _write_lock(self) -> Iterator[Connection]:
        """A transaction that holds the store's write lock from its start (SQLite's BEGIN
        IMMEDIATE, a PostgreSQL advisory lock), so what it read stays true until it commits."""
        with self.engine.connect() as conn:
            if self.engine.dialect.name == "sqlite":
                conn.exec_driver_sql("BEGIN IMMEDIATE")
            elif self.engine.dialect.name == "postgresql":
                conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": LOCK_KEY})
            yield conn
            conn.commit()

    def close(self) -> None:
        """Close the store's connections (a later call opens them again)."""
        self.engine.dispose()

    def check_sound(self) -> None:
        """Refuse to write into a damaged SQLite file (SQLite's quick check, once per Store):
        trials written there could be lost with it."""
        if self._sound or self.engine.dialect.name != "sqlite":
            return
        try:
            with self.engine.connect() as conn:
                found = [row[0] for row in conn.exec_driver_sql("PRAGMA quick_check(3)")]
        except DBAPIError as exc:
            found = [failure(exc)]
        if found != ["ok"]:
            lines = [line for text in found for line in text.splitlines() if "***" not in line]
            raise StoreError(
                f"store {self.shown} is damaged ({'; '.join(lines[:2])}): nothing was written to "
                "it; restore it from a copy, or give another --store"
            )
        self._sound = True

    def create_run(
        self,
        *,
        suite_name: str,
        suite_version: str,
        suite_hash: str,
        fingerprint: str,
        agent: str,
        config: RunConfig,
        tasks: list[dict[str, Any]],
        version: str,
    ) -> str:
        """Record a new run (status `running`) and its tasks; returns its id."""
        new = NewRun(
            suite_name, suite_version, suite_hash, fingerprint, agent, config, tasks, version
        )
        self.check_sound()
        with self.engine.begin() as conn:
            return _insert_run(conn, new)

    def open_run(self, new: NewRun, *, resume: str | None = None, fresh: bool = False) -> Lease:
        """Lease the run to work on, in one step under the write lock: the run `resume`
        names, else the newest unfinished run of the same command (unless `fresh`), else a
        new run made from `new`. A run another live process holds is a StoreError."""
        self.check_sound()
        with self._write_lock() as conn:
            run_id = resume
            if run_id is None and not fresh:
                run_id = _scalar(conn.execute(_latest(new.fingerprint, unfinished=True)).scalar())
            resumed = run_id is not None
            if run_id is None:
                run_id = _insert_run(conn, new)
            owner = leases.take(conn, run_id)
        return Lease(self.engine, run_id, owner, resumed)

    def lease(self, run_id: str) -> Lease:
        """Lease an existing run (to re-grade it, say): refused while another process runs it."""
        self.check_sound()
        with self._write_lock() as conn:
            owner = leases.take(conn, run_id)
        return Lease(self.engine, run_id, owner, resumed=True)

    def latest(self, fingerprint: str, *, unfinished: bool) -> str | None:
        """The newest run with this fingerprint (only unfinished ones if asked), if any."""
        with self.engine.connect() as conn:
            return _scalar(conn.execute(_latest(fingerprint, unfinished=unfinished)).scalar())

    def resolve(self, ref: str) -> str:
        """The run id that `ref` names: a whole run id, `latest` (the newest run), or the
        start of exactly one run id. An unknown one is a StoreError naming the latest runs;
        a start that several share is a UsageError listing them."""
        query = select(runs.c.id).order_by(runs.c.created_at.desc(), runs.c.id.desc())
        if ref != "latest":
            query = query.where(runs.c.id.startswith(ref, autoescape=True))
        with self.engine.connect() as conn:
            matches = [str(run_id) for run_id in conn.execute(query.limit(11)).scalars()]
        if ref in matches or (ref == "latest" and matches):
            return ref if ref in matches else matches[0]
        if len(matches) == 1:
            return matches[0]
        if not matches:
            if ref == "latest":
                raise StoreError(f"no run in {self.shown} yet, so no 'latest' run")
            self.run(ref)  # raises, naming the latest runs
        shown = ", ".join(matches[:10]) + (", ..." if len(matches) > 10 else "")
        raise UsageError(f"run id '{ref}' is ambiguous: {shown} start with it; give more of it")

    def run(self, run_id: str) -> RunRecord:
        """A run's row, its settings typed; an unknown id is a StoreError naming the latest."""
        with self.engine.connect() as conn:
            row = conn.execute(select(runs).where(runs.c.id == run_id)).mappings().first()
            if row is None:
                known = conn.execute(
                    select(runs.c.id).order_by(runs.c.created_at.desc()).limit(5)
                ).scalars()
                hint = ", ".join(known) or "none"
                raise StoreError(f"no run '{run_id}' in {self.shown} (latest: {hint})")
        try:
            return RunRecord.model_validate(dict(row))
        except ValidationError as exc:  # stored by a toolproof that let a bad value through
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"] if p not in ("int", "float", "str"))
            raise StoreError(
                f"run {run_id} in {self.shown} cannot be read: its {where} is "
                f"{first['input']!r}, not a valid value (an earlier toolproof stored it)"
            ) from None

    def runs(self, limit: int = 20) -> list[dict[str, Any]]:
        counts = (
            select(trials.c.run_id, func.count().label("trials"))
            .group_by(trials.c.run_id)
            .subquery()
        )
        query = (
            select(runs, func.coalesce(counts.c.trials, 0).label("trials"))
            .outerjoin(counts, counts.c.run_id == runs.c.id)
            .order_by(runs.c.created_at.desc())
            .limit(limit)
        )
        with self.engine.connect() as conn:
            return [dict(r) for r in conn.execute(query).mappings()]

    def run_tasks(self, run_id: str) -> list[dict[str, Any]]:
        with self.engine.connect() as conn:
            rows = conn.execute(select(run_tasks).where(run_tasks.c.run_id == run_id))
            return [dict(r) for r in rows.mappings()]

    def done(self, run_id: str) -> set[tuple[str, str, str, int]]:
        """Keys (variant, model, task, trial) of the trials already recorded."""
        query = select(trials.c.variant, trials.c.model, trials.c.task_id, trials.c.trial).where(
            trials.c.run_id == run_id
        )
        with self.engine.connect() as conn:
            return {(v, m, t, i) for v, m, t, i in conn.execute(query)}

    def write(self, run_id: str, result: TrialResult) -> None:
        """Record one finished trial in its own transaction."""
        try:
            with self.engine.begin() as conn:
                conn.execute(trials.insert(), {"run_id": run_id, **trial_row(result)})
        except IntegrityError as exc:
            if self._holds(run_id, result):
                raise StoreError(
                    f"run {run_id} already has {result.task_id} trial {result.trial}"
                ) from None
            raise StoreError(
                f"cannot record {result.task_id} trial {result.trial} in {self.shown}: "
                f"{failure(exc)}"
            ) from None
        except DBAPIError as exc:
            raise WriteFailed(
                f"cannot record {result.task_id} trial {result.trial} in {self.shown}: "
                f"{failure(exc)}",
                failure(exc),
            ) from None

    def _holds(self, run_id: str, result: TrialResult) -> bool:
        """Whether the run has this trial recorded already (else a write that broke a
        constraint broke another one: a trigger, a check the team added)."""
        query = select(trials.c.id).where(
            trials.c.run_id == run_id,
            trials.c.variant == result.variant,
            trials.c.model == result.model,
            trials.c.task_id == result.task_id,
            trials.c.trial == result.trial,
        )
        with self.engine.connect() as conn:
            return conn.execute(query.limit(1)).first() is not None

    def write_many(self, run_id: str, results: list[TrialResult]) -> None:
        """Record finished trials in one transaction (the run's writer thread batches them).
        When one of them is already recorded, each is written on its own instead, so the
        error names that trial and the others are kept."""
        try:
            with self.engine.begin() as conn:
                conn.execute(trials.insert(), [{"run_id": run_id, **trial_row(r)} for r in results])
        except IntegrityError:
            for result in results:
                self.write(run_id, result)
        except DBAPIError as exc:
            first = results[0]
            raise WriteFailed(
                f"cannot record {first.task_id} trial {first.trial} and {len(results) - 1} "
                f"more in {self.shown}: {failure(exc)}",
                failure(exc),
            ) from None

    def spent(self, run_id: str) -> float:
        """USD spent on a run's recorded trials (unpriced trials count 0)."""
        query = select(func.coalesce(func.sum(trials.c.cost_usd), 0.0)).where(
            trials.c.run_id == run_id
        )
        with self.engine.connect() as conn:
            return float(conn.execute(query).scalar_one())

    def finish(self, run_id: str) -> None:
        with self.engine.begin() as conn:
            conn.execute(
                update(runs).where(runs.c.id == run_id).values(status="finished", finished_at=now())
            )

    def outcomes(self, run_id: str, conn: Connection | None = None) -> list[dict[str, Any]]:
        """The light columns of every trial of a run (no transcripts), in trial order; read
        on `conn` when given."""
        columns = [trials.c[name] for name in OUTCOME_COLUMNS]
        query = (
            select(*(type_coerce(c, Text) if isinstance(c.type, JSON) else c for c in columns))
            .where(trials.c.run_id == run_id)
            .order_by(trials.c.variant, trials.c.model, trials.c.task_id, trials.c.trial)
        )
        # All rows at once as plain tuples, JSON parsed after: on 100,000 trials this takes a
        # third of the time of mappings fetched one by one.
        with nullcontext(conn) if conn is not None else self.engine.connect() as reading:
            return outcome_dicts(OUTCOME_COLUMNS, reading.execute(query).all())

    def results(self, run_id: str) -> Iterator[tuple[int, TrialResult]]:
        """(row id, full result) for every trial of a run, streamed."""
        from toolproof.records.trial import TrialResult  # the graders' types: not for every reader

        query = select(trials.c.id, trials.c.result).where(trials.c.run_id == run_id)
        with self.engine.connect() as conn:
            for row_id, data in conn.execution_options(yield_per=200).execute(query):
                yield row_id, TrialResult.model_validate(data)

    def trial(
        self, run_id: str, variant: str, model: str, task_id: str, trial: int
    ) -> TrialResult | None:
        """One trial's full result; None when the run has no such trial."""
        from toolproof.records.trial import TrialResult

        query = select(trials.c.result).where(
            trials.c.run_id == run_id,
            trials.c.variant == variant,
            trials.c.model == model,
            trials.c.task_id == task_id,
            trials.c.trial == trial,
        )
        with self.engine.connect() as conn:
            data = conn.execute(query).scalar_one_or_none()
        return None if data is None else TrialResult.model_validate(data)

    def replace(self, row_id: int, result: TrialResult) -> None:
        """Overwrite a trial's verdicts and outcome (after re-grading)."""
        self.check_sound()
        with self.engine.begin() as conn:
            conn.execute(update(trials).where(trials.c.id == row_id).values(**trial_row(result)))

    def annotate(self, run_id: str, **config: Any) -> None:
        """Set entries of a run's config (`stopped`, `regraded_at`, ...: see RunConfig)."""
        with self.engine.begin() as conn:
            current = conn.execute(select(runs.c.config).where(runs.c.id == run_id)).scalar_one()
            merged = RunConfig.model_validate({**current, **config}).stored()
            conn.execute(update(runs).where(runs.c.id == run_id).values(config=merged))


def trial_row(result: TrialResult) -> dict[str, Any]:
    """A trial's row as stored: its columns, its compressed result and its record hash."""
    return stored_row(result.model_dump(mode="json"))


def _insert_run(conn: Connection, new: NewRun) -> str:
    run_id = datetime.now(UTC).strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6]
    conn.execute(
        runs.insert().values(
            id=run_id,
            created_at=now(),
            status="running",
            suite_name=new.suite_name,
            suite_version=new.suite_version,
            suite_hash=new.suite_hash,
            fingerprint=new.fingerprint,
            agent=new.agent,
            config=new.config.stored(),
            toolproof_version=new.version,
            host=platform.node(),
        )
    )
    if new.tasks:
        conn.execute(run_tasks.insert(), [{"run_id": run_id, **t} for t in new.tasks])
    return run_id


def _latest(fingerprint: str, *, unfinished: bool) -> Select[Any]:
    query = select(runs.c.id).where(runs.c.fingerprint == fingerprint)
    if unfinished:
        query = query.where(runs.c.status != "finished")
    return query.order_by(runs.c.created_at.desc()).limit(1)


def _scalar(value: Any) -> str | None:
    return None if value is None else str(value)


def failure(exc: DBAPIError) -> str:
    """The first line of what the database said, for a one-line error (no password in it)."""
    return redacted((str(exc.orig).strip().splitlines() or ["failed"])[0])


def _sqlite_pragmas(connection: Any, _record: Any) -> None:
    cursor = connection.cursor()
    cursor.execute("PRAGMA busy_timeout=10000")  # first: switching to WAL may wait for a lock
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()
