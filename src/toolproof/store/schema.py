"""The results store's tables (SQLite by default; any SQLAlchemy URL, PostgreSQL included).

docs/store.md describes them for teams that point their own dashboards at the store. Schema 3
keeps each trial's whole result compressed (`Payload`) and adds `run_leases`; schema 4 adds
`trials.judge_cost_usd` and the human `labels` (`labels.py`); schema 5 adds
`run_tasks.ungradable`; stores of schema 1 to 4 are upgraded in place when opened
(`journal.Store`).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Column,
    Connection,
    Float,
    ForeignKey,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    inspect,
    update,
)

from toolproof.errors import StoreError
from toolproof.store.payload import Payload

metadata = MetaData()

SCHEMA_VERSION = "5"

meta = Table(
    "toolproof_meta",
    metadata,
    Column("key", String(100), primary_key=True),
    Column("value", String(200), nullable=False),
)

runs = Table(
    "runs",
    metadata,
    Column("id", String(40), primary_key=True),
    Column("created_at", String(40), nullable=False),
    Column("finished_at", String(40)),
    Column("status", String(20), nullable=False),
    Column("suite_name", String(200), nullable=False),
    Column("suite_version", String(100), nullable=False),
    Column("suite_hash", String(64), nullable=False),
    Column("fingerprint", String(64), nullable=False, index=True),
    Column("agent", Text, nullable=False),
    Column("config", JSON, nullable=False),
    Column("toolproof_version", String(40), nullable=False),
    Column("host", String(200), nullable=False),
)

run_tasks = Table(
    "run_tasks",
    metadata,
    Column("run_id", String(40), ForeignKey("runs.id"), primary_key=True),
    Column("task_id", String(200), primary_key=True),
    Column("task_hash", String(64), nullable=False),
    Column("tags", JSON, nullable=False),
    Column("tools", JSON, nullable=False),
    Column("ungradable", Text),  # why nothing the task checks can fail; none before schema 5
)


def trial_key() -> list[Column[Any]]:
    """A row id and which trial of which run: how a trial and its labels are keyed."""
    return [
        Column("id", Integer, primary_key=True, autoincrement=True),
        Column("run_id", String(40), ForeignKey("runs.id"), nullable=False),
        Column("variant", String(200), nullable=False),
        Column("model", String(200), nullable=False),
        Column("task_id", String(200), nullable=False),
        Column("trial", Integer, nullable=False),
    ]


trials = Table(
    "trials",
    metadata,
    *trial_key(),
    Column("seed", BigInteger, nullable=False),
    Column("outcome", String(20), nullable=False),
    Column("reason", Text, nullable=False),
    Column("started_at", String(40), nullable=False),
    Column("duration_s", Float, nullable=False),
    Column("tokens_input", Integer, nullable=False),
    Column("tokens_output", Integer, nullable=False),
    Column("cost_usd", Float),
    Column("user_cost_usd", Float),
    Column("judge_cost_usd", Float),  # 0 when not judged; empty when the judge had no price
    Column("tool_calls", Integer, nullable=False),
    Column("turns", Integer, nullable=False),
    Column("model_latency_s", JSON, nullable=False),
    Column("tool_errors", Integer, nullable=False),
    Column("conditions", JSON, nullable=False),
    Column("result", Payload, nullable=False),
    Column("sha256", String(64)),  # its record hash (rows.record_hash); none before schema 3
    # Also the index of a run's trials: its leading column is run_id.
    UniqueConstraint("run_id", "variant", "model", "task_id", "trial", name="one_trial"),
)

run_leases = Table(
    "run_leases",
    metadata,
    Column("run_id", String(40), ForeignKey("runs.id"), primary_key=True),
    Column("owner", String(40), nullable=False),
    Column("host", String(200), nullable=False),
    Column("pid", Integer, nullable=False),
    Column("renewed_at", String(40), nullable=False),
    Column("expires", Float, nullable=False),
)
"""Which process is running a run now: the holder renews `expires` (seconds since the epoch)
while it goes; another process takes the run over only once the lease lapsed, or at once when
the holder is a process of the same host that no longer exists."""

labels = Table(
    "labels",
    metadata,
    *trial_key(),
    Column("criterion", String(200), nullable=False),
    Column("labeller", String(200), nullable=False),
    Column("label", String(10), nullable=False),
    Column("labelled_at", String(40), nullable=False),
    UniqueConstraint(
        "run_id", "variant", "model", "task_id", "trial", "criterion", "labeller", name="one_label"
    ),
)
"""People's pass/fail per trial and criterion (`outcome` or a rubric criterion): `labels.py`."""

run_manifests = Table(
    "run_manifests",
    metadata,
    Column("run_id", String(40), ForeignKey("runs.id"), primary_key=True),
    Column("recorded_at", String(40), nullable=False),
    Column("manifest_hash", String(64), nullable=False),
    Column("run_hash", String(64), nullable=False),
    Column("document", JSON, nullable=False),
)
"""The run manifests, the audit evidence recorded when a run finishes (`manifest.py`): one row
per run, the manifest document (suite and task hashes, settings, versions, host, times, one
sha256 per trial) and two hashes, so `toolproof verify` can show later that the stored
verdicts are the ones the run produced. docs/ci.md describes the document."""

UPGRADABLE = ("1", "2", "3", "4")
"""Schemas upgraded in place: 4 lacks `run_tasks.ungradable` (its tasks count as gradable),
3 also lacks `labels` and `trials.judge_cost_usd` (its trials were never judged: 0), 2 also
lacks `run_leases` and `trials.sha256` and stores results as plain JSON, 1 also lacks
`run_manifests`. Old results stay as they are (`payload.decode` reads both forms) and their
rows without a record hash (a manifest computes it)."""


def upgrade(conn: Connection, shown: str) -> None:
    """Bring a store of an UPGRADABLE schema to this one (inside the caller's transaction).
    SQLite's result column takes the compressed bytes as it is; PostgreSQL's json one becomes
    bytea holding each result's JSON text."""
    dialect = conn.dialect.name
    if dialect not in ("sqlite", "postgresql"):
        raise StoreError(
            f"store {shown} has an older results schema, which toolproof upgrades in SQLite and "
            "PostgreSQL only; use another --store (the old one stays readable by the version "
            "that wrote it)"
        )
    metadata.create_all(conn)
    columns = {c["name"] for c in inspect(conn).get_columns("trials")}
    if "sha256" not in columns:
        conn.exec_driver_sql("ALTER TABLE trials ADD COLUMN sha256 VARCHAR(64)")
    if "judge_cost_usd" not in columns:
        conn.exec_driver_sql("ALTER TABLE trials ADD COLUMN judge_cost_usd FLOAT")
        conn.exec_driver_sql("UPDATE trials SET judge_cost_usd = 0")
    if "ungradable" not in {c["name"] for c in inspect(conn).get_columns("run_tasks")}:
        conn.exec_driver_sql("ALTER TABLE run_tasks ADD COLUMN ungradable TEXT")
    if dialect == "postgresql":
        column = next(c for c in inspect(conn).get_columns("trials") if c["name"] == "result")
        if not isinstance(column["type"], LargeBinary):
            conn.exec_driver_sql(
                "ALTER TABLE trials ALTER COLUMN result TYPE bytea "
                "USING convert_to(result::text, 'UTF8')"
            )
    conn.execute(update(meta).where(meta.c.key == "schema_version").values(value=SCHEMA_VERSION))
