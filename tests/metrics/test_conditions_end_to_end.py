"""The condition metrics of real runs, end to end: a small suite run under a fault profile,
schema drift and load, its summary's per-task and per-tier figures and intervals, and how the
terminal, the JSON file, the gate's Markdown and the HTML report show them."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from support import MINI_FILES, MINI_SUITE, write_files

from toolproof.ci.gate import evaluate_gate
from toolproof.metrics.summary import RunSummary
from toolproof.report.html import render_report
from toolproof.report.json import write_json
from toolproof.report.markdown import gate_markdown
from toolproof.report.terminal import summary_tables
from toolproof.runner.run import RunRequest, run_suite
from toolproof.spec.gate import GateSpec
from toolproof.spec.user import BUILTIN_PERSONAS
from toolproof.store import Store
from toolproof.suite import load_suite

# a third task, so that intervals have tasks to resample even where one task never passes
LOOKUP = """  - id: lookup
    tags: [lookup]
    user: {opening: "What is the status of order A?"}
    expect:
      actions: [{tool: get_order, args: {order_id: A}}]
      must_say: [pending]
"""

CONDITIONS = """
faults:
  profiles:
    flaky:
      - {kind: server_error, rate: 0.5}
drift:
  v2:
    - {op: rename_tool, tool: get_order, to: fetch_order}
load:
  levels: [1, 6]
  capacity:
    "*": {rate_per_s: 2, burst: 3, latency_ms: 10, servers: 2, retry_after_s: 60}
