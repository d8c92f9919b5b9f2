"""The run manifests: the audit evidence recorded when a run finishes.

One row per run: the manifest document (suite and task hashes, settings, versions, host,
times, one sha256 per trial) and two hashes, so `toolproof verify` can show later that the
stored verdicts are the ones the run produced. docs/ci.md describes the document.
"""

from __future__ import annotations

from sqlalchemy import JSON, Column, ForeignKey, String, Table

from toolproof.store.schema import metadata

run_manifests = Table(
    "run_manifests",
    metadata,
    Column("run_id", String(40), ForeignKey("runs.id"), primary_key=True),
    Column("recorded_at", String(40), nullable=False),
    Column("manifest_hash", String(64), nullable=False),
    Column("run_hash", String(64), nullable=False),
    Column("document", JSON, nullable=False),
)
