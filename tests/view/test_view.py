"""`toolproof view`: a real HTTP server over a store filled by real runs: the runs list and
its filters, the reports, the trends, escaping of names from the store, the command's errors,
and, in a headless Chromium, charts drawn with no script error."""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import sqlite3
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from dashboard import (
    DATA_BLOCK,
    SCRIPT_LABEL,
    ViewRuns,
    fill_store,
    get,
    serving,
)
from support import MINI_FILES, write_files

from toolproof.report.html import render_report
from toolproof.runner.run import RunRequest, run_suite
from toolproof.store import Store
from toolproof.suite import load_suite
from toolproof.summaries import stored_summary
from toolproof.view.data import trend_metrics

CLI = str(Path(sys.executable).parent / "toolproof")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> ViewRuns:
    root = tmp_path_factory.mktemp("view")
    return fill_store(f"sqlite:///{root / 'results.db'}", root)


@pytest.fixture(scope="module")
def base(runs: ViewRuns) -> Iterator[str]:
    with serving(runs.url) as url:
        yield url


def listed(base: str, query: str = "") -> list[str]:
    reply = get(f"{base}api/runs{query}")
    assert reply.status == 200, reply.text
    return [run["id"] for run in reply.json()["runs"]]


# ---------------------------------------------------------------- the runs list


@pytest.mark.slow
def test_the_runs_list_filters_by_suite_model_tag_and_date(base: str, runs: ViewRuns) -> None:
    newest_first = [runs.shop, *reversed(runs.mini)]
    assert listed(base) == newest_first
    assert listed(base, "?suite=shop") == [runs.shop]
    assert listed(base, "?suite=mini") == list(reversed(runs.mini))
    assert listed(base, "?model=oracle") == [runs.shop, runs.oracle_again, runs.oracle]
    assert listed(base, "?model=openai-compatible/beta") == [runs.models]
    assert listed(base, "?suite=mini&model=oracle") == [runs.oracle_again, runs.oracle]
    assert listed(base, "?tag=refund") == [runs.shop]
    assert listed(base, "?tag=cancel") == list(reversed(runs.mini))
    today = datetime.now(UTC).date()
    day = timedelta(days=1)
    assert listed(base, f"?from={today}&to={today}") == newest_first
    assert listed(base, f"?from={today + day}") == []
    assert listed(base, f"?to={today - day}") == []
    assert listed(base, "?limit=2") == newest_first[:2]
    data = get(f"{base}api/runs?limit=2").json()
    assert data["total"] == 6 and data["filter"] == {"limit": "2"}
    assert data["choices"]["suites"] == ["mini", "shop"]
    assert data["choices"]["tags"] == ["cancel", "lookup", "refund"]
    assert "openai-compatible/alpha" in data["choices"]["models"]
    bad = get(f"{base}api/runs?from=yesterday")
    assert bad.status == 400 and "YYYY-MM-DD" in bad.json()["error"]
    # the page: the form keeps the filter, the table has the runs it keeps
    page = get(f"{base}?suite=shop&tag=refund")
    assert page.status == 200 and page.headers["Content-Type"].startswith("text/html")
    assert runs.shop in page.text and runs.oracle not in page.text
    assert '<option value="shop" selected>shop</option>' in page.text
    assert '<option value="refund" selected>refund</option>' in page.text
    assert f'href="/runs/{runs.shop}/report"' in page.text
    assert "1 run ·" in page.text and 'href="/trends?suite=shop"' in page.text


def test_each_run_shows_its_summary_s_numbers_per_model(base: str, runs: ViewRuns) -> None:
    store = Store(runs.url)
    by_id = {run["id"]: run for run in get(f"{base}api/runs").json()["runs"]}
    for run_id in [*runs.mini, runs.shop]:
        run = by_id[run_id]
        summary = stored_summary(store, run_id).as_json()
        assert run["status"] == "finished" and run["trials"] == summary["counts"]["total"]
        tags = ["lookup", "refund"] if run_id == runs.shop else ["cancel", "lookup"]
        assert run["k"] == 3 and run["tags"] == tags
        for entry, model in zip(run["entries"], summary["models"], strict=True):
            assert entry["model"] == model["model"]
            assert entry["pass@1"] == model["metrics"]["pass@1"]
            assert entry["pass^k"] == model["metrics"]["pass^3"]
            assert entry["reliability_score"] == model["reliability"]["reliability_score"]
    two = by_id[runs.models]
    assert two["models"] == ["openai-compatible/alpha", "openai-compatible/beta"]
    assert [(e["model"], e["pass@1"]) for e in two["entries"]] == [
        ("openai-compatible/alpha", 0.5),
        ("openai-compatible/beta", 0.0),
    ]
    assert [e["pass@1"] for e in by_id[runs.oracle]["entries"]] == [1.0]
    assert [e["pass@1"] for e in by_id[runs.null]["entries"]] == [0.0]
    assert by_id[runs.scripted]["agent"] == runs.scripted_label
    store.engine.dispose()


