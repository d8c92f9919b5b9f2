"""Audit evidence: a run's manifest, recorded when it finishes, and its verification.

The manifest is one JSON document: the suite (name, version, content hash, path), every task's
content hash, the effective settings (agent, models and their parameters, variants, seed,
trials, k, ...), toolproof's version, the host, the start and end times, and one sha256 per
trial: of its stored record, that is its result's bytes exactly as the store holds them and
its row's other columns (outcome, reason, tokens, cost...). The run hash is the sha256 over
the trial hashes in a fixed order; the manifest hash is the sha256 of the whole canonical
document. Both are stored in `run_manifests`.

`verify_run` hashes what the store holds now, without parsing a single result, and names every
trial whose record changed, appeared or disappeared; a changed one is opened, to name each
column of its row that no longer agrees with its result (the metrics are computed from those
columns, so a changed verdict is caught however it was changed), or else to say its result
changed. A hash kept outside the
store (the CI log, the JUnit report) also catches a manifest rewritten to match: `verify
--expect HASH`. Manifests of the first format (one hash per trial, of its result's canonical
JSON) are still verified their own way.
"""

from __future__ import annotations

import gc
import hashlib
import multiprocessing
import sys
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from functools import cached_property
from operator import itemgetter
from typing import Any, NamedTuple, TypeVar

import orjson
from sqlalchemy import JSON, Connection, LargeBinary, Text, cast, select, text, type_coerce

from toolproof.records import RunConfig
from toolproof.redact import REDACTED, redacted
from toolproof.store import payload
from toolproof.store.journal import OUTCOME_COLUMNS, Store, now
from toolproof.store.manifest import run_manifests
from toolproof.store.queries import bulk_read
from toolproof.store.rows import (
    HASHED_COLUMNS,
    KEY_COLUMNS,
    JsonText,
    outcome_dicts,
    record_hash,
    row_columns,
)
from toolproof.store.schema import trials

MANIFEST_FORMAT = "toolproof-manifest/2"
FIRST_FORMAT = "toolproof-manifest/1"

TrialKey = tuple[str, str, str, int]


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
    return _hash_lines(run_id, sorted((*key, digest) for key, digest in hashes.items()))


def _hash_lines(run_id: str, ordered: Iterable[tuple[str, str, str, int, str]]) -> str:
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


def redacted_config(config: RunConfig) -> RunConfig:
    """The run's config with its secrets replaced: HTTP header values and the user name and
    password in a base URL or an agent's URL (credentials, often)."""
    given = config.model_flags
    hidden: dict[str, Any] = {}
    if given.headers is not None:
        hidden["headers"] = dict.fromkeys(given.headers, REDACTED)
    if given.base_url is not None:
        hidden["base_url"] = redacted(given.base_url)
    flags = given.model_copy(update=hidden)
    agent = redacted(config.agent) if config.agent else config.agent
    if flags == config.model_flags and agent == config.agent:
        return config
    return config.with_(model_flags=flags, **({"agent": agent} if agent else {}))


# ---------------------------------------------------------------- reading the store


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
    with bulk_read(), store.engine.connect() as conn:
        rows: list[Entry] = [tuple(row) for row in conn.execute(query).all()]
    if any(row[6] is None for row in rows):
        return [(*t.key, t.seed, t.outcome, t.hash) for t in read_trials(store, run_id)]
    return rows


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
    with bulk_read(), store.engine.connect() as conn:
        found = _scan(conn, run_id, first_format, outcomes)
    if first_format:
        disagreeing = _disagreements(store, [t.row_id for t in found if not t.problems])
        found = [t._replace(problems=tuple(disagreeing.get(t.row_id, t.problems))) for t in found]
    return found


def _disagreements(store: Store, row_ids: Iterable[int]) -> dict[int, list[str]]:
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


SECTIONS = ("run", "suite", "tasks", "models", "variants", "seed", "settings")
"""What the manifest says about the run besides its trials."""


