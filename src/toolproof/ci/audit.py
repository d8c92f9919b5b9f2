"""Audit evidence: a run's manifest, recorded when it finishes, and its verification.

The manifest is one JSON document: the suite (name, version, content hash, path), every task's
content hash, the effective settings (agent, models and their parameters, variants, seed,
trials, k, ...), toolproof's version, the host, the start and end times, and one sha256 per
trial: of the trial's `result` JSON, canonical (keys sorted, compact). The run hash is the
sha256 over the trial hashes in a fixed order; the manifest hash is the sha256 of the whole
canonical document. Both are stored in `run_manifests`.

`verify_run` recomputes everything from what the store holds now and names every trial whose
result changed, appeared or disappeared, and every trial whose row (outcome, reason, cost...)
no longer agrees with its own stored result: the metrics are computed from those columns, so a
changed verdict is caught however it was changed. A hash kept outside the store (the CI log,
the JUnit report) also catches a manifest rewritten to match: `verify --expect HASH`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import orjson
from pydantic import ValidationError
from sqlalchemy import Connection, inspect, select

from toolproof.records import RunConfig
from toolproof.results import TrialResult
from toolproof.store.journal import Store, _columns, now
from toolproof.store.manifest import run_manifests
from toolproof.store.schema import trials

MANIFEST_FORMAT = "toolproof-manifest/1"
REDACTED = "<redacted>"

TrialKey = tuple[str, str, str, int]


def canonical_json(value: Any) -> bytes:
    """JSON with sorted keys and no whitespace: equal data, equal bytes."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def trial_hash(result: Any) -> str:
    """sha256 of a trial's stored `result` JSON, canonical."""
    return sha256(canonical_json(result))


def run_hash(run_id: str, hashes: Mapping[TrialKey, str]) -> str:
    """sha256 over the run id and its trials' hashes, one line per trial ordered by
    (variant, model, task, trial): `variant<TAB>model<TAB>task<TAB>trial<TAB>sha256`."""
    digest = hashlib.sha256(f"{run_id}\n".encode())
    for key in sorted(hashes):
        variant, model, task_id, index = key
        digest.update(f"{variant}\t{model}\t{task_id}\t{index}\t{hashes[key]}\n".encode())
    return digest.hexdigest()


def trial_name(key: TrialKey) -> str:
    """'task cancel trial 2 [faults:flaky] (openai/gpt-4o)': how a trial is named to users."""
    variant, model, task_id, index = key
    out = f"task {task_id} trial {index}"
    if variant:
        out += f" [{variant}]"
    if model:
        out += f" ({model})"
    return out


def redacted_config(config: RunConfig) -> RunConfig:
    """The run's config with its secrets replaced: HTTP header values and the user name and
    password in a base URL (credentials, often)."""
    flags = dict(config.model_flags)
    if isinstance(flags.get("headers"), Mapping):
        flags["headers"] = dict.fromkeys(flags["headers"], REDACTED)
    if isinstance(flags.get("base_url"), str):
        flags["base_url"] = redacted_url(flags["base_url"])
    return config if flags == config.model_flags else config.with_(model_flags=flags)


def redacted_url(url: str) -> str:
    """`url` with the credentials in it (`user:password@`) replaced by REDACTED."""
    parts = urlsplit(url)
    _, at, host = parts.netloc.rpartition("@")
    if not at:
        return url
    return urlunsplit(parts._replace(netloc=f"{REDACTED}@{host}"))


# ---------------------------------------------------------------- reading the store


@dataclass(frozen=True)
class StoredTrial:
    """One trial row as the store holds it now."""

    key: TrialKey
    hash: str
    seed: int
    outcome: str
    problems: tuple[str, ...]


def _ensure_table(store: Store) -> None:
    run_manifests.create(store.engine, checkfirst=True)


