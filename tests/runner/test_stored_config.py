"""What a run keeps of its settings: header values given with --header and credentials in
--base-url (API keys, often) never reach the store; header names and the rest of the URL
do, and resuming asks for the secrets again. A run stored before the model flags were typed
reads back as it was."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from servers import completion, model_server, openai_server
from sqlalchemy import delete, select, update
from stored import invoke

from toolproof.errors import UsageError
from toolproof.redact import REDACTED
from toolproof.runner.config import restored_secrets
from toolproof.runner.run import RunRequest, run_suite
from toolproof.spec.overrides import ModelOverrides
from toolproof.store import Store
from toolproof.store.schema import run_manifests, runs, trials
from toolproof.suite import Suite

SECRET = "Bearer sk-do-not-store-me"


def answer(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    return 200, completion("Order B has shipped.")


def test_header_values_are_redacted_in_the_stored_config(mini: Suite, tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'results.db'}")
    with openai_server(answer) as (url, seen):
        flags = ModelOverrides(
            base_url=url, headers={"Authorization": SECRET, "X-Team": "team-7731"}
        )
        request = RunRequest(models=["openai-compatible/m"], model_flags=flags, trials=1, k=[1])
        report = asyncio.run(run_suite(mini, request, store))
        assert len(seen) == report.summary.counts.total == 2  # the run did run
        config = store.run(report.run_id).config.stored()
        assert config["model_flags"] == {
            "base_url": url,
            "headers": {"Authorization": REDACTED, "X-Team": REDACTED},
        }
        with store.engine.connect() as conn:
            stored = [orjson.dumps(list(row)) for row in conn.execute(select(runs))]
            stored += [orjson.dumps(list(row)) for row in conn.execute(select(run_manifests))]
        assert not any(b"sk-do-not-store-me" in text or b"team-7731" in text for text in stored)
        # resuming needs the values again: the store does not have them
        without = RunRequest(
            models=["openai-compatible/m"], model_flags=ModelOverrides(base_url=url)
        )
        with pytest.raises(UsageError, match=r"Authorization, X-Team.*--header NAME=VALUE"):
            asyncio.run(run_suite(mini, without, store, resume=report.run_id))
        resumed = asyncio.run(run_suite(mini, request, store, resume=report.run_id))
    assert resumed.run_id == report.run_id and resumed.ran == 0
    kept = store.run(report.run_id).config.model_flags
    assert restored_secrets(kept, flags, report.run_id) == flags
    assert kept.headers == {"Authorization": REDACTED, "X-Team": REDACTED}


def test_credentials_in_the_base_url_are_redacted_and_asked_for_again(
    mini: Suite, tmp_path: Path
) -> None:
    store = Store(f"sqlite:///{tmp_path / 'results.db'}")
    with model_server(answer) as (url, seen):
        secret = url.replace("http://", "http://agent:pw-do-not-store@")
        request = RunRequest(
            models=["openai-compatible/m"],
            model_flags=ModelOverrides(base_url=secret),
            trials=1,
            k=[1],
        )
        report = asyncio.run(run_suite(mini, request, store))
        assert "Basic" in seen.headers[0]["Authorization"]  # the credentials were used
        redacted = url.replace("http://", f"http://{REDACTED}@")
        assert store.run(report.run_id).config.stored()["model_flags"] == {"base_url": redacted}
        files = list(tmp_path.glob("results.db*"))  # the database and any journal beside it
        assert files and not any(b"pw-do-not-store" in f.read_bytes() for f in files)
        # resuming needs them again, for the same server
        bare = RunRequest(models=["openai-compatible/m"])
        with pytest.raises(UsageError, match=r"credentials are not stored: give them again"):
            asyncio.run(run_suite(mini, bare, store, resume=report.run_id))
        elsewhere = RunRequest(
            models=["openai-compatible/m"],
            model_flags=ModelOverrides(base_url="http://agent:pw@127.0.0.1:9/v1"),
        )
        with pytest.raises(UsageError, match=rf"run {report.run_id} called {redacted}"):
            asyncio.run(run_suite(mini, elsewhere, store, resume=report.run_id))
        resumed = asyncio.run(run_suite(mini, request, store, resume=report.run_id))
    assert resumed.run_id == report.run_id and resumed.ran == 0


OLD_CONFIG = (
    '{"agent":"oracle","models":[],"model_flags":{"base_url":"http://<redacted>@127.0.0.1:9/v1",'
    '"timeout_s":30.0,"temperature":0.5,"max_tokens":64,"tool_choice":"auto",'
    '"parallel_tool_calls":true,"n_threads":2,"prompted":true,'
    '"headers":{"Authorization":"<redacted>","X-Team":"<redacted>"},'
    '"extra":{"effort":"high","stop":["\\n"]}},"max_cost":null,"user_model":null,'
    '"variants":[""],"score":{"k":null,"faults":null,"drift":null,"load":null,'
    '"weights":{"pass^k":0.4,"recovery_rate":0.3,"completion_under_load":0.2,'
    '"drift_robustness":0.1},"conditions":[]},"time_scale":1.0,"trials":2,"k":[1],"seed":0,'
    '"max_steps":30,"concurrency":4,"infra_errors":"fail","tasks":["cancel","status"],'
    '"suite_path":"SUITE"}'
)
"""The config toolproof 0.1.0 stored, its model flags a plain mapping, for `toolproof run mini
--agent oracle --trials 2 --k 1` given every model flag: --base-url
http://team:pw@127.0.0.1:9/v1 --request-timeout 30 --header Authorization=... --header
X-Team=... --temperature 0.5 --max-tokens 64 --tool-choice auto --parallel-tool-calls
--model-param effort=high --model-param 'stop=["\\n"]' --prompted --threads 2."""
SECRETS = ["--header", "Authorization=Bearer sk-1", "--header", "X-Team=seven"]
SECRET_URL = ["--base-url", "http://team:pw@127.0.0.1:9/v1"]


def test_a_run_stored_with_untyped_model_flags_shows_regrades_and_resumes(
    mini_dir: Path, tmp_path: Path
) -> None:
    db = tmp_path / "runs.db"
    assert invoke("run", mini_dir, "--agent", "oracle", "--trials", "2", "--store", db).code == 0
    store = Store(str(db))
    run_id = store.runs()[0]["id"]
    old = json.loads(OLD_CONFIG.replace("SUITE", str(mini_dir)))
    with store.engine.begin() as conn:  # as the old toolproof left it, its second trials lost
        finished = {"status": "running", "finished_at": None}
        conn.execute(update(runs).where(runs.c.id == run_id).values(config=old, **finished))
        conn.execute(delete(trials).where(trials.c.run_id == run_id, trials.c.trial == 1))
    shown = invoke("show", run_id, "--store", db)
    assert shown.code == 0 and "pass^1" in shown.stdout
    assert store.run(run_id).config.model_flags.headers == {
        "Authorization": REDACTED,
        "X-Team": REDACTED,
    }
    without = invoke("run", "--resume", run_id, "--store", db, *SECRET_URL)
    assert without.error is not None and "Authorization, X-Team" in str(without.error)
    resumed = invoke("run", "--resume", run_id, "--store", db, *SECRETS, *SECRET_URL)
    assert resumed.code == 0 and f"resuming {run_id}: 2 of 4 trials done" in resumed.stdout
    assert store.run(run_id).finished and len(store.done(run_id)) == 4
    assert invoke("regrade", run_id, "--store", db).code == 0
    assert invoke("verify", run_id, "--store", db).code == 0
    with store.engine.connect() as conn:
        kept = conn.execute(select(runs.c.config).where(runs.c.id == run_id)).scalar_one()
    assert kept["model_flags"] == old["model_flags"]  # no secret of the resume reached it


def test_the_command_line_stores_every_model_flag_as_it_always_did(
    mini_dir: Path, tmp_path: Path
) -> None:
    db = tmp_path / "runs.db"
    flags = [
        *["--request-timeout", "30", "--temperature", "0.5", "--max-tokens", "64"],
        *["--tool-choice", "auto", "--parallel-tool-calls", "--prompted", "--threads", "2"],
        *["--model-param", "effort=high", "--model-param", 'stop=["\\n"]'],
    ]
    run = ["run", mini_dir, "--agent", "oracle", "--trials", "2", "--k", "1", "--store", db]
    assert invoke(*run, *SECRET_URL, *flags, *SECRETS).code == 0
    with Store(str(db)).engine.connect() as conn:
        stored = conn.execute(select(runs.c.config)).scalar_one()
    old = json.loads(OLD_CONFIG.replace("SUITE", str(mini_dir)))
    assert stored == old and list(stored["model_flags"]) == list(old["model_flags"])
