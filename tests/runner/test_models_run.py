"""Runs with real model adapters against a local OpenAI-compatible server: several models
in one run, prices, cost per pass, the budget, and an LLM-simulated user."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from servers import completion, openai_server
from support import MINI_FILES, write_files

CLI = str(Path(sys.executable).parent / "toolproof")
PRICES = """
prices:
  openai-compatible/good: {input: 1.0, output: 2.0}
"""


def answer(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """'good' looks the order up then answers; 'bad' never helps; the user model stops."""
    messages = body["messages"]
    if "You are a customer" in messages[0]["content"]:
        return 200, completion("###STOP###", prompt_tokens=50)
    if body["model"] == "bad":
        return 200, completion("I don't know.")
    if messages[-1]["role"] == "tool":
        return 200, completion("Order B has shipped.")
    return 200, completion(tool_calls=[{"name": "get_order", "arguments": {"order_id": "B"}}])


@pytest.fixture
def priced(tmp_path: Path) -> Path:
    files = dict(MINI_FILES)
    files["suite.yaml"] = files["suite.yaml"] + PRICES
    return write_files(tmp_path / "priced", files)


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CLI, "run", *args], capture_output=True, text=True, timeout=120)


def test_two_models_in_one_run_give_a_row_each_with_cost_per_pass(
    priced: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out.json"
    with openai_server(answer) as (url, seen):
        done = run(
            str(priced),
            "--model",
            "openai-compatible/good",
            "--model",
            "openai-compatible/bad",
            "--base-url",
            url,
            "--tasks",
            "status",
            "--trials",
            "2",
            "--k",
            "1,2",
            "--store",
            str(tmp_path / "s.db"),
            "--json",
            str(out),
        )
    assert done.returncode == 0, done.stderr
    summary = json.loads(out.read_text())
    models = {m["model"]: m for m in summary["models"]}
    assert set(models) == {"openai-compatible/good", "openai-compatible/bad"}
    assert "metrics" not in summary  # several models: metrics live under models
    good, bad = (
        models["openai-compatible/good"]["metrics"],
        models["openai-compatible/bad"]["metrics"],
    )
    assert (good["pass@1"], bad["pass@1"]) == (1.0, 0.0)
    # good: 2 trials x 2 calls x (100 in at $1/M + 10 out at $2/M) = 4 x $0.00012
    assert good["cost_usd"] == pytest.approx(0.00048)
    assert good["cost_per_pass_usd"] == pytest.approx(0.00024)
    assert good["tokens_input"] == 400 and good["tokens_output"] == 40
    assert good["latency_p95_s"] is not None and good["latency_p95_s"] > 0
    # bad has no price: its cost is unknown, never zero
    assert bad["cost_usd"] is None and bad["cost_per_pass_usd"] is None
    assert "unpriced" in done.stdout
    sent = next(body for body in seen if body["model"] == "good")
    assert sent["tools"][0]["function"]["name"] in {"get_order", "cancel_order"}
    assert sent["messages"][0]["role"] == "system"


def test_max_cost_stops_scheduling_and_says_so(priced: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    with openai_server(answer) as (url, _):
        done = run(
            str(priced),
            "--model",
            "openai-compatible/good",
            "--base-url",
            url,
            "--tasks",
            "status",
            "--trials",
            "4",
            "--k",
            "1,4",
            "--concurrency",
            "1",
            "--max-cost",
            "0.0005",
            "--store",
            str(tmp_path / "s.db"),
            "--json",
            str(out),
        )
    assert done.returncode == 0, done.stderr
    assert "budget reached" in done.stdout
    summary = json.loads(out.read_text())
    # each trial costs $0.00024: after 3 trials $0.00072 >= $0.0005, so the 4th never starts
    assert summary["counts"]["total"] == 3
    assert summary["skipped_k"] == [4]
    assert summary["metrics"]["pass^1"] == 1.0


def test_a_simulated_user_ends_the_conversation_and_its_cost_is_kept_apart(
    priced: Path, tmp_path: Path
) -> None:
    write_files(
        priced,
        {
            "suite.yaml": (priced / "suite.yaml").read_text()
            + "  openai-compatible/user: {input: 1.0, output: 1.0}\n"
        },
    )
    out = tmp_path / "out.json"
    with openai_server(answer) as (url, seen):
        done = run(
            str(priced),
            "--model",
            "openai-compatible/good",
            "--base-url",
            url,
            "--user-model",
            "openai-compatible/user",
            "--tasks",
            "status",
            "--trials",
            "1",
            "--k",
            "1",
            "--store",
            str(tmp_path / "s.db"),
            "--json",
            str(out),
        )
    assert done.returncode == 0, done.stderr
    metrics = json.loads(out.read_text())["metrics"]
    assert metrics["pass@1"] == 1.0
    # the user model answered once: 50 in + 10 out at $1/M each
    assert metrics["user_cost_usd"] == pytest.approx(0.00006)
    assert metrics["cost_usd"] == pytest.approx(0.00024)
    user_calls = [b for b in seen if "You are a customer" in b["messages"][0]["content"]]
    assert len(user_calls) == 1 and "tools" not in user_calls[0]