def _stored_trials(conn: Connection, run_id: str) -> Iterator[StoredTrial]:
    """Every trial of the run with its result hash and the disagreements between its row
    and its own stored result."""
    columns = [c for c in trials.c if c.name not in ("id", "run_id")]
    query = select(*columns).where(trials.c.run_id == run_id)
    for row in conn.execution_options(yield_per=200).execute(query).mappings():
        key: TrialKey = (row["variant"], row["model"], row["task_id"], int(row["trial"]))
        data = row["result"]
        problems = []
        try:
            expected = _columns(TrialResult.model_validate(data))
        except ValidationError as exc:
            problems.append(f"its stored result no longer parses ({exc.error_count()} errors)")
        else:
            for name, value in expected.items():
                if name != "result" and row[name] != value:
                    problems.append(
                        f"trials.{name} is {row[name]!r} but its stored result says {value!r}"
                    )
        yield StoredTrial(
            key=key,
            hash=trial_hash(data),
            seed=int(row["seed"]),
            outcome=str(row["outcome"]),
            problems=tuple(problems),
        )


def read_trials(store: Store, run_id: str) -> list[StoredTrial]:
    """Every trial of the run as stored now, ordered by (variant, model, task, trial)."""
    with store.engine.connect() as conn:
        return sorted(_stored_trials(conn, run_id), key=lambda t: t.key)


def build_manifest(
    store: Store, run_id: str, stored: list[StoredTrial] | None = None
) -> dict[str, Any]:
    """The manifest document of a run as the store holds it now."""
    run = store.run(run_id)
    config = redacted_config(run.config)
    tasks = {row["task_id"]: row["task_hash"] for row in store.run_tasks(run_id)}
    if stored is None:
        stored = read_trials(store, run_id)
    hashes = {t.key: t.hash for t in stored}
    counts = {"passed": 0, "failed": 0, "infra_error": 0}
    for t in stored:
        counts[t.outcome] = counts.get(t.outcome, 0) + 1
    return {
        "format": MANIFEST_FORMAT,
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
            "parameters": config.model_flags,
            "user_model": config.user_model,
        },
        "variants": config.variants,
        "seed": config.seed,
        "settings": config.stored(),
        "counts": {**counts, "total": len(stored)},
        "trials": [
            {
                "variant": t.key[0],
                "model": t.key[1],
                "task": t.key[2],
                "trial": t.key[3],
                "seed": t.seed,
                "outcome": t.outcome,
                "sha256": t.hash,
            }
            for t in stored
        ],
        "run_hash": run_hash(run_id, hashes),
    }


@dataclass(frozen=True)
class Manifest:
    run_id: str
    recorded_at: str
    manifest_hash: str
    run_hash: str
    document: dict[str, Any]


def record_manifest(store: Store, run_id: str) -> Manifest:
    """Compute and store the run's manifest, replacing an earlier one (a resumed or
    re-graded run records again). Call it when the run finishes."""
    _ensure_table(store)
    document = build_manifest(store, run_id)
    manifest = Manifest(
        run_id=run_id,
        recorded_at=now(),
        manifest_hash=sha256(canonical_json(document)),
        run_hash=document["run_hash"],
        document=document,
    )
    values = {
        "recorded_at": manifest.recorded_at,
        "manifest_hash": manifest.manifest_hash,
        "run_hash": manifest.run_hash,
        "document": document,
    }
    with store.engine.begin() as conn:
        conn.execute(run_manifests.delete().where(run_manifests.c.run_id == run_id))
        conn.execute(run_manifests.insert().values(run_id=run_id, **values))
    return manifest


def load_manifest(store: Store, run_id: str) -> Manifest | None:
    """The recorded manifest of a run, if any."""
    store.run(run_id)
    if not inspect(store.engine).has_table(run_manifests.name):
        return None
    with store.engine.connect() as conn:
        row = (
            conn.execute(select(run_manifests).where(run_manifests.c.run_id == run_id))
            .mappings()
            .first()
        )
    if row is None:
        return None
    return Manifest(
        run_id=run_id,
        recorded_at=row["recorded_at"],
        manifest_hash=row["manifest_hash"],
        run_hash=row["run_hash"],
        document=dict(row["document"]),
    )


# ---------------------------------------------------------------- verification