def test_the_runs_list_shows_the_conditions_each_run_ran_under(tmp_path: Path) -> None:
    mini = load_suite(write_files(tmp_path / "mini", MINI_FILES))
    url = f"sqlite:///{tmp_path / 'conditions.db'}"
    store = Store(url)
    request = RunRequest(agent="oracle", trials=1, k=[1])
    clean = asyncio.run(run_suite(mini, request, store)).run_id
    loaded = asyncio.run(run_suite(mini, replace(request, load=[1, 2]), store)).run_id
    store.engine.dispose()
    with serving(url) as base:
        by_id = {run["id"]: run for run in get(f"{base}api/runs").json()["runs"]}
        assert by_id[clean]["conditions"] == ["clean"]
        assert by_id[loaded]["conditions"] == ["load:1", "load:2"]
        page = get(base).text
    row = page[page.index(f'value="{loaded}"') :]
    assert "<td><div>load:1</div><div>load:2</div></td>" in row[: row.index("</tr>")]


# ---------------------------------------------------------------- reports


def test_a_run_s_report_is_the_report_command_s_page(base: str, runs: ViewRuns) -> None:
    reply = get(f"{base}runs/{runs.null}/report")
    assert reply.status == 200 and reply.headers["Content-Type"] == "text/html; charset=utf-8"
    served = json.loads(DATA_BLOCK.search(reply.text).group(1))  # type: ignore[union-attr]
    store = Store(runs.url)
    page, counts = render_report(store, [runs.null])
    expected = json.loads(DATA_BLOCK.search(page).group(1))  # type: ignore[union-attr]
    for data in (served, expected):
        data.pop("generated_at")
    assert served == expected and counts["trials"] == 6
    assert "Content-Security-Policy" in reply.text  # the report's own policy
    # a finished run's report is rendered once and kept
    assert get(f"{base}runs/{runs.null}/report").body == reply.body
    both = get(f"{base}report?run={runs.oracle}&run={runs.models}")
    data = json.loads(DATA_BLOCK.search(both.text).group(1))  # type: ignore[union-attr]
    assert [r["id"] for r in data["runs"]] == [runs.oracle, runs.models]
    assert [e["label"] for e in data["entries"]] == [
        "oracle",
        "openai-compatible/alpha",
        "openai-compatible/beta",
    ]
    store.engine.dispose()


def test_unknown_runs_and_pages_are_404(base: str) -> None:
    page = get(f"{base}runs/no-such-run/report")
    assert page.status == 404 and "no run &#x27;no-such-run&#x27;" in page.text
    api = get(f"{base}api/runs/no-such-run")
    assert api.status == 404 and "no run 'no-such-run'" in api.json()["error"]
    assert get(f"{base}report?run=no-such-run").status == 404
    assert get(f"{base}report").status == 400
    assert get(f"{base}nowhere").status == 404
    assert get(f"{base}api/nowhere").json() == {"error": "no page at /api/nowhere"}
    assert get(f"{base}static/other.js").status == 404


def test_a_run_s_summary_as_json(base: str, runs: ViewRuns) -> None:
    reply = get(f"{base}api/runs/{runs.models}")
    store = Store(runs.url)
    assert reply.json() == stored_summary(store, runs.models).as_json()
    store.engine.dispose()


# ---------------------------------------------------------------- trends


