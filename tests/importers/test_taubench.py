"""The tau-bench import reproduces tau-bench's published pass^k for its GPT-4o airline run;
a file it cannot read is one located problem."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from rich.console import Console
from stored import toolproof_ci

from toolproof.errors import SuiteError
from toolproof.importers.taubench import import_results
from toolproof.report.terminal import summary_tables
from toolproof.spec.metrics import CATALOGUE
from toolproof.store import Store
from toolproof.summaries import stored_summary
from toolproof.transcript import MessageEvent, ModelCallEvent, ToolCallEvent

FIXTURE = Path(__file__).parents[1] / "fixtures" / "tau-bench" / "gpt-4o-airline.json.gz"
PUBLISHED = {"pass^1": 0.420, "pass^2": 0.273, "pass^3": 0.220, "pass^4": 0.200}


def test_import_reproduces_published_pass_hat_k(tmp_path: Path) -> None:
    store = Store(str(tmp_path / "s.db"))
    run_id = import_results(FIXTURE, store)
    summary = stored_summary(store, run_id).as_json()
    assert summary["counts"] == {"passed": 84, "failed": 116, "infra_error": 0, "total": 200}
    assert len(summary["tasks"]) == 50
    for name, value in PUBLISHED.items():
        assert round(summary["metrics"][name], 3) == value, name


def test_import_keeps_transcripts_with_tool_calls(tmp_path: Path) -> None:
    store = Store(str(tmp_path / "s.db"))
    run_id = import_results(FIXTURE, store)
    results = [r for _, r in store.results(run_id)]
    first = next(r for r in results if r.task_id == "0" and r.trial == 0)
    kinds = {type(e) for e in first.transcript.events}
    assert {MessageEvent, ModelCallEvent, ToolCallEvent} <= kinds
    call = first.transcript.tool_calls()[0]
    assert call.name == "get_user_details"
    assert call.arguments == {"user_id": "mia_li_3668"}
    assert first.outcome == "failed" and "reward 0.0" in first.reason


def test_importing_the_same_file_twice_reuses_the_run(tmp_path: Path) -> None:
    store = Store(str(tmp_path / "s.db"))
    assert import_results(FIXTURE, store) == import_results(FIXTURE, store)
    assert len(store.runs()) == 1


def test_malformed_results_are_located(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(
        json.dumps([{"task_id": 0, "trial": 0}, {"task_id": 1, "trial": 0, "reward": "x"}])
    )
    with pytest.raises(SuiteError) as caught:
        import_results(bad, Store(str(tmp_path / "s.db")))
    messages = [str(p) for p in caught.value.problems]
    assert any("result [0]: missing reward" in m for m in messages)
    assert any("result [1]: reward is not a number" in m for m in messages)


def test_invalid_json_reports_its_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json.gz"
    bad.write_bytes(gzip.compress(b'[\n{"task_id": 0,\n oops}\n]'))
    with pytest.raises(SuiteError) as caught:
        import_results(bad, Store(str(tmp_path / "s.db")))
    assert caught.value.problems[0].line == 3


def test_an_import_claims_nothing_it_did_not_measure(tmp_path: Path) -> None:
    """tau-bench results carry no token counts, latencies or error marks: they are shown as
    not measured, and no recovery or loop rate is made up from guessing at tool outputs."""
    store = Store(str(tmp_path / "s.db"))
    summary = stored_summary(store, import_results(FIXTURE, store)).as_json()
    metrics = summary["metrics"]
    for name in ("tokens_input", "tokens_output", "latency_p95_s", "trial_latency_p95_s"):
        assert metrics[name] is None, name
    for name in ("recovery_rate", "loop_rate", "corrective_action"):
        assert metrics[name] is None, name
    assert summary["tasks"][0]["metrics"]["latency_p95_s"] is None
    reliability = summary["models"][0]["reliability"]
    assert reliability["missing"] == ["recovery_rate", "completion_under_load", "drift_robustness"]
    assert "built from pass^k alone" in reliability["notes"][0]


def test_every_metric_the_catalogue_marks_unmeasured_on_imports_is_null(tmp_path: Path) -> None:
    store = Store(str(tmp_path / "s.db"))
    summary = stored_summary(store, import_results(FIXTURE, store))
    unmeasured = [d.name for d in CATALOGUE if d.recorded and not d.per_k and not d.imported]
    assert {"tokens_input", "latency_p50_s", "recovery_rate"} <= set(unmeasured)
    for name in unmeasured:
        assert summary.models[0].metrics.get(name) is None, name
    assert summary.models[0].metrics.get("pass^2") is not None


def test_the_terminal_shows_an_imports_tokens_as_not_measured_never_zero(tmp_path: Path) -> None:
    store = Store(str(tmp_path / "s.db"))
    summary = stored_summary(store, import_results(FIXTURE, store, [1, 2]))
    console = Console(width=250, record=True)
    console.print(summary_tables(summary)[0])
    [row] = [line for line in console.export_text().splitlines() if "84/200" in line]
    cells = [cell.strip() for cell in row.split("│")]
    assert "–/–" in cells and "0/0" not in cells


@pytest.mark.slow
def test_a_damaged_gz_file_is_one_located_problem(tmp_path: Path) -> None:
    whole = FIXTURE.read_bytes()
    bad = tmp_path / "cut.json.gz"
    bad.write_bytes(whole[: len(whole) // 2])
    result = toolproof_ci("import", "tau-bench", bad, "--store", tmp_path / "s.db")
    assert result.returncode == 2
    [problem, count] = result.stderr.strip().splitlines()
    assert problem.startswith(f"{bad}: not a readable gzip file: ") and count == "1 problem(s)"
    assert "Aborted" not in result.stdout + result.stderr


@pytest.mark.slow
def test_an_empty_results_file_has_nothing_to_import(tmp_path: Path) -> None:
    empty = tmp_path / "empty.json"
    empty.write_text("[]\n")
    db = tmp_path / "s.db"
    result = toolproof_ci("import", "tau-bench", empty, "--store", db, "--fail-under", "pass^1=1")
    assert result.returncode == 2
    assert f"{empty}:1: the list of results is empty: nothing to import" in result.stderr
    assert "fail-under" not in result.stdout + result.stderr
    assert Store(str(db)).runs() == []