"""

PERSONAS = [f"persona:{p}" for p in BUILTIN_PERSONAS if p != "cooperative"]
"""The variants `--profile full` adds for a suite that declares no personas."""


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Store, str, dict[str, Any]]:
    """The plain oracle (it never retries) under --profile full, 6 trials of each task."""
    root = tmp_path_factory.mktemp("conditions")
    text = MINI_SUITE.replace("defaults:", LOOKUP + "defaults:") + CONDITIONS
    suite = load_suite(write_files(root / "suite", {**MINI_FILES, "suite.yaml": text}))
    store = Store(str(root / "runs.db"))
    request = RunRequest(agent="oracle", trials=6, k=[1, 3], profile="full", time_scale=0.001)
    report = asyncio.run(run_suite(suite, request, store, fresh=True))
    return store, report.run_id, report.summary.as_json()


def test_every_task_and_tier_has_drift_and_load_next_to_recovery(
    run: tuple[Store, str, dict[str, Any]],
) -> None:
    _, _, summary = run
    model = summary["models"][0]
    # the full profile also runs the messy built-in personas (the suite declares none)
    assert set(model["variants"]) == {"", "faults:flaky", "drift:v2", "load:6", *PERSONAS}
    conditions = model["conditions"]
    tasks = {"cancel", "lookup", "status"}
    for name in ("recovery", "drift", "load"):
        assert set(conditions[f"{name}_by_task"]) == tasks
        # get_order is tier 1 (every task), cancel_order tier 3 (the cancel task)
        assert set(conditions[f"{name}_by_tier"]) == {"1", "3"}
    rates = {key: variant["pass@1"] for key, variant in model["variants"].items()}
    drift, load = conditions["drift_by_task"], conditions["load_by_task"]
    # the per-task values average back to the model's (every task weighs the same)
    assert sum(d["drift_robustness"] for d in drift.values()) / 3 == pytest.approx(
        rates["drift:v2"]
    )
    assert sum(v["completion_under_load"] for v in load.values()) / 3 == pytest.approx(
        rates["load:6"]
    )
    # tier 3 is the cancel task alone; tier 1 weighs the three tasks alike (get_order each)
    assert (
        conditions["drift_by_tier"]["3"]["drift_robustness"] == drift["cancel"]["drift_robustness"]
    )
    assert conditions["load_by_tier"]["1"]["completion_under_load"] == pytest.approx(
        rates["load:6"]
    )
    # level 1 was run: it is the baseline
    assert conditions["load"]["baseline"] == 1
    for task, values in load.items():
        base = next(t for t in summary["tasks"] if t["id"] == task)  # clean trials
        assert values["baseline_pass_rate"] is not None and base["trials"] == 6


def test_the_summary_has_an_interval_for_each_measured_condition_metric(
    run: tuple[Store, str, dict[str, Any]], tmp_path: Path
) -> None:
    _, _, summary = run
    out = tmp_path / "summary.json"
    write_json(summary, out)
    model = json.loads(out.read_text(encoding="utf-8"))["models"][0]
    names = ("recovery_rate", "loop_rate", "corrective_action", "drift_robustness")
    for name in (*names, "completion_under_load", "reliability_score"):
        value, interval = model["metrics"][name], model["ci"][name]
        if value is None:
            assert interval is None, name
        else:
            assert interval[0] <= value <= interval[1], name
    # the oracle never retries: injected faults (and calls to tools that drift renamed)
    # are failed calls it mostly does not recover from, in every task
    recovery = model["conditions"]["recovery"]
    assert recovery["failed_calls"] > 0 and recovery["ci"]["recovery_rate"] is not None
    assert {"genuine", "server_error"} <= set(recovery["by_fault"])
    for kind in recovery["by_fault"].values():
        if kind["ci"]["rate"] is not None:
            assert kind["ci"]["rate"][0] <= kind["rate"] <= kind["ci"]["rate"][1]
    for block, ratio in (("drift", "ratio_to_clean"), ("load", "ratio_to_baseline")):
        entry = model["conditions"][block]
        if entry[ratio] is not None and entry["ci"][ratio] is not None:
            assert entry["ci"][ratio][0] <= entry[ratio] <= entry["ci"][ratio][1]
    assert model["reliability"]["missing"] == []
    assert model["reliability"]["ci"]["reliability_score"] == model["ci"]["reliability_score"]


def _interval(interval: list[float] | None, digits: int) -> str:
    assert interval is not None
    return f"[{interval[0]:.{digits}f}, {interval[1]:.{digits}f}]"


def test_the_terminal_shows_intervals_and_per_tier_and_per_task_columns(
    run: tuple[Store, str, dict[str, Any]],
) -> None:
    _, _, summary = run
    console = Console(width=240, record=True, color_system=None)
    for table in summary_tables(RunSummary.model_validate(summary)):
        console.print(table)
    text = console.export_text()
    model = summary["models"][0]
    recovery = model["conditions"]["recovery"]
    row = next(line for line in text.splitlines() if line.startswith("│ recovery_rate "))
    assert f"{recovery['recovery_rate']:.3f} {_interval(recovery['ci']['recovery_rate'], 3)}" in row
    score = model["reliability"]
    assert (
        f"= {score['reliability_score']:.3f} {_interval(score['ci']['reliability_score'], 3)}"
        in text
    )
    header = next(line for line in text.splitlines() if "┃ tier" in line)
    assert re.search(r"recovery .* drift .* ×clean .* load .* ×base", header)
    task_header = next(line for line in text.splitlines() if "first failure" in line)
    assert "×base" in task_header


def test_the_gate_markdown_and_the_html_report_carry_the_intervals(
    run: tuple[Store, str, dict[str, Any]],
) -> None:
    store, run_id, summary = run
    model = summary["models"][0]
    text = gate_markdown(evaluate_gate(store, run_id, GateSpec(min={"pass@1": 0.1})))
    score = model["metrics"]["reliability_score"]
    ci = model["ci"]["reliability_score"]
    assert f"| `reliability_score` | {score:.4f} {_interval(ci, 4)} |" in text
    assert "| `recovery_rate` |" in text and "| `completion_under_load` |" in text
    page, _ = render_report(store, [run_id])
    match = re.search(r'<script type="application/json" id="tp-data">(.*?)</script>', page, re.S)
    assert match
    [entry] = json.loads(match.group(1))["entries"]
    assert entry["ci"]["reliability_score"] == ci
    assert entry["conditions"]["drift_by_tier"] == model["conditions"]["drift_by_tier"]
    assert entry["conditions"]["load"]["ci"] == model["conditions"]["load"]["ci"]