def test_trends_chart_every_metric_per_model_in_time_order(base: str, runs: ViewRuns) -> None:
    data = get(f"{base}api/trends?suite=mini").json()
    assert data["suite"] == "mini" and data["k"] == 3 and data["ks"] == [1, 3]
    assert [r["id"] for r in data["runs"]] == runs.mini
    assert data["models"] == [
        "oracle",
        "openai-compatible/alpha",
        "openai-compatible/beta",
        "null",
        runs.scripted_label,
    ]
    metrics = {m["name"]: m for m in data["metrics"]}
    assert list(metrics) == [m.name for m in trend_metrics()]
    series = {name: {s["model"]: s["values"] for s in m["series"]} for name, m in metrics.items()}
    assert series["pass@1"]["oracle"] == [1.0, None, None, None, 1.0]
    assert series["pass@1"]["openai-compatible/alpha"] == [None, 0.5, None, None, None]
    assert series["pass^k"]["openai-compatible/alpha"][1] == pytest.approx(0.5)
    assert series["pass^k"]["null"] == [None, None, 0.0, None, None]
    assert metrics["pass^k"]["label"] == "pass^3"
    assert series["reliability_score"]["oracle"][0] == 1.0
    assert series["score.pass^k"]["oracle"][0] == 1.0
    assert series["infra_error_share"]["null"][2] == 0.0
    # the model runs made model calls: their latency is measured; the oracle's is not
    assert series["latency_p95_s"]["openai-compatible/beta"][1] > 0
    assert series["latency_p95_s"]["oracle"][0] is None
    assert series["trial_latency_p95_s"]["oracle"][0] > 0
    # every value is the run summary's
    store = Store(runs.url)
    summary = stored_summary(store, runs.models).as_json()
    alpha = summary["models"][0]
    assert (
        series["cost_per_pass_usd"]["openai-compatible/alpha"][1]
        == (alpha["metrics"]["cost_per_pass_usd"])
    )
    store.engine.dispose()
    # pass^k at another k; a k above the trials gives no value, never a number
    at_one = get(f"{base}api/trends?suite=mini&k=1").json()
    assert at_one["metrics"][1]["label"] == "pass^1"
    assert at_one["metrics"][1]["series"][0]["values"] == [1.0, None, None, None, 1.0]
    too_big = get(f"{base}api/trends?suite=mini&k=4").json()
    assert all(v is None for s in too_big["metrics"][1]["series"] for v in s["values"])
    assert get(f"{base}api/trends?k=zero").status == 400


def test_trends_follow_the_filter(base: str, runs: ViewRuns) -> None:
    newest_suite = get(f"{base}api/trends").json()
    assert newest_suite["suite"] == "shop" and [r["id"] for r in newest_suite["runs"]] == [
        runs.shop
    ]
    oracle = get(f"{base}api/trends?suite=mini&model=oracle").json()
    assert [r["id"] for r in oracle["runs"]] == [runs.oracle, runs.oracle_again]
    assert oracle["models"] == ["oracle"]
    few = get(f"{base}api/trends?suite=mini&limit=2").json()
    assert [r["id"] for r in few["runs"]] == [runs.scripted, runs.oracle_again]
    none = get(f"{base}api/trends?suite=nothing").json()
    assert none["runs"] == [] and all(m["series"] == [] for m in none["metrics"])
    page = get(f"{base}trends?suite=nothing")
    assert page.status == 200 and "No finished run of suite nothing matches." in page.text


# ---------------------------------------------------------------- safety


def test_text_from_the_store_is_escaped(base: str, runs: ViewRuns) -> None:
    for path in ("", "?model=" + urllib.request.quote(runs.scripted_label), "trends?suite=mini"):
        reply = get(base + path)
        assert reply.status == 200
        assert SCRIPT_LABEL not in reply.text and "<script>alert" not in reply.text
        policy = reply.headers["Content-Security-Policy"]
        assert "default-src 'none'" in policy and "script-src 'self'" in policy
        assert "unsafe-inline" not in policy
        assert reply.headers["X-Content-Type-Options"] == "nosniff"
    listed = get(base).text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in listed
    trends = get(f"{base}trends?suite=mini").text
    assert "\\u003cscript\\u003ealert(1)\\u003c/script\\u003e" in trends
    # only the dashboard's own files are scripts; the data block is not one that runs
    scripts = re.findall(r"<script\b[^>]*>", trends)
    assert scripts == [
        '<script type="application/json" id="tp-trends">',
        '<script src="/static/chart.umd.min.js">',
        '<script src="/static/view.js">',
    ]
    chart = get(f"{base}static/chart.umd.min.js")
    assert chart.status == 200 and chart.body.startswith(b"/*!") and b"Chart.js v4" in chart.body
    assert chart.headers["Content-Type"] == "text/javascript; charset=utf-8"


