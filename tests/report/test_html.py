"""The HTML report: one self-contained file, numbers equal to the run summary, transcripts
that decode to the stored records, and, in a real headless Chromium, charts drawn and no
injected markup run."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import statistics
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from toolproof.cli.results import report
from toolproof.errors import StoreError, UsageError
from toolproof.metrics.passk import pass_at_k, pass_hat_k
from toolproof.report.html import passk_curve, render_report, write_report
from toolproof.report.html.render import MAX_CURVE_POINTS, inline_script, json_for_script
from toolproof.spec.metrics import CATALOGUE
from toolproof.spec.user import BUILTIN_PERSONAS
from toolproof.store import Store
from toolproof.summaries import stored_summary

SECTIONS = ("overview", "score", "passk", "cost", "conditions", "blame", "breakdown", "grid")
DATA_BLOCK = re.compile(r'<script type="application/json" id="tp-data">(.*?)</script>', re.S)
PWNED = re.compile(r"<[^>]*\sdata-pwned=")
CHUNK_BLOCK = re.compile(r'<script type="text/plain" id="tx-(\d+)">([A-Za-z0-9+/=]*)</script>')


def page_data(page: str) -> dict[str, Any]:
    match = DATA_BLOCK.search(page)
    assert match, "no data block"
    data: dict[str, Any] = json.loads(match.group(1))
    return data


def chunks(page: str) -> dict[int, list[dict[str, Any]]]:
    """The embedded trial records, decoded as the browser does: base64, gzip, JSON."""
    return {
        int(i): json.loads(zlib.decompress(base64.b64decode(text), wbits=31))
        for i, text in CHUNK_BLOCK.findall(page)
    }


def trial_index(data: dict[str, Any], label_prefix: str, outcome: str = "f") -> int:
    """The grid index of the first trial of a model whose label starts with the prefix."""
    for group in data["grid"]["groups"]:
        if data["entries"][group["e"]]["label"].startswith(label_prefix) and outcome in group["o"]:
            return int(group["s"]) + group["o"].index(outcome)
    raise AssertionError(f"no {outcome} trial for {label_prefix}")


@pytest.fixture(scope="module")
def page(report_store: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The report of all three runs, written once for the module."""
    path = tmp_path_factory.mktemp("report") / "report.html"
    write_report(Store(report_store.url), report_store.runs, path)
    return path


# ---------------------------------------------------------------- pure parts


def test_passk_curve_is_the_mean_of_per_task_pass_hat_k() -> None:
    tasks = [(4, 4), (4, 2), (5, 1), (6, 0)]
    curve = passk_curve(tasks)
    assert curve["k"] == [1.0, 2.0, 3.0, 4.0]
    for i, k in enumerate(range(1, 5)):
        expected = sum(pass_hat_k(n, c, k) for n, c in tasks) / len(tasks)
        assert curve["pass_hat"][i] == pytest.approx(expected)
        assert curve["pass_at"][i] == pytest.approx(
            sum(pass_at_k(n, c, k) for n, c in tasks) / len(tasks)
        )
    assert curve["pass_hat"] == sorted(curve["pass_hat"], reverse=True)
    long = passk_curve([(1000, 900), (1000, 1000)])
    assert len(long["k"]) == MAX_CURVE_POINTS
    assert long["k"][0] == 1.0 and long["k"][-1] == 1000.0
    assert passk_curve([]) == {"k": [], "pass_hat": [], "pass_at": []}


def test_json_for_script_escapes_everything_that_could_end_the_block() -> None:
    value = {"text": "</script><img src=x onerror=alert(1)> & <!-- \u2028", "n": [1, 2.5, None]}
    text = json_for_script(value)
    assert not set(text) & {"<", ">", "&", "\u2028"}
    assert json.loads(text) == value


def test_inlined_script_cannot_close_its_block() -> None:
    source = "var a = '</script>'; var b = '</SCRIPT >'; // <!--\n//# sourceMappingURL=x.map\n"
    text = inline_script(source)
    assert "</script" not in text.lower()
    assert "<!--" not in text and "sourceMappingURL" not in text


