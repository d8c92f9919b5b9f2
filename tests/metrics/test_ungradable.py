"""Nothing that cannot fail is counted: a task marked `ungradable:` is left out of a run's
numbers (counts, pass^k, the score, the tables, the gate) and listed apart, unless
--include-ungradable counts it; a run stored before the mark was recorded counts every task."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from stored import MINI, invoke, stored_run

from toolproof.metrics.breakdown import TaskMeta
from toolproof.metrics.summary import run_summary
from toolproof.store.journal import Store
from toolproof.summaries import stored_summary

WHY = "its source's grader passes it whatever the agent does"

HOLLOW = f"""  - id: hollow
    user: {{opening: "Anything new?"}}
    expect: {{must_not_say: [refund]}}
    ungradable: "{WHY}"
defaults:"""


@pytest.fixture(scope="module")
def null_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The null agent run over the mini suite and a task it passes, marked ungradable."""
    root = tmp_path_factory.mktemp("ungradable")
    suite = root / "suite"
    suite.mkdir()
    for source in MINI.iterdir():
        (suite / source.name).write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
    text = (suite / "suite.yaml").read_text(encoding="utf-8")
    (suite / "suite.yaml").write_text(text.replace("defaults:", HOLLOW), encoding="utf-8")
    db, out = root / "runs.db", root / "run.json"
    command = ["run", suite, "--agent", "null", "--trials", "2", "--k", "1,2", "--store", db]
    before = invoke(*command)
    assert before.code == 0, before.stdout
    ran = invoke(*command, "--json", out)
    summary = json.loads(out.read_text())
    before_id = Store(str(db)).runs(10)[-1]["id"]
    return {"db": db, "ran": ran, "summary": summary, "before": before_id}


def test_a_null_agents_pass_of_an_ungradable_task_is_left_out_and_listed(
    null_run: dict[str, Any],
) -> None:
    summary = null_run["summary"]
    assert summary["ungradable"] == {
        "tasks": {"hollow": WHY},
        "counts": {"passed": 2, "failed": 0, "infra_error": 0, "total": 2},
        "included": False,
    }
    assert summary["counts"] == {"passed": 0, "failed": 4, "infra_error": 0, "total": 4}
    assert [t["id"] for t in summary["tasks"]] == ["cancel", "status"]
    assert summary["metrics"]["pass^2"] == 0.0
    assert summary["models"][0]["reliability"]["reliability_score"] == 0.0
    assert (
        "left out 1 ungradable tasks (nothing they check can fail; --include-ungradable "
        "counts them): hollow" in " ".join(null_run["ran"].stdout.split())
    )


def test_include_ungradable_counts_the_task_again(null_run: dict[str, Any], tmp_path: Path) -> None:
    out = tmp_path / "shown.json"
    run_id = null_run["summary"]["run_id"]
    shown = invoke("show", run_id, "--store", null_run["db"], "--include-ungradable", "--json", out)
    assert shown.code == 0, shown.stdout
    summary = json.loads(out.read_text())
    assert summary["counts"] == {"passed": 2, "failed": 4, "infra_error": 0, "total": 6}
    assert [t["id"] for t in summary["tasks"]] == ["cancel", "hollow", "status"]
    assert summary["ungradable"]["included"] is True
    assert "counted 1 ungradable tasks" in shown.stdout


def test_the_gate_does_not_see_an_ungradable_tasks_passes(null_run: dict[str, Any]) -> None:
    gate = ["gate", null_run["summary"]["run_id"], "--store", null_run["db"], "--min"]
    assert invoke(*gate, "pass@1=0.3").code == 1
    assert invoke(*gate, "pass@1=0.3", "--include-ungradable").code == 0


def test_compare_leaves_out_the_ungradable_task(null_run: dict[str, Any], tmp_path: Path) -> None:
    out = tmp_path / "compared.json"
    runs = [null_run["before"], null_run["summary"]["run_id"], "--store", null_run["db"]]

    def compared(*flags: str) -> list[str]:
        assert invoke("compare", *runs, "--json", out, *flags).code == 0
        variants = json.loads(out.read_text())["pairs"][0]["variants"]
        return sorted(t["task"] for t in variants[0]["tasks"])

    assert compared() == ["cancel", "status"]
    assert compared("--include-ungradable") == ["cancel", "hollow", "status"]