@dataclass
class Verification:
    """What `verify` found: no problem means the stored results are those recorded."""

    run_id: str
    recorded: bool
    trials: int = 0
    manifest_hash: str | None = None
    run_hash: str | None = None
    recorded_at: str | None = None
    problems: list[str] = field(default_factory=list)
    tampered: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.recorded and not self.problems

    def as_json(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "verified": self.ok,
            "recorded": self.recorded,
            "recorded_at": self.recorded_at,
            "trials": self.trials,
            "manifest_hash": self.manifest_hash,
            "run_hash": self.run_hash,
            "problems": self.problems,
            "tampered_trials": self.tampered,
        }


def verify_run(store: Store, run_id: str, expect: str | None = None) -> Verification:
    """Recompute the run's hashes from the store and compare them with the manifest."""
    manifest = load_manifest(store, run_id)
    if manifest is None:
        return Verification(
            run_id,
            recorded=False,
            problems=[f"run {run_id} has no recorded manifest, so nothing to verify against"],
        )
    out = Verification(
        run_id,
        recorded=True,
        manifest_hash=manifest.manifest_hash,
        run_hash=manifest.run_hash,
        recorded_at=manifest.recorded_at,
    )
    recorded = manifest.document
    if sha256(canonical_json(recorded)) != manifest.manifest_hash:
        out.problems.append("the recorded manifest document does not match its recorded hash")
    if expect and expect.lower() not in (manifest.manifest_hash, manifest.run_hash):
        out.problems.append(
            f"the recorded manifest hash is {manifest.manifest_hash}, not the expected {expect}"
        )
    if recorded.get("run_hash") != manifest.run_hash:
        out.problems.append("the recorded run hash differs from the one in the manifest")
    stored = read_trials(store, run_id)
    current = build_manifest(store, run_id, stored)
    for section in ("run", "suite", "tasks", "models", "variants", "seed", "settings"):
        out.problems.extend(_differences(section, recorded.get(section), current.get(section)))
    before = {_key(t): t for t in recorded.get("trials", [])}
    now_stored = {t.key: t for t in stored}
    out.trials = len(now_stored)
    bad: dict[TrialKey, None] = {}
    for key in sorted(set(before) | set(now_stored)):
        name = trial_name(key)
        old, new = before.get(key), now_stored.get(key)
        if new is None:
            out.problems.append(f"{name}: recorded in the manifest but gone from the store")
            bad[key] = None
            continue
        if old is None:
            out.problems.append(f"{name}: in the store but not in the manifest (added later)")
            bad[key] = None
            continue
        if old["sha256"] != new.hash:
            out.problems.append(
                f"{name}: its stored result changed (recorded sha256 {old['sha256'][:12]}, "
                f"now {new.hash[:12]})"
            )
            bad[key] = None
        if old["outcome"] != new.outcome:
            out.problems.append(
                f"{name}: outcome is '{new.outcome}', the manifest recorded '{old['outcome']}'"
            )
            bad[key] = None
        for problem in new.problems:
            out.problems.append(f"{name}: {problem}")
            bad[key] = None
    if current["run_hash"] != manifest.run_hash and not bad:
        out.problems.append("the run hash recomputed from the stored results differs")
    out.tampered = [trial_name(k) for k in bad]
    return out


def _key(entry: Mapping[str, Any]) -> TrialKey:
    return (entry["variant"], entry["model"], entry["task"], int(entry["trial"]))


def _differences(path: str, old: Any, new: Any, limit: int = 20) -> list[str]:
    """Where two JSON values differ, as 'path: recorded X, now Y' lines."""
    if old == new:
        return []
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        out: list[str] = []
        for key in sorted(set(old) | set(new), key=str):
            out.extend(_differences(f"{path}.{key}", old.get(key), new.get(key)))
            if len(out) >= limit:
                break
        return out[:limit]
    return [f"{path}: recorded {_short(old)}, now {_short(new)}"]


def _short(value: Any, width: int = 80) -> str:
    text = orjson.dumps(value).decode() if value is not None else "nothing"
    return text if len(text) <= width else text[: width - 3] + "..."