# ---------------------------------------------------------------- the file


def test_the_report_is_one_self_contained_file(page: Path, report_store: Any) -> None:
    html = page.read_text(encoding="utf-8")
    for section in SECTIONS:
        assert f'<section id="{section}">' in html
    assert 'id="drawer"' in html
    # nothing loaded from elsewhere: no external script, stylesheet, font, image or import
    assert not re.search(r"<script[^>]*\bsrc\s*=", html, re.I)
    assert not re.search(r"<link\b", html, re.I)
    assert not re.search(r"""\b(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""", html, re.I)
    assert not re.search(r"url\(\s*['\"]?\s*(?:https?:)?//", html, re.I)
    assert "@import" not in html
    assert "Chart.js v4.6.1" in html  # the bundled library, inlined
    # only the page's own scripts may run: each inline script's hash is in the policy
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html)
    assert policy and "default-src &#x27;none&#x27;" in policy.group(1)
    scripts = re.findall(r"<script>(.*?)</script>", html, re.S)
    assert len(scripts) == 2
    for script in scripts:
        digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
        assert f"sha256-{digest}" in policy.group(1)
    # the payloads exist only escaped or compressed, never as markup
    for payload in report_store.payloads:
        assert payload not in html
    assert "<img" not in html and "<svg" not in html and "__pwned" not in html
    data = page_data(html)
    assert any("<svg onload" in reason for reason in data["grid"]["reasons"])
    assert page.stat().st_size < 2_000_000


def test_the_numbers_are_the_run_summary(page: Path, report_store: Any) -> None:
    data = page_data(page.read_text(encoding="utf-8"))
    store = Store(report_store.url)
    assert [r["id"] for r in data["runs"]] == report_store.runs
    assert [e["label"] for e in data["entries"]] == [
        "retrying-oracle",
        "null",
        data["entries"][2]["label"],
    ]
    assert data["entries"][2]["label"].startswith("scripted:")
    for entry in data["entries"]:
        summary = stored_summary(store, data["runs"][entry["run"]]["id"]).as_json()
        model = summary["models"][0]
        assert entry["metrics"] == pytest.approx(model["metrics"], nan_ok=True)
        assert entry["reliability"] == model["reliability"]
        assert entry["conditions"] == json.loads(json.dumps(model["conditions"]))
        assert entry["tiers"] == model["tiers"] and entry["tags"] == model["tags"]
        assert entry["policy"] == json.loads(json.dumps(model["policy"]))
        assert entry["blame"] == model["blame"] and entry["blame_rules"] == model["blame_rules"]
        assert sum(entry["blame"].values()) == entry["counts"]["failed"]
        assert entry.get("personas") == model.get("personas")
        for k in entry["ks"]:
            at = entry["curve"]["k"].index(float(k))
            assert entry["curve"]["pass_hat"][at] == pytest.approx(model["metrics"][f"pass^{k}"])
    oracle = data["entries"][0]
    conditions = {"", "faults:production", "drift:v2-api", "load:3"}
    # the full profile also runs the messy built-in personas (the suite declares none)
    personas = {p for p in BUILTIN_PERSONAS if p != "cooperative"}
    assert set(oracle["variants"]) == conditions | {f"persona:{p}" for p in personas}
    assert set(oracle["personas"]) == personas
    assert oracle["reliability"]["missing"] == []
    # every trial is in the grid once, in its group
    total = sum(r["counts"]["total"] for r in data["runs"])
    assert sum(len(g["o"]) for g in data["grid"]["groups"]) == total
    assert data["transcripts"]["total"] == total