def test_a_run_stored_before_the_mark_counts_every_task(tmp_path: Path) -> None:
    store = Store(str(tmp_path / "old.db"))
    run_id = stored_run(store, {"cancel": "PF", "status": "PP"})
    assert [row["ungradable"] for row in store.run_tasks(run_id)] == [None, None]
    summary = stored_summary(store, run_id)
    assert summary.ungradable is None and "ungradable" not in summary.as_json()
    assert summary.counts.passed == 3


def test_the_summary_filters_only_the_marked_tasks_rows(tmp_path: Path) -> None:
    store = Store(str(tmp_path / "runs.db"))
    run_id = stored_run(store, {"cancel": "FF", "status": "PP"})
    metas = [TaskMeta("cancel"), TaskMeta("status", ungradable=WHY)]
    run, rows = store.run(run_id), store.outcomes(run_id)
    left_out = run_summary(run, rows, metas)
    assert left_out.counts.total == 2 and left_out.counts.passed == 0
    assert left_out.ungradable is not None and left_out.ungradable.counts.passed == 2
    counted = run_summary(run, rows, metas, include_ungradable=True)
    assert counted.counts.passed == 2
    assert counted.ungradable is not None and counted.ungradable.included


def test_a_run_of_ungradable_tasks_alone_reports_and_gates_nothing(
    null_run: dict[str, Any], tmp_path: Path
) -> None:
    """Every trial left out: the report is written with no model's numbers, and the gate
    says why it has nothing to hold."""
    suite = Path(null_run["db"]).parent / "suite"
    db = tmp_path / "alone.db"
    ran = invoke("run", suite, "--agent", "null", "--tasks", "hollow", "--trials", "2",
                 "--k", "1", "--store", db)  # fmt: skip
    assert ran.code == 0, ran.stdout
    report = invoke("report", "latest", "--store", db, "-o", tmp_path / "r.html")
    assert report.code == 0, report.stdout
    assert (tmp_path / "r.html").stat().st_size > 0
    gate = invoke("gate", "latest", "--store", db, "--min", "pass@1=0.5")
    assert gate.code == 1
    assert "every trial (2) is of an ungradable task, left out: nothing to gate" in " ".join(
        gate.stdout.split()
    )


def test_junit_skips_an_ungradable_task_with_why(null_run: dict[str, Any], tmp_path: Path) -> None:
    out = tmp_path / "gate.xml"
    gate = ["gate", null_run["summary"]["run_id"], "--store", null_run["db"], "--junit", out]
    invoke(*gate, "--min", "pass@1=0")
    case = ET.parse(out).getroot().find(".//testcase[@name='hollow']")
    assert case is not None
    skipped = case.find("skipped")
    assert skipped is not None and skipped.get("message") == f"ungradable, left out: {WHY}"
    invoke(*gate, "--min", "pass@1=0", "--include-ungradable")
    case = ET.parse(out).getroot().find(".//testcase[@name='hollow']")
    assert case is not None and case.find("skipped") is None


def test_monitors_baseline_leaves_out_the_trials_of_ungradable_tasks(
    null_run: dict[str, Any],
) -> None:
    from toolproof.ci.monitor import baseline_measures, monitor, ungradable_tasks
    from toolproof.report.monitor import monitor_markdown

    store = Store(str(null_run["db"]))
    run_id = store.runs(10)[0]["id"]
    assert ungradable_tasks(store, run_id) == {"hollow": WHY}
    left = baseline_measures(store, run_id, None)
    every = baseline_measures(store, run_id, None, include_ungradable=True)
    assert (len(left), len(every)) == (4, 6)
    report = monitor(
        every, left, baseline_run=run_id, max_regression=0.05, alpha=0.05, left_out=["hollow"]
    )
    assert report.as_json()["left_out_ungradable"] == ["hollow"]
    assert "Left out of the baseline: 1 ungradable tasks" in monitor_markdown(report)