def _about(store: Store, run_id: str) -> dict[str, Any]:
    """The manifest's SECTIONS, as the store holds them now."""
    run = store.run(run_id)
    config = redacted_config(run.config)
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


def _entries(stored: list[StoredTrial]) -> list[dict[str, Any]]:
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
    with bulk_read():
        entries = _entry_dicts(rows)
    return {
        "format": MANIFEST_FORMAT,
        **_about(store, run_id),
        "counts": {**counts, "total": len(rows)},
        "trials": entries,
        "run_hash": _hash_lines(run_id, [(*row[:4], row[6]) for row in rows]),
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


def record_manifest(store: Store, run_id: str) -> Manifest:
    """Compute and store the run's manifest, replacing an earlier one (a resumed or
    re-graded run records again). Call it when the run finishes."""
    store.check_sound()
    with bulk_read():
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
        return _unrecorded(run_id)
    with bulk_read():
        stored = read_trials(store, run_id, manifest.head.get("format") == FIRST_FORMAT)
        return _verified(store, manifest, stored, expect)


Rows = list[dict[str, Any]]
"""A run's outcome rows, as `Store.outcomes` gives them."""

T = TypeVar("T")


def read_verified(
    store: Store, run_id: str, use: Callable[[Rows], T]
) -> tuple[Rows, T, Verification]:
    """The run's outcome rows, what `use` computes from them (the gate's summary) and the
    run's verification against its manifest, all of one state of the store: the rows the
    gate computes its metrics from are the very ones whose hashes it checks."""
    aside = _read_while_verified_aside(store, run_id, use)
    if aside is not None:
        return aside
    manifest = load_manifest(store, run_id)
    rows: Rows = []
    with bulk_read():
        if manifest is None:
            rows = store.outcomes(run_id)
            return rows, use(rows), _unrecorded(run_id)
        first_format = manifest.head.get("format") == FIRST_FORMAT
        stored = read_trials(store, run_id, first_format, rows)
        return rows, use(rows), _verified(store, manifest, stored)


def _read_while_verified_aside(
    store: Store, run_id: str, use: Callable[[Rows], T]
) -> tuple[Rows, T, Verification] | None:
    """`read_verified` on two cores: a forked process verifies the run (`verify_run`: it
    re-hashes every stored record) while this one reads the rows and computes `use` from
    them; on 100,000 trials each takes about as long. Both read the same trials: SQLite's
    data_version, read on this connection before the fork and after both reads, shows that
    no other connection committed in between. None where this cannot be done (not a SQLite
    file, no fork), where a commit came in between or the process died: then the caller
    reads and verifies the run in one pass."""
    if store.engine.dialect.name != "sqlite" or not _forks():
        return None
    with store.engine.connect() as conn:
        before = _data_version(conn)
        context = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
            gc.freeze()  # the child's collections leave this process's objects (and pages) be
            try:
                pending = pool.submit(_verify_elsewhere, store.url, run_id)
            finally:
                gc.unfreeze()
            with bulk_read():
                rows = store.outcomes(run_id, conn)
                conn.rollback()
                used = use(rows)
            try:
                verification = pending.result()
            except BrokenProcessPool:
                return None
        if _data_version(conn) != before:
            return None
    return rows, used, verification


def _forks() -> bool:
    """Whether a forked process may verify a run: on Linux, where fork is cheap (a process
    started afresh would spend longer importing than verifying), and from a process with no
    other thread (one could hold a lock the child would wait on forever)."""
    return (
        sys.platform == "linux"
        and "fork" in multiprocessing.get_all_start_methods()
        and threading.active_count() == 1
    )


def _data_version(conn: Connection) -> int:
    """SQLite's count of commits by other connections, as this connection sees it."""
    return int(conn.exec_driver_sql("PRAGMA data_version").scalar_one())


def _verify_elsewhere(url: str, run_id: str) -> Verification:
    """`verify_run` in a forked process, on a connection of its own."""
    return verify_run(Store(url), run_id)


def _unrecorded(run_id: str) -> Verification:
    return Verification(
        run_id,
        recorded=False,
        problems=[f"run {run_id} has no recorded manifest, so nothing to verify against"],
    )


def _verified(
    store: Store, manifest: Manifest, stored: list[StoredTrial], expect: str | None = None
) -> Verification:
    """The stored trials, read and hashed now, against the recorded manifest."""
    run_id = manifest.run_id
    out = Verification(
        run_id,
        recorded=True,
        manifest_hash=manifest.manifest_hash,
        run_hash=manifest.run_hash,
        recorded_at=manifest.recorded_at,
    )
    recorded = manifest.head
    if not manifest.intact():
        out.problems.append("the recorded manifest document does not match its recorded hash")
    if expect and expect.lower() not in (manifest.manifest_hash, manifest.run_hash):
        out.problems.append(
            f"the recorded manifest hash is {manifest.manifest_hash}, not the expected {expect}"
        )
    if recorded.get("run_hash") != manifest.run_hash:
        out.problems.append("the recorded run hash differs from the one in the manifest")
    first_format = recorded.get("format") == FIRST_FORMAT
    about = _about(store, run_id)
    for section in SECTIONS:
        out.problems.extend(_differences(section, recorded.get(section), about.get(section)))
    out.trials = len(stored)
    recomputed = _hash_lines(run_id, [(*t.key, t.hash) for t in stored])  # in key order
    # The run hash covers every trial's key and record hash, and the manifest's hash covers
    # its entries: when both agree, no entry can differ, and 100,000 of them need no look.
    agree = recomputed == manifest.run_hash == recorded.get("run_hash") and not out.problems
    entries = None if agree and not first_format else manifest.document.get("trials", [])
    if entries is not None and (first_format or entries != _entries(stored)):
        bad = _compare_trials(store, entries, stored, first_format, out.problems)
        out.tampered = [trial_name(k) for k in bad]
    if recomputed != manifest.run_hash and not out.tampered:
        out.problems.append("the run hash recomputed from the stored results differs")
    return out


def _compare_trials(
    store: Store,
    entries: list[dict[str, Any]],
    stored: list[StoredTrial],
    first_format: bool,
    problems: list[str],
) -> list[TrialKey]:
    """Add a problem for every trial that differs from its manifest entry; return their
    keys. A trial whose hash changed is opened: a row that disagrees with its own result
    is named column by column, otherwise its result changed (the first format checked every
    row against its result already)."""
    before = {_key(t): t for t in entries}
    now_stored = {t.key: t for t in stored}
    found: dict[TrialKey, list[str]] = {}
    changed: dict[int, tuple[TrialKey, str]] = {}
    for key in sorted(set(before) | set(now_stored)):
        old, new = before.get(key), now_stored.get(key)
        if new is None:
            found[key] = ["recorded in the manifest but gone from the store"]
            continue
        if old is None:
            found[key] = ["in the store but not in the manifest (added later)"]
            continue
        said = []
        if old["outcome"] != new.outcome:
            said.append(f"outcome is '{new.outcome}', the manifest recorded '{old['outcome']}'")
        said.extend(new.problems)
        if old["sha256"] != new.hash:
            changed[new.row_id] = (key, old["sha256"])
        if said or new.row_id in changed:
            found[key] = said
    columns = {} if first_format else _disagreements(store, changed)
    for row_id, (key, recorded) in changed.items():
        found[key][:0] = columns.get(row_id) or [
            f"its stored result changed (recorded sha256 {recorded[:12]}, "
            f"now {now_stored[key].hash[:12]})"
        ]
    for key, said in found.items():
        problems.extend(f"{trial_name(key)}: {p}" for p in said)
    return list(found)


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