def test_the_page_takes_the_score_s_parts_and_the_latencies_from_the_catalogue(
    page: Path,
) -> None:
    catalogue = page_data(page.read_text(encoding="utf-8"))["catalogue"]
    parts = [part["key"] for part in catalogue["parts"]]
    assert parts == [d.generic for d in CATALOGUE.score_parts()]
    assert catalogue["parts"][0]["label"] == "pass^k (clean trials)"
    for entry in page_data(page.read_text(encoding="utf-8"))["entries"]:
        assert list(entry["reliability"]["components"]) == parts
    shown = [d.name for d in CATALOGUE.where("html", ("economics",)) if d.unit == "seconds"]
    assert (
        [m["name"] for m in catalogue["latency"]]
        == shown
        == [
            "latency_p50_s",
            "latency_p95_s",
            "trial_latency_p50_s",
            "trial_latency_p95_s",
        ]
    )


def test_every_trial_record_decodes_to_what_the_store_holds(page: Path, report_store: Any) -> None:
    html = page.read_text(encoding="utf-8")
    data = page_data(html)
    decoded = chunks(html)
    assert data["transcripts"]["embedded"] == data["transcripts"]["total"]
    assert len(decoded) == len(data["transcripts"]["chunks"])
    stored = {}
    store = Store(report_store.url)
    for run_id in report_store.runs:
        for _, result in store.results(run_id):
            stored[(run_id, result.variant, result.task_id, result.trial)] = result
    groups = data["grid"]["groups"]
    seen = 0
    for chunk, indices in enumerate(data["transcripts"]["chunks"]):
        for position, index in enumerate(indices):
            group = next(g for g in groups if g["s"] <= index < g["s"] + len(g["o"]))
            trial = group["t"][index - group["s"]] if "t" in group else index - group["s"]
            run_id = data["runs"][data["entries"][group["e"]]["run"]]["id"]
            record = decoded[chunk][position]
            assert record["task_id"] == group["task"] and record["trial"] == trial
            expected = stored[(run_id, group["v"], group["task"], trial)]
            assert record == expected.model_dump(mode="json")
            assert record["outcome"][0] == group["o"][index - group["s"]]
            seen += 1
    assert seen == len(stored)
    records = [record for chunk in decoded.values() for record in chunk]
    script = next(r for r in records if r["agent"].startswith("scripted:"))
    texts = [e.get("content", "") for e in script["transcript"]["events"]]
    assert any(report_store.payloads[0] in text for text in texts)


def test_a_budget_keeps_the_trials_that_did_not_pass_first(report_store: Any) -> None:
    store = Store(report_store.url)
    full, _ = render_report(store, report_store.runs)
    first = CHUNK_BLOCK.search(full)
    assert first
    budget = len(first.group(2)) / 1_000_000
    small, counts = render_report(store, report_store.runs, transcripts_mb=budget)
    data = page_data(small)
    index = data["transcripts"]["chunks"]
    assert len(index) == 1 and counts["transcripts"] == len(index[0]) < counts["trials"]
    codes = "".join(g["o"] for g in data["grid"]["groups"])
    kept = [codes[i] for i in index[0]]
    failing = [i for i, code in enumerate(codes) if code != "p"]
    assert kept == sorted(kept, key=lambda code: code == "p")  # failures, then passes
    assert set(failing) <= set(index[0]) or all(code != "p" for code in kept)
    none, counts = render_report(store, report_store.runs, transcripts_mb=0)
    assert counts["transcripts"] == 0 and not CHUNK_BLOCK.search(none)
    with pytest.raises(UsageError):
        render_report(store, [])


def test_the_report_command(report_store: Any, tmp_path: Path) -> None:
    app = typer.Typer()
    app.command()(report)
    app.command("other")(lambda: None)  # several commands: invoked by name, like the real CLI
    out = tmp_path / "nested" / "r.html"
    args = ["report", *report_store.runs[:2], "-o", str(out), "--store", report_store.url]
    result = CliRunner().invoke(app, [*args, "--title", "Weekly <b>run</b>"])
    assert result.exit_code == 0, result.output
    assert "wrote" in result.output and out.exists()
    html = out.read_text(encoding="utf-8")
    assert "<title>Weekly &lt;b&gt;run&lt;/b&gt;</title>" in html
    assert len(page_data(html)["runs"]) == 2
    missing = CliRunner().invoke(app, ["report", "no-such-run", "--store", report_store.url])
    assert isinstance(missing.exception, StoreError)
    negative = CliRunner().invoke(app, [*args, "--transcripts-mb", "-1"])
    assert negative.exit_code == 2


