"""A run's manifest: the audit evidence recorded when the run finishes.

The manifest is one JSON document: the suite (name, version, content hash, path), every task's
content hash, the effective settings (agent, models and their parameters, variants, seed,
trials, k, ...; their secrets redacted), toolproof's version, the host, the start and end
times, and one sha256 per trial, its record hash (`integrity.py`). The run hash is the sha256
over the trial hashes in a fixed order; the manifest hash is the sha256 of the whole canonical
document. Both are stored in `run_manifests`; docs/ci.md describes the document.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import orjson
from sqlalchemy import Text, cast, select

from toolproof.perf import gc_paused
from toolproof.store.integrity import StoredTrial, canonical_json, hash_lines, read_trials, sha256
from toolproof.store.journal import Store, now
from toolproof.store.rows import KEY_COLUMNS, JsonText
from toolproof.store.schema import run_manifests, trials

MANIFEST_FORMAT = "toolproof-manifest/2"
FIRST_FORMAT = "toolproof-manifest/1"

Entry = tuple[str, str, str, int, int, str, str]
"""A manifest's trial entry: variant, model, task, trial, seed, outcome, sha256."""


def _written_entries(store: Store, run_id: str) -> list[Entry]:
    """The manifest's trial entries as `Entry` tuples, in key order, from the record
    hashes written along with the trials: plain rows, as a manifest of 100,000 trials must be
    recorded in well under a second. Rows from before schema 3 have no hash: then every
    trial is hashed from what the store holds."""
    keys = [trials.c[name] for name in KEY_COLUMNS]
    query = (
        select(*keys, trials.c.seed, trials.c.outcome, trials.c.sha256)
        .where(trials.c.run_id == run_id)
        .order_by(*keys)
    )
    with gc_paused(), store.engine.connect() as conn:
        rows: list[Entry] = [tuple(row) for row in conn.execute(query).all()]
    if any(row[6] is None for row in rows):
        return [(*t.key, t.seed, t.outcome, t.hash) for t in read_trials(store, run_id)]
    return rows


SECTIONS = ("run", "suite", "tasks", "models", "variants", "seed", "settings")
"""What the manifest says about the run besides its trials."""


def about(store: Store, run_id: str) -> dict[str, Any]:
    """The manifest's SECTIONS, as the store holds them now."""
    run = store.run(run_id)
    config = run.config.redacted()
    tasks = {row["task_id"]: row["task_hash"] for row in store.run_tasks(run_id)}
    return {
        "run": {
            "id": run_id,
            "status": run.status,
            "created_at": run.created_at,
            "finished_at": run.finished_at,
            "fingerprint": run.fingerprint,
            "agent": run.agent,
            "toolproof_version": run.toolproof_version,
            "host": run.host,
        },
        "suite": {
            "name": run.suite_name,
            "version": run.suite_version,
            "hash": run.suite_hash,
            "path": config.suite_path,
        },
        "tasks": dict(sorted(tasks.items())),
        "models": {
            "agent": config.agent,
            "models": config.models,
            "parameters": config.model_flags.given(),
            "user_model": config.user_model,
        },
        "variants": config.variants,
        "seed": config.seed,
        "settings": config.stored(),
    }


def entries(stored: list[StoredTrial]) -> list[dict[str, Any]]:
    """The manifest's trial entries, in key order."""
    return _entry_dicts([(*t.key, t.seed, t.outcome, t.hash) for t in stored])


def _entry_dicts(rows: list[Entry]) -> list[dict[str, Any]]:
    """(variant, model, task, trial, seed, outcome, sha256) rows as the manifest's entries."""
    return [
        {"variant": v, "model": m, "task": t, "trial": i, "seed": s, "outcome": o, "sha256": h}
        for v, m, t, i, s, o, h in rows
    ]


