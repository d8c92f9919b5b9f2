"""The journal: runs and their trials, each trial written in its own transaction at once.

A run killed at any point resumes by running only the trials the journal lacks; the unique
key (run, variant, model, task, trial) makes running a trial twice impossible to record.
"""

from __future__ import annotations

import platform
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import orjson
from sqlalchemy import Engine, create_engine, event, func, inspect, select, update
from sqlalchemy.exc import DBAPIError, IntegrityError, OperationalError

from toolproof.errors import StoreError
from toolproof.records import RunConfig, RunRecord
from toolproof.results import TrialResult
from toolproof.store import manifest as _manifest  # noqa: F401 - registers run_manifests
from toolproof.store.schema import SCHEMA_VERSION, meta, metadata, run_tasks, runs, trials

DEFAULT_URL = "sqlite:///toolproof.db"


def store_url(value: str | None) -> str:
    """A SQLAlchemy URL from --store: a URL as is, a plain path as a SQLite file."""
    if not value:
        return DEFAULT_URL
    return value if "://" in value else f"sqlite:///{value}"


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class Store:
    """A results store at a SQLAlchemy URL."""

    def __init__(self, url: str | None = None) -> None:
        self.url = store_url(url)
        try:
            self.engine: Engine = create_engine(
                self.url, json_serializer=_json_text, json_deserializer=orjson.loads
            )
        except Exception as exc:
            raise StoreError(f"--store {self.url}: {exc}") from None
        if self.engine.dialect.name == "sqlite":
            event.listen(self.engine, "connect", _sqlite_pragmas)
        try:
            self._check_schema()
        except OperationalError as exc:
            raise StoreError(f"cannot open store {self.url}: {exc.orig}") from None

    def _check_schema(self) -> None:
        """Create the tables in a new store; refuse one written with another schema."""
        existing = set(inspect(self.engine).get_table_names())
        if not existing & {"runs", "trials"}:
            metadata.create_all(self.engine)
            with self.engine.begin() as conn:
                conn.execute(meta.insert().values(key="schema_version", value=SCHEMA_VERSION))
            return
        version = None
        if "toolproof_meta" in existing:
            with self.engine.connect() as conn:
                version = conn.execute(
                    select(meta.c.value).where(meta.c.key == "schema_version")
                ).scalar()
        if version == "1":  # schema 2 only adds run_manifests
            metadata.create_all(self.engine)
            with self.engine.begin() as conn:
                conn.execute(
                    update(meta).where(meta.c.key == "schema_version").values(value=SCHEMA_VERSION)
                )
            version = SCHEMA_VERSION
        if version != SCHEMA_VERSION:
            raise StoreError(
                f"store {self.url} has results schema {version or 'of an early version'}, "
                f"this toolproof writes schema {SCHEMA_VERSION}; use another --store "
                "(the old one stays readable by the version that wrote it)"
            )

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
        run_id = datetime.now(UTC).strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6]
        with self.engine.begin() as conn:
            conn.execute(
                runs.insert().values(
                    id=run_id,
                    created_at=now(),
                    status="running",
                    suite_name=suite_name,
                    suite_version=suite_version,
                    suite_hash=suite_hash,
                    fingerprint=fingerprint,
                    agent=agent,
                    config=config.stored(),
                    toolproof_version=version,
                    host=platform.node(),
                )
            )
            if tasks:
                conn.execute(run_tasks.insert(), [{"run_id": run_id, **t} for t in tasks])
        return run_id

    def latest(self, fingerprint: str, *, unfinished: bool) -> str | None:
        """The newest run with this fingerprint (only unfinished ones if asked), if any."""
        query = select(runs.c.id).where(runs.c.fingerprint == fingerprint)
        if unfinished:
            query = query.where(runs.c.status != "finished")
        query = query.order_by(runs.c.created_at.desc()).limit(1)
        with self.engine.connect() as conn:
            return conn.execute(query).scalar()

    def run(self, run_id: str) -> RunRecord:
        """A run's row, its settings typed; an unknown id is a StoreError naming the latest."""
        with self.engine.connect() as conn:
            row = conn.execute(select(runs).where(runs.c.id == run_id)).mappings().first()
            if row is None:
                known = conn.execute(
                    select(runs.c.id).order_by(runs.c.created_at.desc()).limit(5)
                ).scalars()
                hint = ", ".join(known) or "none"
                raise StoreError(f"no run '{run_id}' in {self.url} (latest: {hint})")
            return RunRecord.model_validate(dict(row))

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
                conn.execute(trials.insert(), {"run_id": run_id, **_columns(result)})
        except IntegrityError:
            raise StoreError(
                f"run {run_id} already has {result.task_id} trial {result.trial}"
            ) from None
        except DBAPIError as exc:
            raise StoreError(
                f"cannot record {result.task_id} trial {result.trial} in {self.url}: {exc.orig}"
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

    def outcomes(self, run_id: str) -> list[dict[str, Any]]:
        """The light columns of every trial of a run (no transcripts)."""
        columns = [c for c in trials.c if c.name not in ("result", "id")]
        query = (
            select(*columns)
            .where(trials.c.run_id == run_id)
            .order_by(trials.c.variant, trials.c.model, trials.c.task_id, trials.c.trial)
        )
        with self.engine.connect() as conn:
            return [dict(r) for r in conn.execute(query).mappings()]

    def results(self, run_id: str) -> Iterator[tuple[int, TrialResult]]:
        """(row id, full result) for every trial of a run, streamed."""
        query = select(trials.c.id, trials.c.result).where(trials.c.run_id == run_id)
        with self.engine.connect() as conn:
            for row_id, data in conn.execution_options(yield_per=200).execute(query):
                yield row_id, TrialResult.model_validate(data)

    def replace(self, row_id: int, result: TrialResult) -> None:
        """Overwrite a trial's verdicts and outcome (after re-grading)."""
        with self.engine.begin() as conn:
            conn.execute(update(trials).where(trials.c.id == row_id).values(**_columns(result)))

    def annotate(self, run_id: str, **config: Any) -> None:
        """Set entries of a run's config (`stopped`, `regraded_at`, ...: see RunConfig)."""
        with self.engine.begin() as conn:
            current = conn.execute(select(runs.c.config).where(runs.c.id == run_id)).scalar_one()
            merged = RunConfig.model_validate({**current, **config}).stored()
            conn.execute(update(runs).where(runs.c.id == run_id).values(config=merged))


def _columns(result: TrialResult) -> dict[str, Any]:
    return {
        "variant": result.variant,
        "model": result.model,
        "task_id": result.task_id,
        "trial": result.trial,
        "seed": result.seed,
        "outcome": result.outcome,
        "reason": result.reason.replace("\x00", "\ufffd"),
        "started_at": result.started_at,
        "duration_s": result.duration_s,
        "tokens_input": result.usage.input_tokens,
        "tokens_output": result.usage.output_tokens,
        "cost_usd": result.cost_usd,
        "user_cost_usd": result.user_cost_usd,
        "tool_calls": result.tool_calls,
        "turns": result.turns,
        "model_latency_s": [c.latency_s for c in result.transcript.model_calls()],
        "tool_errors": result.conditions.get("tool_errors", 0),
        "conditions": result.conditions,
        "result": result.model_dump(mode="json"),
    }


def _json_text(value: Any) -> str:
    return orjson.dumps(value).decode()


def _sqlite_pragmas(connection: Any, _record: Any) -> None:
    cursor = connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA busy_timeout=5000")
    cursor.close()
