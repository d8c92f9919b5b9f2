"""The results store's tables (SQLite by default; any SQLAlchemy URL, PostgreSQL included).

docs/store.md describes them for teams that point their own dashboards at the store.
"""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    BigInteger,
    Column,
    Float,
    ForeignKey,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)

metadata = MetaData()

SCHEMA_VERSION = "2"

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
)

trials = Table(
    "trials",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("run_id", String(40), ForeignKey("runs.id"), nullable=False, index=True),
    Column("variant", String(200), nullable=False),
    Column("model", String(200), nullable=False),
    Column("task_id", String(200), nullable=False),
    Column("trial", Integer, nullable=False),
    Column("seed", BigInteger, nullable=False),
    Column("outcome", String(20), nullable=False),
    Column("reason", Text, nullable=False),
    Column("started_at", String(40), nullable=False),
    Column("duration_s", Float, nullable=False),
    Column("tokens_input", Integer, nullable=False),
    Column("tokens_output", Integer, nullable=False),
    Column("cost_usd", Float),
    Column("user_cost_usd", Float),
    Column("tool_calls", Integer, nullable=False),
    Column("turns", Integer, nullable=False),
    Column("model_latency_s", JSON, nullable=False),
    Column("tool_errors", Integer, nullable=False),
    Column("conditions", JSON, nullable=False),
    Column("result", JSON, nullable=False),
    UniqueConstraint("run_id", "variant", "model", "task_id", "trial", name="one_trial"),
)