def test_a_loopback_server_answers_only_loopback_host_names(base: str) -> None:
    assert get(base, host="evil.example:8765").status == 400
    assert get(f"{base}api/runs", host="evil.example").status == 400
    port = base.rsplit(":", 1)[1].rstrip("/")
    assert get(base, host=f"localhost:{port}").status == 200
    assert get(base, host=f"127.0.0.1:{port}").status == 200


# ---------------------------------------------------------------- in a browser


@pytest.mark.slow
def test_in_chromium_the_trends_draw_every_chart_with_no_script_error(
    base: str, runs: ViewRuns, chromium: Any
) -> None:
    dom = chromium.dump_dom(f"{base}trends?suite=mini")
    assert "data-problems" not in dom, re.search(r'data-problems="([^"]*)"', dom)
    drawn = re.search(r'data-charts="(\d+)"', dom)
    assert drawn and int(drawn.group(1)) == len(trend_metrics())
    canvases = re.findall(r"<canvas[^>]*>", dom)
    assert len(canvases) == len(trend_metrics())
    for canvas in canvases:
        assert "box-sizing: border-box" in canvas  # taken over by Chart.js
        width = re.search(r'\bwidth="(\d+)"', canvas)
        assert width and int(width.group(1)) > 100
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in dom
    assert not re.search(r"<script>alert", dom)
    listed = chromium.dump_dom(base)
    assert runs.oracle in listed and "&lt;script&gt;alert(1)&lt;/script&gt;" in listed
    assert not re.search(r"<script>alert", listed) and "data-problems" not in listed


# ---------------------------------------------------------------- the command


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def view(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    done = subprocess.run(
        [CLI, "view", *args], capture_output=True, text=True, timeout=timeout, env=env
    )
    assert "Traceback" not in done.stdout + done.stderr, done.stderr
    return done


@contextmanager
def view_process(*args: str) -> Iterator[tuple[str, str]]:
    """`toolproof view` running; yields its address and what it printed on stderr first."""
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    process = subprocess.Popen(
        [CLI, "view", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    try:
        assert process.stdout is not None and process.stderr is not None
        line = process.stdout.readline()
        address = re.search(r"at (http://\S+/)", line)
        assert address, line + process.stderr.read()
        yield address.group(1), "" if process.poll() is None else process.stderr.read()
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.mark.slow
def test_the_command_serves_the_store(runs: ViewRuns) -> None:
    with view_process("--store", runs.url, "--port", "0") as (address, _):
        assert address.startswith("http://127.0.0.1:")
        data = get(f"{address}api/runs").json()
        assert [r["id"] for r in data["runs"]][-1] == runs.oracle


@pytest.mark.slow
def test_a_non_loopback_host_is_served_with_a_warning(runs: ViewRuns) -> None:
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    command = [CLI, "view", "--store", runs.url, "--host", "0.0.0.0", "--port", "0"]
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    try:
        assert process.stdout is not None and process.stderr is not None
        warning = process.stderr.readline()
        assert warning.startswith("warning: listening on 0.0.0.0") and "no login" in warning
        port = re.search(r":(\d+)/", process.stdout.readline())
        assert port
        reply = get(f"http://127.0.0.1:{port.group(1)}/api/runs", host="dashboard.example")
        assert reply.status == 200
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.mark.slow
def test_bad_input_is_one_line_and_exit_2(runs: ViewRuns, tmp_path: Path) -> None:
    missing = view("--store", str(tmp_path / "none.db"))
    assert missing.returncode == 2 and "no results store at" in missing.stderr
    assert not (tmp_path / "none.db").exists()  # the dashboard never creates a store
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE notes (text)")
    empty = view("--store", str(other))
    assert empty.returncode == 2 and "holds no toolproof results" in empty.stderr
    unreachable = view("--store", f"postgresql+psycopg://u:secret@127.0.0.1:{free_port()}/db")
    assert unreachable.returncode == 2 and "cannot open store" in unreachable.stderr
    assert "secret" not in unreachable.stderr
    assert len(unreachable.stderr.strip().splitlines()) == 1
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        busy = view("--store", runs.url, "--port", port)
    assert busy.returncode == 2 and f"port {port} on 127.0.0.1 is in use" in busy.stderr
    assert len(busy.stderr.strip().splitlines()) == 1
