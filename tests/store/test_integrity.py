"""Audit evidence: the manifest recorded for a run, and `verify` catching every change made to
stored results afterwards, naming the trial."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
from pathlib import Path
from typing import Any

import orjson
import pytest
from sqlalchemy import select, update
from stored import invoke, mini_suite, stored_run, toolproof_ci

from toolproof.redact import REDACTED
from toolproof.runner.run import RunRequest, run_suite
from toolproof.store import verify
from toolproof.store.integrity import canonical_json, run_hash, trial_hash
from toolproof.store.journal import Store
from toolproof.store.manifest import build_manifest, load_manifest, record_manifest
from toolproof.store.schema import runs, trials
from toolproof.store.verify import Verification, read_verified, verify_run
from toolproof.suite import load_suite


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(str(tmp_path / "runs.db"))


@pytest.fixture
def recorded(store: Store) -> str:
    run = stored_run(store, {"cancel": "PPF", "status": "PPP"}, k=[1, 3])
    record_manifest(store, run)
    return run


def sql(store: Store, statement: str, *params: object) -> None:
    with store.engine.begin() as conn:
        conn.exec_driver_sql(statement, params)


def test_hashes_are_canonical_and_ordered() -> None:
    assert canonical_json({"b": 1, "a": [1, {"d": 2, "c": 3}]}) == b'{"a":[1,{"c":3,"d":2}],"b":1}'
    assert trial_hash({"x": 1, "y": 2}) == trial_hash({"y": 2, "x": 1})
    assert trial_hash({"x": 1}) != trial_hash({"x": 2})
    one = {("", "", "a", 0): "h1", ("", "", "a", 1): "h2"}
    assert run_hash("r", one) == run_hash("r", dict(reversed(list(one.items()))))
    assert run_hash("r", one) != run_hash("other", one)
    assert run_hash("r", one) != run_hash("r", {**one, ("", "", "a", 1): "h3"})


def test_run_hash_is_the_sha256_of_one_line_per_trial_in_key_order() -> None:
    hashes = {("v", "m", "b", 0): "h2", ("", "m", "a", 1): "h1"}
    lines = "r\n\tm\ta\t1\th1\nv\tm\tb\t0\th2\n"
    assert run_hash("r", hashes) == hashlib.sha256(lines.encode()).hexdigest()


def test_one_pass_gives_the_outcome_rows_and_their_verification(
    store: Store, recorded: str
) -> None:
    rows, used, verification = read_verified(store, recorded, len)
    assert rows == store.outcomes(recorded) and used == 6
    assert verification.ok and verification.trials == 6
    bare = stored_run(store, {"cancel": "PF"})
    rows, used, verification = read_verified(store, bare, len)
    assert rows == store.outcomes(bare) and used == 2 and not verification.recorded


def _dies(url: str, run_id: str) -> Verification:
    """A verifier whose process is killed before it answers."""
    os._exit(1)


def needs_fork() -> None:
    if not verify._forks():
        pytest.skip("verifying aside needs fork (Linux) and no other thread")


def test_the_gate_reads_its_rows_while_a_forked_process_verifies(
    store: Store, recorded: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    needs_fork()
    aside = verify._read_while_verified_aside(store, recorded, len)
    assert aside is not None
    monkeypatch.setattr(verify, "_forks", lambda: False)
    assert read_verified(store, recorded, len) == aside  # the same as one pass in this process
    sql(store, "UPDATE trials SET outcome = 'passed' WHERE task_id = 'cancel' AND trial = 2")
    monkeypatch.undo()
    rows, _, verification = read_verified(store, recorded, len)
    assert verification.tampered == ["task cancel trial 2"]
    assert [r["outcome"] for r in rows if r["task_id"] == "cancel"] == ["passed"] * 3


def test_a_commit_while_the_gate_reads_sends_it_back_to_one_pass(
    store: Store, recorded: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    needs_fork()
    read = Store.outcomes

    def read_then_another_writes(self: Store, run_id: str, conn: Any = None) -> Any:
        rows = read(self, run_id, conn)
        sql(Store(self.url), "UPDATE trials SET reason = 'edited' WHERE trial = 0")
        return rows

    monkeypatch.setattr(Store, "outcomes", read_then_another_writes)
    assert verify._read_while_verified_aside(store, recorded, len) is None
    rows, _, verification = read_verified(store, recorded, len)  # read again, in one pass
    assert {r["reason"] for r in rows if r["trial"] == 0} == {"edited"}
    assert verification.tampered == ["task cancel trial 0", "task status trial 0"]


def test_a_verifier_that_dies_sends_the_gate_back_to_one_pass(
    store: Store, recorded: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    needs_fork()
    monkeypatch.setattr(verify, "_verify_elsewhere", _dies)
    assert verify._read_while_verified_aside(store, recorded, len) is None
    rows, _, verification = read_verified(store, recorded, len)
    assert verification.ok and rows == store.outcomes(recorded)


def test_the_manifest_is_stored_as_the_canonical_json_its_hash_is_taken_of(
    store: Store, recorded: str
) -> None:
    with store.engine.connect() as conn:
        query = "SELECT document, manifest_hash FROM run_manifests"
        text, digest = conn.exec_driver_sql(query).one()
    assert hashlib.sha256(text.encode()).hexdigest() == digest
    assert text.encode() == canonical_json(json.loads(text))
    manifest = load_manifest(store, recorded)
    assert manifest is not None
    assert manifest.head == {k: v for k, v in json.loads(text).items() if k != "trials"}
    # as an earlier version wrote it (keys unsorted, spaced): still verified
    sql(store, "UPDATE run_manifests SET document = ?", json.dumps(json.loads(text), indent=1))
    assert verify_run(store, recorded).ok
    manifest = load_manifest(store, recorded)
    assert manifest is not None and not manifest.stored_intact
    assert manifest.head == {k: v for k, v in json.loads(text).items() if k != "trials"}
    sql(store, "UPDATE run_manifests SET document = ?", text.replace('"seed":0', '"seed":7'))
    problems = verify_run(store, recorded).problems
    assert "the recorded manifest document does not match its recorded hash" in problems


def test_a_manifest_whose_settings_name_trials_and_variants_is_read_whole(
    store: Store,
) -> None:
    run = stored_run(store, {"cancel": "PF"}, models=["openai/m"], agent="openai/m")
    with store.engine.begin() as conn:
        config = conn.execute(select(runs.c.config).where(runs.c.id == run)).scalar_one()
        config["model_flags"] = {"extra": {"trials": [{"a": 1}], "variants": ['],"x":[']}}
        conn.execute(update(runs).where(runs.c.id == run).values(config=config))
    record_manifest(store, run)
    manifest = load_manifest(store, run)
    assert manifest is not None and manifest.stored_intact
    assert manifest.head["models"]["parameters"] == config["model_flags"]
    assert manifest.head == {k: v for k, v in manifest.document.items() if k != "trials"}
    assert verify_run(store, run).ok


def test_manifest_holds_the_run_s_evidence(store: Store) -> None:
    run = stored_run(store, {"cancel": "PF"}, models=["openai/m"], agent="openai/m")
    with store.engine.begin() as conn:
        config = conn.execute(select(runs.c.config).where(runs.c.id == run)).scalar_one()
        config["model_flags"] = {"headers": {"Authorization": "Bearer sk-secret"}, "seed": 1}
        conn.execute(update(runs).where(runs.c.id == run).values(config=config))
    manifest = record_manifest(store, run)
    doc = manifest.document
    assert doc["format"] == "toolproof-manifest/2"
    assert doc["run"]["id"] == run and doc["run"]["status"] == "finished"
    assert doc["run"]["finished_at"] and doc["run"]["created_at"] and doc["run"]["host"]
    assert doc["suite"] == {"name": "mini", "version": "1", "hash": "0" * 64, "path": ""}
    assert doc["tasks"] == {"cancel": "hash-cancel"}
    assert doc["models"]["models"] == ["openai/m"]
    assert doc["models"]["parameters"]["headers"] == {"Authorization": REDACTED}
    assert "sk-secret" not in orjson.dumps(doc).decode()
    assert doc["counts"] == {"passed": 1, "failed": 1, "infra_error": 0, "total": 2}
    assert [(t["task"], t["trial"], t["outcome"]) for t in doc["trials"]] == [
        ("cancel", 0, "passed"),
        ("cancel", 1, "failed"),
    ]
    assert manifest.run_hash == doc["run_hash"]
    stored = load_manifest(store, run)
    assert stored is not None and stored.manifest_hash == manifest.manifest_hash
    assert build_manifest(store, run) == doc


def test_an_untouched_run_verifies(store: Store, recorded: str) -> None:
    result = verify_run(store, recorded)
    assert result.ok, result.problems
    assert result.trials == 6
    stored = load_manifest(store, recorded)
    assert stored is not None
    assert verify_run(store, recorded, expect=stored.manifest_hash).ok
    assert verify_run(store, recorded, expect=stored.run_hash).ok


def test_changed_outcome_is_caught_and_named(store: Store, recorded: str) -> None:
    sql(store, "UPDATE trials SET outcome = 'passed' WHERE task_id = 'cancel' AND trial = 2")
    result = verify_run(store, recorded)
    assert not result.ok
    assert result.tampered == ["task cancel trial 2"]
    assert "task cancel trial 2: outcome is 'passed', the manifest recorded 'failed'" in (
        result.problems
    )
    assert (
        "task cancel trial 2: trials.outcome is 'passed' but its stored result says 'failed'"
        in result.problems
    )


def test_changed_reason_is_caught(store: Store, recorded: str) -> None:
    sql(store, "UPDATE trials SET reason = 'flaky test' WHERE task_id = 'cancel' AND trial = 2")
    result = verify_run(store, recorded)
    assert result.tampered == ["task cancel trial 2"]
    assert any("trials.reason is 'flaky test'" in p for p in result.problems)


def test_rewritten_result_and_row_together_are_caught(store: Store, recorded: str) -> None:
    with store.engine.begin() as conn:
        row = conn.execute(
            select(trials.c.id, trials.c.result).where(
                trials.c.task_id == "cancel", trials.c.trial == 2
            )
        ).one()
        forged = {**row.result, "outcome": "passed", "reason": ""}
        conn.execute(
            update(trials)
            .where(trials.c.id == row.id)
            .values(outcome="passed", reason="", result=forged)
        )
    result = verify_run(store, recorded)
    assert result.tampered == ["task cancel trial 2"]
    assert any("its stored result changed" in p for p in result.problems)


def test_deleted_and_added_trials_are_caught(store: Store, recorded: str) -> None:
    sql(store, "DELETE FROM trials WHERE task_id = 'cancel' AND trial = 2")
    result = verify_run(store, recorded)
    assert result.problems == [
        "task cancel trial 2: recorded in the manifest but gone from the store"
    ]
    other = stored_run(store, {"cancel": "PPP"})
    sql(store, "UPDATE trials SET run_id = ? WHERE run_id = ? AND trial = 2", recorded, other)
    result = verify_run(store, recorded)
    assert result.tampered == ["task cancel trial 2"]
    assert any("changed" in p or "outcome" in p for p in result.problems)


def test_changed_run_settings_and_manifest_are_caught(store: Store, recorded: str) -> None:
    with store.engine.begin() as conn:
        config = conn.execute(select(runs.c.config).where(runs.c.id == recorded)).scalar_one()
        conn.execute(
            update(runs).where(runs.c.id == recorded).values(config={**config, "seed": 99})
        )
    problems = verify_run(store, recorded).problems
    assert "seed: recorded 0, now 99" in problems
    assert "settings.seed: recorded 0, now 99" in problems

    sql(store, "UPDATE run_tasks SET task_hash = 'edited' WHERE task_id = 'status'")
    assert 'tasks.status: recorded "hash-status", now "edited"' in (
        verify_run(store, recorded).problems
    )

    sql(store, "UPDATE run_manifests SET run_hash = 'x'")
    problems = verify_run(store, recorded).problems
    assert "the recorded run hash differs from the one in the manifest" in problems


def test_expected_hash_from_outside_the_store(store: Store, recorded: str) -> None:
    result = verify_run(store, recorded, expect="0" * 64)
    assert not result.ok
    assert "not the expected 0000" in result.problems[0]


def test_no_manifest_and_re_recording(store: Store) -> None:
    run = stored_run(store, {"a": "PF"})
    result = verify_run(store, run)
    assert not result.ok and not result.recorded
    first = record_manifest(store, run)
    # A legitimate change (re-grading rewrites the trial through the store) is followed by
    # recording again: verify passes.
    row_id, result = next((i, r) for i, r in store.results(run) if r.trial == 1)
    store.replace(row_id, result.model_copy(update={"outcome": "passed", "reason": ""}))
    assert not verify_run(store, run).ok
    second = record_manifest(store, run)
    assert second.run_hash != first.run_hash
    assert verify_run(store, run).ok


def test_a_real_run_records_and_verifies(tmp_path: Path) -> None:
    suite = load_suite(mini_suite(tmp_path / "mini"))
    store = Store(str(tmp_path / "runs.db"))
    request = RunRequest(agent="retrying-oracle", trials=2, k=[1])
    run = asyncio.run(run_suite(suite, request, store)).run_id
    if load_manifest(store, run) is None:  # once the runner records it, it is there already
        record_manifest(store, run)
    doc = build_manifest(store, run)
    assert doc["suite"]["hash"] == suite.content_hash
    assert doc["tasks"] == {t.id: t.content_hash for t in suite.tasks}
    assert doc["seed"] == suite.file.defaults.seed
    assert {t["seed"] for t in doc["trials"]} == {
        s for (s,) in store.engine.connect().execute(select(trials.c.seed))
    }
    assert verify_run(store, run).ok


@pytest.mark.slow
def test_verify_command(store: Store, tmp_path: Path) -> None:
    run = stored_run(store, {"cancel": "PPF", "status": "PPP"})
    none = invoke("verify", run, "--store", store.url)
    assert none.code == 1 and "has no recorded manifest" in none.stdout

    manifest_file = tmp_path / "evidence" / "manifest.json"
    first = invoke("verify", run, "--store", store.url, "--record", "--manifest", manifest_file)
    assert first.code == 0, first.stdout
    assert f"run {run} verified: 6 trials match" in first.stdout
    document = json.loads(manifest_file.read_text())
    assert document["run"]["id"] == run and len(document["manifest_hash"]) == 64

    again = invoke("verify", run, "--store", store.url, "--record")
    assert again.code == 2 and "already has a manifest" in str(again.error)

    sql(store, "UPDATE trials SET outcome = 'passed' WHERE task_id = 'cancel' AND trial = 2")
    report = tmp_path / "verify.json"
    tampered = toolproof_ci("verify", run, "--store", store.url, "--json", report)
    assert tampered.returncode == 1
    assert "task cancel trial 2: outcome is 'passed', the manifest recorded 'failed'" in (
        tampered.stdout
    )
    assert "1 trial(s)" in tampered.stdout
    assert json.loads(report.read_text())["tampered_trials"] == ["task cancel trial 2"]