def build_manifest(
    store: Store, run_id: str, stored: list[StoredTrial] | None = None
) -> dict[str, Any]:
    """The manifest document of a run as the store holds it now."""
    if stored is None:
        rows = _written_entries(store, run_id)
    else:
        rows = [(*t.key, t.seed, t.outcome, t.hash) for t in stored]
    rows.sort()  # in key order already, unless the database collates otherwise
    counts = {"passed": 0, "failed": 0, "infra_error": 0}
    counts.update(Counter(row[5] for row in rows))
    with gc_paused():
        trial_entries = _entry_dicts(rows)
    return {
        "format": MANIFEST_FORMAT,
        **about(store, run_id),
        "counts": {**counts, "total": len(rows)},
        "trials": trial_entries,
        "run_hash": hash_lines(run_id, [(*row[:4], row[6]) for row in rows]),
    }


@dataclass(frozen=True)
class Manifest:
    """A run's recorded manifest, its document parsed when first used."""

    run_id: str
    recorded_at: str
    manifest_hash: str
    run_hash: str
    written: bytes
    """The document as the store holds it: its canonical JSON, unless an older version
    wrote it."""

    @cached_property
    def document(self) -> dict[str, Any]:
        parsed: dict[str, Any] = orjson.loads(self.written)
        return parsed

    @cached_property
    def stored_intact(self) -> bool:
        """Whether the stored text is the very canonical JSON the recorded hash was taken of."""
        return sha256(self.written) == self.manifest_hash

    def intact(self) -> bool:
        """Whether the document is the one its recorded hash was taken of."""
        if self.stored_intact:
            return True
        return sha256(canonical_json(self.document)) == self.manifest_hash

    @cached_property
    def head(self) -> dict[str, Any]:
        """The document without its trial entries, which verifying an intact run never
        needs: 100,000 of them take longer to parse than all the rest of the check. In the
        canonical text they are the last key but one, before `variants`, and neither key
        can occur inside a JSON string (its quotes would be escaped), so they are cut out
        of the text unparsed."""
        text = self.written
        if self.stored_intact:
            end = text.rfind(b',"variants":')
            start = text.rfind(b',"trials":[', 0, end)
            if 0 < start < end:
                parsed: dict[str, Any] = orjson.loads(text[:start] + text[end:])
                return parsed
        return {key: value for key, value in self.document.items() if key != "trials"}

    @property
    def first_format(self) -> bool:
        """Whether the manifest is of the first format (one hash per trial's canonical JSON)."""
        return self.head.get("format") == FIRST_FORMAT


def record_manifest(store: Store, run_id: str) -> Manifest:
    """Compute and store the run's manifest, replacing an earlier one (a resumed or
    re-graded run records again). Call it when the run finishes."""
    store.check_sound()
    with gc_paused():
        document = build_manifest(store, run_id)
        written = canonical_json(document)  # stored as it is hashed: verify needs no re-dump
        run_hash = document["run_hash"]
        del document  # its 100,000 entries go before the collector resumes, not through it
    manifest = Manifest(
        run_id=run_id,
        recorded_at=now(),
        manifest_hash=sha256(written),
        run_hash=run_hash,
        written=written,
    )
    values = {
        "recorded_at": manifest.recorded_at,
        "manifest_hash": manifest.manifest_hash,
        "run_hash": manifest.run_hash,
        "document": JsonText(written.decode()),
    }
    with store.engine.begin() as conn:
        conn.execute(run_manifests.delete().where(run_manifests.c.run_id == run_id))
        conn.execute(run_manifests.insert().values(run_id=run_id, **values))
    return manifest


def load_manifest(store: Store, run_id: str) -> Manifest | None:
    """The recorded manifest of a run, if any."""
    store.run(run_id)
    columns = [c for c in run_manifests.c if c.name != "document"]
    query = select(*columns, cast(run_manifests.c.document, Text).label("document")).where(
        run_manifests.c.run_id == run_id
    )
    with store.engine.connect() as conn:
        row = conn.execute(query).mappings().first()
    if row is None:
        return None
    written = row["document"].encode()
    return Manifest(
        run_id=run_id,
        recorded_at=row["recorded_at"],
        manifest_hash=row["manifest_hash"],
        run_hash=row["run_hash"],
        written=written,
    )