# ---------------------------------------------------------------- in a browser


@pytest.mark.slow
def test_in_chromium_no_injected_code_runs_and_the_charts_are_drawn(
    page: Path, chromium: Any
) -> None:
    data = page_data(page.read_text(encoding="utf-8"))
    scripted = trial_index(data, "scripted:")
    dom = chromium.dump_dom(f"{page.as_uri()}#trial={scripted}")
    # the trial opened and its record was decompressed and drawn
    assert f'data-loaded="{scripted}"' in dom
    assert not re.search(r">(?:undefined|NaN)<|</div>null<", dom)  # no stray values as text
    assert "&lt;script&gt;window.__pwned=1;" in dom
    # the policy and blame section, and who the opened trial's failure is blamed on
    assert "Policy adherence and violations by rule" in dom and "Failed trials by blame" in dom
    assert "blamed on</span><b>agent (" in dom
    assert "&lt;/script&gt;&lt;img src=x onerror=" in dom
    # nothing the payloads would have created or set (in text, `<` is always escaped)
    assert not PWNED.search(dom)
    assert not re.search(r"<img\b", dom) and not re.search(r"<svg\b", dom)
    # every chart canvas was taken over by Chart.js (it sizes and styles each one)
    drawn = int(re.search(r'data-charts="(\d+)"', dom).group(1))  # type: ignore[union-attr]
    canvases = re.findall(r"<canvas[^>]*>", dom)
    assert drawn >= 8 and len(canvases) == drawn
    for canvas in canvases:
        assert "data-chart=" in canvas and "box-sizing: border-box" in canvas
        width = re.search(r'\bwidth="(\d+)"', canvas)
        assert width and int(width.group(1)) > 100
    # the failure reason with markup, shown in the drawer as text
    null = trial_index(data, "null")
    dom = chromium.dump_dom(f"{page.as_uri()}#trial={null}")
    assert f'data-loaded="{null}"' in dom
    assert "&lt;/script&gt;&lt;svg onload=" in dom
    assert not PWNED.search(dom) and not re.search(r"<svg\b", dom)
    # the score's table heads each part of the catalogue's with its label
    score = dom[dom.index('id="score"') : dom.index('id="passk"')]
    labels = [part["label"] for part in data["catalogue"]["parts"]]
    heads = re.findall(r"<th[^>]*>([^<]*)</th>", score)
    assert heads[: 2 + len(labels)] == ["model", "Reliability Score", *labels]


@pytest.mark.slow
def test_in_chromium_the_page_renders_to_a_real_picture(
    page: Path, chromium: Any, png: Callable[[Path], Any], tmp_path: Path
) -> None:
    shot = tmp_path / "report.png"
    chromium.screenshot(page.as_uri(), shot, width=1280, height=1600, scale=0.5)
    image = png(shot)
    assert (image.width, image.height) == (640, 800)
    samples = [
        image.pixel(x, y) for y in range(0, image.height, 3) for x in range(0, image.width, 3)
    ]
    luminance = [0.299 * p[0] + 0.587 * p[1] + 0.114 * p[2] for p in samples]
    assert statistics.pstdev(luminance) > 20  # not a blank page
    assert len(set(samples)) > 200  # text, charts, colours
    header = image.pixel(5, 5)
    assert max(header[:3]) < 60  # the dark header bar
    green = sum(1 for p in samples if p[1] > 130 and p[0] < 90 and p[2] < 120)
    red = sum(1 for p in samples if p[0] > 180 and p[1] < 100 and p[2] < 100)
    assert green > 20 and red > 20  # pass and fail colours of the outcome bars
    keep = os.environ.get("TOOLPROOF_SCREENSHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(keep) / "report.png")
