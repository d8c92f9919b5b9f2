"""Runs with real model adapters against a local OpenAI-compatible server: several models
in one run, prices, cost per pass, the budget, an LLM-simulated user, servers that answer
garbage or nothing at all, bad base URLs, and how many calls each model has in flight."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from servers import HANG, Raw, completion, model_server, openai_server
from stored import run_json
from support import MINI_FILES, write_files

from toolproof.store import Store

# Slow: every test here runs the CLI as a process.
pytestmark = pytest.mark.slow

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
    with openai_server(answer) as (url, seen):
        done, summary = run_json(
            tmp_path,
            priced,
            "--model",
            "openai-compatible/good",
            "--model",
            "openai-compatible/bad",
            "--base-url",
            url,
            "--tasks",
            "status",
        )
    assert done.returncode == 0, done.stderr
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


def run_good(suite: Path, url: str, store: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`toolproof run` of openai-compatible/good at `url`, k=1, into `store`."""
    model = ["--model", "openai-compatible/good", "--base-url", url]
    return run(str(suite), *model, "--k", "1", "--store", str(store), *args)


def add_to_suite(suite: Path, text: str) -> None:
    write_files(suite, {"suite.yaml": (suite / "suite.yaml").read_text() + text})


def outcomes(store: Path) -> list[tuple[str, str, str]]:
    """(task, outcome, reason) of every trial of the store's one run, which finished."""
    journal = Store(str(store))
    [row] = journal.runs()
    assert journal.run(row["id"]).finished
    return sorted((r.task_id, r.outcome, r.reason) for _, r in journal.results(row["id"]))


def test_malformed_answers_end_their_trials_as_infra_errors_and_the_run_goes_on(
    priced: Path, tmp_path: Path
) -> None:
    """'cancel' is always answered with an HTML page; 'status' once, then properly."""
    pages = Counter[str]()

    def garbage(body: dict[str, Any]) -> tuple[int, dict[str, Any]] | Raw:
        opening = body["messages"][1]["content"]
        pages[opening] += 1
        if "order A" in opening or pages[opening] == 1:
            return Raw(b"<html><h1>502 Bad Gateway</h1></html>", content_type="text/html")
        return answer(body)

    store, out = tmp_path / "s.db", tmp_path / "out.json"
    with model_server(garbage) as (url, seen):
        done = run_good(priced, url, store, "--trials", "2", "--json", str(out))
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    reason = (
        "openai-compatible/good: malformed response: not JSON (text/html): "
        "'<html><h1>502 Bad Gateway</h1></html>' after 6 attempts"
    )
    assert outcomes(store) == [
        ("cancel", "infra_error", reason),
        ("cancel", "infra_error", reason),
        ("status", "passed", ""),
        ("status", "passed", ""),
    ]
    counts = json.loads(out.read_text())["counts"]
    assert (counts["passed"], counts["infra_error"], counts["total"]) == (2, 2, 4)
    # two cancel trials x 6 attempts; the status trials' 4 calls and one page retried
    assert len(seen.bodies) == 12 + 4 + 1


def test_a_hung_server_ends_a_trial_as_infra_error_after_its_request_timeouts(
    priced: Path, tmp_path: Path
) -> None:
    """--request-timeout bounds each request; 'cancel' hangs, 'status' is answered."""

    def hangs(body: dict[str, Any]) -> tuple[int, dict[str, Any]] | Raw:
        return HANG if "order A" in body["messages"][1]["content"] else answer(body)

    store = tmp_path / "s.db"
    with model_server(hangs) as (url, _):
        started = time.perf_counter()
        done = run_good(priced, url, store, "--request-timeout", "0.2", "--trials", "1")
        took = time.perf_counter() - started
    assert done.returncode == 0, done.stderr
    reason = "openai-compatible/good: request timed out: no answer in 0.2 s after 6 attempts"
    assert outcomes(store) == [("cancel", "infra_error", reason), ("status", "passed", "")]
    assert took < 60


