"""What a run keeps of its settings: header values given with --header and credentials in
--base-url (API keys, often) never reach the store; header names and the rest of the URL
do, and resuming asks for the secrets again."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import orjson
import pytest
from servers import completion, model_server, openai_server
from sqlalchemy import select

from toolproof.errors import UsageError
from toolproof.redact import REDACTED
from toolproof.runner.run import RunRequest, restored_secrets, run_suite
from toolproof.store import Store
from toolproof.store.schema import run_manifests, runs
from toolproof.suite import Suite

SECRET = "Bearer sk-do-not-store-me"


def answer(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    return 200, completion("Order B has shipped.")


def test_header_values_are_redacted_in_the_stored_config(mini: Suite, tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'results.db'}")
    with openai_server(answer) as (url, seen):
        flags = {"base_url": url, "headers": {"Authorization": SECRET, "X-Team": "team-7731"}}
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
        without = RunRequest(models=["openai-compatible/m"], model_flags={"base_url": url})
        with pytest.raises(UsageError, match=r"Authorization, X-Team.*--header NAME=VALUE"):
            asyncio.run(run_suite(mini, without, store, resume=report.run_id))
        resumed = asyncio.run(run_suite(mini, request, store, resume=report.run_id))
    assert resumed.run_id == report.run_id and resumed.ran == 0
    assert restored_secrets(config["model_flags"], flags, report.run_id) == flags
    assert store.run(report.run_id).config.model_flags["headers"]["Authorization"] == (REDACTED)


def test_credentials_in_the_base_url_are_redacted_and_asked_for_again(
    mini: Suite, tmp_path: Path
) -> None:
    store = Store(f"sqlite:///{tmp_path / 'results.db'}")
    with model_server(answer) as (url, seen):
        secret = url.replace("http://", "http://agent:pw-do-not-store@")
        request = RunRequest(
            models=["openai-compatible/m"], model_flags={"base_url": secret}, trials=1, k=[1]
        )
        report = asyncio.run(run_suite(mini, request, store))
        assert "Basic" in seen.headers[0]["Authorization"]  # the credentials were used
        redacted = url.replace("http://", f"http://{REDACTED}@")
        assert store.run(report.run_id).config.model_flags == {"base_url": redacted}
        files = list(tmp_path.glob("results.db*"))  # the database and any journal beside it
        assert files and not any(b"pw-do-not-store" in f.read_bytes() for f in files)
        # resuming needs them again, for the same server
        bare = RunRequest(models=["openai-compatible/m"], model_flags={})
        with pytest.raises(UsageError, match=r"credentials are not stored: give them again"):
            asyncio.run(run_suite(mini, bare, store, resume=report.run_id))
        elsewhere = RunRequest(
            models=["openai-compatible/m"],
            model_flags={"base_url": "http://agent:pw@127.0.0.1:9/v1"},
        )
        with pytest.raises(UsageError, match=rf"run {report.run_id} called {redacted}"):
            asyncio.run(run_suite(mini, elsewhere, store, resume=report.run_id))
        resumed = asyncio.run(run_suite(mini, request, store, resume=report.run_id))
    assert resumed.run_id == report.run_id and resumed.ran == 0
