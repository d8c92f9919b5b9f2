"""Verifying a run: what the store holds now against the manifest recorded when it finished.

`verify_run` hashes what the store holds now, without parsing a single result, and names every
trial whose record changed, appeared or disappeared; a changed one is opened, to name each
column of its row that no longer agrees with its result (the metrics are computed from those
columns, so a changed verdict is caught however it was changed), or else to say its result
changed. A hash kept outside the store (the CI log, the JUnit report) also catches a manifest
rewritten to match: `verify --expect HASH`. Manifests of the first format (one hash per trial,
of its result's canonical JSON) are still verified their own way.
"""

from __future__ import annotations

import multiprocessing
import sys
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import Any, TypeVar

import orjson
from sqlalchemy import Connection

from toolproof.perf import gc_frozen, gc_paused
from toolproof.store.integrity import (
    StoredTrial,
    disagreements,
    hash_lines,
    read_trials,
    trial_name,
)
from toolproof.store.journal import Store
from toolproof.store.manifest import SECTIONS, Manifest, about, entries, load_manifest
from toolproof.store.rows import TrialKey


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
    with gc_paused():
        stored = read_trials(store, run_id, manifest.first_format)
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
    with gc_paused():
        if manifest is None:
            rows = store.outcomes(run_id)
            return rows, use(rows), _unrecorded(run_id)
        stored = read_trials(store, run_id, manifest.first_format, rows)
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
            with gc_frozen():  # the child's collections leave this process's objects be
                pending = pool.submit(_verify_elsewhere, store.url, run_id)
            with gc_paused():
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
    first_format = manifest.first_format
    now = about(store, run_id)
    for section in SECTIONS:
        out.problems.extend(_differences(section, recorded.get(section), now.get(section)))
    out.trials = len(stored)
    recomputed = hash_lines(run_id, [(*t.key, t.hash) for t in stored])  # in key order
    # The run hash covers every trial's key and record hash, and the manifest's hash covers
    # its entries: when both agree, no entry can differ, and 100,000 of them need no look.
    agree = recomputed == manifest.run_hash == recorded.get("run_hash") and not out.problems
    recorded_entries = None if agree and not first_format else manifest.document.get("trials", [])
    if recorded_entries is not None and (first_format or recorded_entries != entries(stored)):
        bad = _compare_trials(store, recorded_entries, stored, first_format, out.problems)
        out.tampered = [trial_name(k) for k in bad]
    if recomputed != manifest.run_hash and not out.tampered:
        out.problems.append("the run hash recomputed from the stored results differs")
    return out


def _compare_trials(
    store: Store,
    recorded: list[dict[str, Any]],
    stored: list[StoredTrial],
    first_format: bool,
    problems: list[str],
) -> list[TrialKey]:
    """Add a problem for every trial that differs from its manifest entry; return their
    keys. A trial whose hash changed is opened: a row that disagrees with its own result
    is named column by column, otherwise its result changed (the first format checked every
    row against its result already)."""
    before = {_key(t): t for t in recorded}
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
    columns = {} if first_format else disagreements(store, changed)
    for row_id, (key, was) in changed.items():
        found[key][:0] = columns.get(row_id) or [
            f"its stored result changed (recorded sha256 {was[:12]}, "
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