def test_timeout_s_in_the_suite_bounds_each_request(priced: Path, tmp_path: Path) -> None:
    add_to_suite(priced, "models:\n  openai-compatible/good: {timeout_s: 0.2}\n")
    store = tmp_path / "s.db"
    with model_server(lambda body: HANG) as (url, seen):
        done = run_good(priced, url, store, "--tasks", "status", "--trials", "1")
    assert done.returncode == 0, done.stderr
    [(_, outcome, reason)] = outcomes(store)
    assert outcome == "infra_error" and "no answer in 0.2 s after 6 attempts" in reason
    assert len(seen.bodies) == 6


def test_a_base_url_that_is_not_a_url_is_a_usage_error_before_any_trial(
    priced: Path, tmp_path: Path
) -> None:
    store = tmp_path / "s.db"
    done = run_good(priced, "not a url", store)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "error: model openai-compatible/good: base_url: 'not a url' is not a URL: "
        "give http:// or https:// and a host, as in http://127.0.0.1:8000/v1"
    ]
    assert not store.exists() or Store(str(store)).runs() == []


def test_a_base_url_in_the_suite_that_is_not_a_url_is_located(priced: Path, tmp_path: Path) -> None:
    add_to_suite(priced, "models:\n  openai-compatible/good: {base_url: 'ftp://files'}\n")
    done = run(str(priced), "--model", "openai-compatible/good", "--store", str(tmp_path / "s.db"))
    assert done.returncode == 2
    assert "suite.yaml:" in done.stderr and "'ftp://files' is not a URL" in done.stderr
    assert "Traceback" not in done.stderr


class InFlight:
    """Answers after a pause, counting the calls in flight per model."""

    def __init__(self, pause_s: float) -> None:
        self.pause_s = pause_s
        self.now: Counter[str] = Counter()
        self.peak: Counter[str] = Counter()
        self.first_two: Counter[str] = Counter()
        """The calls in flight when two first were."""
        self.lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        model = body["model"]
        with self.lock:
            self.now[model] += 1
            self.peak[model] = max(self.peak[model], self.now[model])
            if not self.first_two and self.now.total() == 2:
                self.first_two = Counter(self.now)
        time.sleep(self.pause_s)
        with self.lock:
            self.now[model] -= 1
        return 200, completion("Order B has shipped.")


@pytest.mark.parametrize(
    ("setting", "peak"),
    [
        ("", 24),  # the run's concurrency: above the 16 every model used to start at
        ("models:\n  openai-compatible/good: {max_concurrency: 3}\n", 3),  # still wins
    ],
)
def test_a_models_calls_in_flight_start_at_the_runs_concurrency_or_its_max_concurrency(
    priced: Path, tmp_path: Path, setting: str, peak: int
) -> None:
    add_to_suite(priced, setting)
    server = InFlight(0.4)
    with model_server(server) as (url, _):
        trials = ["--tasks", "status", "--trials", "24", "--concurrency", "24"]
        done = run_good(priced, url, tmp_path / "s.db", *trials)
    assert done.returncode == 0, done.stderr
    assert server.peak["good"] == peak


def test_models_are_interleaved_so_every_model_has_calls_in_flight(
    priced: Path, tmp_path: Path
) -> None:
    server = InFlight(0.3)
    with model_server(server) as (url, seen):
        second = ["--model", "openai-compatible/bad", "--trials", "2", "--concurrency", "2"]
        done = run_good(priced, url, tmp_path / "s.db", *second)
    assert done.returncode == 0, done.stderr
    # Two trials at a time, one of each model: a plan that took every task of one model first
    # would start two calls of that model at once. Later, which of two calls made together
    # comes back first is the machine's choice, and the trial that ends first hands its place
    # to the next in the plan, of either model; so only the start is asserted (and not the
    # order in which the first two requests arrive: one trial may start late).
    assert server.first_two == {"good": 1, "bad": 1}
    assert max(server.peak.values()) <= 2
    assert {b["model"] for b in seen.bodies} == {"good", "bad"}
