"""The CI gate: its checks, the suite's gate: section, JUnit and Markdown, and the exit
codes of `toolproof gate` on real runs of a small suite (0 pass, 1 fail, 2 bad input)."""

from __future__ import annotations

import asyncio
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from pydantic import ValidationError
from stored import invoke, mini_suite, stored_run, toolproof_ci

from toolproof.ci.findings import Drop, Integrity, RegressedTasks, RunState, Threshold
from toolproof.ci.gate import (
    evaluate_gate,
    fail_under,
    flag_spec,
    limit_checks,
    merge,
    parse_limit,
    resolve_spec,
    suite_gate,
    with_threshold_ks,
)
from toolproof.errors import MetricError, SuiteError, UsageError
from toolproof.records.run import RunConfig, RunRecord
from toolproof.report.gate import check_json, detail, gate_json
from toolproof.report.junit import junit_text
from toolproof.report.markdown import gate_markdown
from toolproof.runner.regrade import regrade_run
from toolproof.runner.run import RunRequest, run_suite
from toolproof.spec.gate import GateSpec
from toolproof.spec.suite import SuiteFile
from toolproof.store import payload
from toolproof.store.journal import Store
from toolproof.store.manifest import record_manifest
from toolproof.suite import load_suite
from toolproof.summaries import stored_summary

HALF = """
default:
  - tool_calls: [{name: get_order, arguments: {order_id: B}}]
  - text: "Order B has shipped."
"""

GATE_SECTION = """
gate:
  min:
    pass@1: 0.9
    reliability_score: 0.85
  max_cost_per_task: 1.0
  max_regression: 0.03
"""


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(str(tmp_path / "runs.db"))


# ---------------------------------------------------------------- the gate: section


def test_gate_spec_validates_metric_names_and_ranges() -> None:
    spec = GateSpec(
        min={"pass^5": 0.8, "reliability_score": 0.85},
        max={"latency_p95_s": 4},
        max_cost_per_task=0.02,
        max_infra_error_share=0.01,
    )
    assert spec.floors() == {"pass^5": 0.8, "reliability_score": 0.85}
    assert spec.ceilings() == {
        "latency_p95_s": 4,
        "cost_per_task_usd": 0.02,
        "infra_error_share": 0.01,
    }
    for bad in (
        {"min": {"pass^0": 0.5}},
        {"min": {"score": 0.5}},
        {"max_regression": -0.1},
        {"alpha": 1.5},
        {"maximum": {"pass@1": 1}},
    ):
        with pytest.raises(ValidationError):
            GateSpec.model_validate(bad)
    assert GateSpec().is_empty()


def test_suite_gate_reads_the_section_and_locates_problems(tmp_path: Path) -> None:
    suite = mini_suite(tmp_path / "s")
    assert suite_gate(suite) is None
    text = (suite / "suite.yaml").read_text()
    (suite / "suite.yaml").write_text(text + GATE_SECTION)
    spec = suite_gate(suite)
    assert spec is not None
    assert spec.floors() == {"pass@1": 0.9, "reliability_score": 0.85}
    assert spec.ceilings() == {"cost_per_task_usd": 1.0}
    assert spec.max_regression == 0.03

    (suite / "suite.yaml").write_text(text + "gate:\n  min:\n    pass^k: 0.9\n")
    with pytest.raises(SuiteError) as caught:
        suite_gate(suite)
    [problem] = caught.value.problems
    assert problem.line == len(text.splitlines()) + 3
    assert "unknown metric 'pass^k'" in problem.message


def test_flags_parse_and_win_over_the_suite() -> None:
    assert parse_limit("--min", "pass^5=0.8") == ("pass^5", 0.8)
    assert parse_limit("--max", " cost_per_task_usd = 1e-3 ") == ("cost_per_task_usd", 0.001)
    for bad in ("pass^5", "pass^5=x", "=0.3", "nonsense=1"):
        with pytest.raises(UsageError):
            parse_limit("--min", bad)
    with pytest.raises(UsageError, match="between 0 and 1"):
        flag_spec(max_regression=2)
    suite = GateSpec(min={"pass@1": 0.9, "pass^3": 0.5}, max_regression=0.05, alpha=0.01)
    merged = merge(suite, flag_spec(["pass@1=0.95"], ["loop_rate=0.1"]))
    assert merged.floors() == {"pass@1": 0.95, "pass^3": 0.5}
    assert merged.ceilings() == {"loop_rate": 0.1}
    assert (merged.max_regression, merged.alpha) == (0.05, 0.01)


def test_resolve_spec_without_the_suite_folder(tmp_path: Path) -> None:
    run = RunRecord(
        id="R",
        created_at="",
        status="finished",
        suite_name="mini",
        suite_version="1",
        suite_hash="",
        fingerprint="",
        agent="a",
        config=RunConfig(suite_path=str(tmp_path / "gone")),
        toolproof_version="",
        host="",
    )
    with pytest.raises(UsageError, match="is not here"):
        resolve_spec(run, None, GateSpec())
    spec, sources, warnings = resolve_spec(run, None, flag_spec(["pass@1=0.5"]))
    assert spec.floors() == {"pass@1": 0.5} and sources == ["flags"]
    assert "not applied" in warnings[0]
    with pytest.raises(UsageError, match="--suite"):
        resolve_spec(run, tmp_path / "nowhere", GateSpec(), "base")


# ---------------------------------------------------------------- checks


def titles(result_checks: list[object]) -> list[str]:
    return [getattr(c, "title") for c in result_checks]  # noqa: B009


def test_thresholds_pass_and_fail(store: Store) -> None:
    run = stored_run(store, {"a": "PPP", "b": "PPF", "c": "PPP"}, k=[1, 3], cost=0.1)
    spec = GateSpec(
        min={"pass@1": 0.85, "pass^3": 0.7},
        max={"cost_per_task_usd": 0.25, "infra_error_share": 0.0},
    )
    result = evaluate_gate(store, run, spec)
    by = {c.name: c for c in result.checks}
    assert by["run finished"].passed
    assert by["pass@1 ≥ 0.85"].passed and by["pass@1 ≥ 0.85"].value == pytest.approx(8 / 9)
    assert not by["pass^3 ≥ 0.7"].passed
    assert detail(by["pass^3 ≥ 0.7"]) == "pass^3 = 0.6667 is below 0.7"
    cost = by["cost_per_task_usd ≤ 0.25"]
    assert not cost.passed and cost.value == pytest.approx(0.3)  # 9 trials × 0.1 over 3 tasks
    assert by["infra_error_share ≤ 0"].passed
    assert by["manifest verified"].skipped
    assert not result.passed
    assert [c.name for c in result.failed] == ["pass^3 ≥ 0.7", "cost_per_task_usd ≤ 0.25"]


def test_unmeasured_metric_fails_and_unknown_or_uncomputable_is_an_error(store: Store) -> None:
    run = stored_run(store, {"a": "PP"}, cost=None)
    result = evaluate_gate(store, run, GateSpec(max={"cost_usd": 1.0, "recovery_rate": 1.0}))
    failed = {c.name: detail(c) for c in result.failed}
    assert failed == {
        "cost_usd ≤ 1": "cost_usd was not measured in this run",
        "recovery_rate ≤ 1": "recovery_rate was not measured in this run",
    }
    with pytest.raises(MetricError, match="k=5"):
        evaluate_gate(store, run, GateSpec(min={"pass^5": 0.5}))
    with pytest.raises(UsageError, match="nothing to gate on"):
        evaluate_gate(store, run, GateSpec())


def test_unfinished_run_fails_the_gate(store: Store) -> None:
    run = stored_run(store, {"a": "PPP"}, finished=False)
    result = evaluate_gate(store, run, GateSpec(min={"pass@1": 0.5}))
    [failed] = result.failed
    assert failed.name == "run finished" and "resume it" in detail(failed)


def test_every_model_is_gated(store: Store) -> None:
    run = stored_run(store, {"a": "PP"}, models=["p/one", "p/two"], agent="p/one, p/two")
    result = evaluate_gate(store, run, GateSpec(min={"pass@1": 0.5}))
    assert "p/one: pass@1 ≥ 0.5" in titles(result.checks)  # type: ignore[arg-type]
    assert "p/two: pass@1 ≥ 0.5" in titles(result.checks)  # type: ignore[arg-type]


def test_significant_regression_fails_and_insignificant_drop_passes(store: Store) -> None:
    base = {f"t{i}": "PPPPPP" for i in range(10)}
    baseline = stored_run(store, base, k=[1, 3])
    regressed = {f"t{i}": "FFFFFF" for i in range(5)}
    bad = stored_run(store, {**base, **regressed, "t5": "FFFFFP"}, k=[1, 3])
    slight = stored_run(store, {**base, "t0": "PPPFFF"}, k=[1, 3])
    spec = GateSpec(max_regression=0.03)

    result = evaluate_gate(store, bad, spec, baseline)
    by = {c.name: c for c in result.checks}
    pass1 = by["pass@1: no significant drop > 0.03 vs baseline"]
    assert not pass1.passed
    # six of ten tasks dropped, none rose: 2 of the 2^6 sign assignments are as extreme
    assert "p = 0.0312 over 10 tasks" in detail(pass1)
    assert "6 task(s) regressed" in detail(pass1)
    assert not by["pass^3: no significant drop > 0.03 vs baseline"].passed
    assert by["baseline manifest verified (" + baseline + ")"].skipped

    result = evaluate_gate(store, slight, spec, baseline)
    assert result.passed, [detail(c) for c in result.failed]
    assert "not significant" in detail(result.checks[1])

    # Without a baseline the regression check is skipped, not failed.
    alone = evaluate_gate(store, bad, spec)
    assert alone.passed and alone.checks[1].skipped


THIRTY = {f"t{i:02d}": "PPPPPP" for i in range(30)}
TASKS = "no task regressed significantly vs baseline"


def broken(count: int, trials: str = "FFFFFF") -> dict[str, str]:
    """The first `count` of the thirty tasks failing every trial."""
    return {f"t{i:02d}": trials for i in range(count)}


def test_one_task_of_thirty_collapsing_fails_the_per_task_check_not_the_mean(
    store: Store,
) -> None:
    """30 tasks × 6 trials, one going 6/6 → 0/6: over tasks the mean barely moves (p = 1),
    but the task alone has Fisher p = 1/924, and 30/924 = 0.0325 after Holm."""
    baseline = stored_run(store, THIRTY, k=[1])
    one = stored_run(store, {**THIRTY, **broken(1)}, k=[1])
    result = evaluate_gate(store, one, GateSpec(), baseline)
    pass1 = next(c for c in result.checks if c.name.startswith("pass@1: no significant"))
    assert pass1.passed
    said = detail(pass1)
    assert "a drop, but not significant" in said and "p = 1.0000 over 30 tasks" in said
    [failed] = result.failed
    assert failed.name == TASKS and failed.kind == "regressed_tasks"
    assert (failed.value, failed.limit) == (1, 0)
    assert detail(failed).startswith(
        "1 of 30 tasks regressed significantly, 0 allowed: t00 6/6 → 0/6 (adjusted p = 0.0325)"
    )
    assert "Fisher's exact test per task, Holm over 30 tasks, alpha 0.05" in detail(failed)
    many = stored_run(store, {**THIRTY, **broken(8)}, k=[1])
    failed_many = evaluate_gate(store, many, GateSpec(), baseline).failed
    assert [c.name for c in failed_many] == [
        "pass@1: no significant drop > 0.03 vs baseline",
        TASKS,
    ]


def test_five_broken_tasks_of_thirty_fail_the_gate_and_are_named(store: Store) -> None:
    """The mean over tasks misses five tasks of thirty breaking (p = 2/32); the per-task
    test names each of them."""
    baseline = stored_run(store, THIRTY, k=[1, 3])
    five = stored_run(store, {**THIRTY, **broken(5)}, k=[1, 3])
    result = evaluate_gate(store, five, GateSpec(), baseline)
    assert [c.name for c in result.failed] == [TASKS]
    pass1 = next(c for c in result.checks if c.name.startswith("pass@1: no significant"))
    assert pass1.passed and "p = 0.0625 over 30 tasks" in detail(pass1)
    [check] = result.failed
    assert check.value == 5
    for task in ("t00", "t01", "t02", "t03", "t04"):
        assert f"{task} 6/6 → 0/6 (adjusted p = 0.0325)" in detail(check)
    assert "t05" not in detail(check)
    flagged = check_json(check)["tasks"]
    assert [t["task"] for t in flagged] == ["t00", "t01", "t02", "t03", "t04"]
    assert flagged[0]["p_value"] == pytest.approx(1 / 924)
    assert flagged[0]["p_adjusted"] == pytest.approx(30 / 924)
    assert (flagged[0]["passed_a"], flagged[0]["passed_b"], flagged[0]["trials"]) == (6, 0, 6)


@pytest.mark.slow
def test_the_command_names_the_broken_tasks_in_every_report(store: Store, tmp_path: Path) -> None:
    baseline = stored_run(store, THIRTY, k=[1])
    five = stored_run(store, {**THIRTY, **broken(5)}, k=[1])
    out = tmp_path / "out"
    done = toolproof_ci(
        "gate",
        five,
        "--baseline",
        baseline,
        "--store",
        store.url,
        "--json",
        out / "gate.json",
        "--junit",
        out / "junit.xml",
        "--markdown",
        out / "gate.md",
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"FAIL │ {TASKS}" in done.stdout and "5 of 30 tasks regressed" in done.stdout
    assert "t04 6/6 → 0/6" in done.stdout
    data = json.loads((out / "gate.json").read_text())
    [check] = [c for c in data["conditions"] if c["kind"] == "regressed_tasks"]
    assert not check["passed"] and check["value"] == 5 and check["limit"] == 0
    assert [t["task"] for t in check["tasks"]] == ["t00", "t01", "t02", "t03", "t04"]
    assert data["gate"]["max_regressed_tasks"] is None  # the default, 0, applied
    cases = {c.get("name"): c for c in ET.parse(out / "junit.xml").getroot().iter("testcase")}
    failure = cases[TASKS].find("failure")
    assert failure is not None and "t00 6/6 → 0/6 (adjusted p = 0.0325)" in (
        failure.get("message") or ""
    )
    markdown = (out / "gate.md").read_text()
    assert f"- ❌ **{TASKS}**: 5 of 30 tasks regressed significantly, 0 allowed: t00" in markdown
    assert "| t02 | 6/6 | 0/6 | -1.000 | 0.0011 | 0.0325 | significant |" in markdown


def test_unchanged_runs_and_noise_pass(store: Store) -> None:
    baseline = stored_run(store, THIRTY, k=[1])
    same = stored_run(store, THIRTY, k=[1])
    result = evaluate_gate(store, same, GateSpec(), baseline)
    assert result.passed and result.warnings == []
    tasks = next(c for c in result.checks if c.kind == "regressed_tasks")
    assert tasks.passed and tasks.value == 0
    assert detail(tasks).startswith("none of 30 tasks regressed significantly (Fisher's")
    noisy = stored_run(store, {**THIRTY, "t00": "PPPPPF"}, k=[1])
    result = evaluate_gate(store, noisy, GateSpec(), baseline)
    assert result.passed, [detail(c) for c in result.failed]
    assert result.comparison is not None
    [t00] = result.comparison.pairs[0].variants[0].regressed
    # 6/6 → 5/6: Fisher p = C(6,5) / C(12,11) = 1/2; Holm over 30 tasks caps it at 1
    assert (t00.p_value, t00.p_adjusted, t00.significant) == (0.5, 1.0, False)


def test_max_regressed_tasks_lets_that_many_broken_tasks_through(store: Store) -> None:
    baseline = stored_run(store, THIRTY, k=[1])
    one = stored_run(store, {**THIRTY, **broken(1)}, k=[1])
    two = stored_run(store, {**THIRTY, **broken(2)}, k=[1])
    spec = GateSpec(max_regressed_tasks=1)
    allowed = evaluate_gate(store, one, spec, baseline)
    assert allowed.passed, [detail(c) for c in allowed.failed]
    check = next(c for c in allowed.checks if c.kind == "regressed_tasks")
    assert check.name == "at most 1 task(s) regressed significantly vs baseline"
    assert detail(check).startswith("1 of 30 tasks regressed significantly, 1 allowed: t00")
    [failed] = evaluate_gate(store, two, spec, baseline).failed
    assert failed.name == "at most 1 task(s) regressed significantly vs baseline"
    assert detail(failed).startswith("2 of 30 tasks regressed significantly, 1 allowed: t00")
    assert "t01 6/6 → 0/6" in detail(failed)


@pytest.mark.slow
def test_too_few_trials_per_task_is_warned_about(store: Store, tmp_path: Path) -> None:
    """Two trials per task: even 2/2 → 0/2 has p = 1/6, so among thirty tasks no task can
    ever be flagged, and the gate says so and how many trials it would take."""
    short = {task: "PP" for task in THIRTY}
    baseline = stored_run(store, short, k=[1])
    one = stored_run(store, {**short, **broken(1, "FF")}, k=[1])
    result = evaluate_gate(store, one, GateSpec(), baseline)
    assert result.passed
    warning = (
        "scripted: 2 trials per task are too few to flag a regressed task among 30: even a task "
        "going from 2/2 to 0/2 has Holm-adjusted p = 1.0000, not below alpha 0.05; 6 trials "
        "per task are needed"
    )
    assert result.warnings == [warning]
    tasks = next(c for c in result.checks if c.kind == "regressed_tasks")
    assert "but none could with 2 trials per task (6 needed)" in detail(tasks)
    out = tmp_path / "gate.json"
    done = toolproof_ci("gate", one, "--baseline", baseline, "--store", store.url, "--json", out)
    assert done.returncode == 0, done.stdout
    assert "warning: scripted: 2 trials per task are too few" in done.stdout
    assert json.loads(out.read_text())["warnings"] == [warning]
    # six trials per task are enough for thirty tasks: no warning
    enough = stored_run(store, THIRTY, k=[1])
    assert evaluate_gate(store, enough, GateSpec(), stored_run(store, THIRTY)).warnings == []


def test_max_regressed_tasks_from_the_suite_and_the_flag_wins(store: Store, tmp_path: Path) -> None:
    suite_dir = mini_suite(tmp_path / "mini", "gate:\n  max_regressed_tasks: 1\n")
    assert suite_gate(suite_dir) == GateSpec(max_regressed_tasks=1)
    where = str(suite_dir.resolve())
    baseline = stored_run(store, THIRTY, suite_path=where)
    one = stored_run(store, {**THIRTY, **broken(1)}, suite_path=where)
    from_suite = invoke("gate", one, "--baseline", baseline, "--store", store.url)
    assert from_suite.code == 0, from_suite.stdout
    assert "at most 1 task(s) regressed significantly" in from_suite.stdout
    flag = invoke(
        "gate", one, "--baseline", baseline, "--store", store.url, "--max-regressed-tasks", "0"
    )
    assert flag.code == 1, flag.stdout
    assert "1 of 30 tasks regressed significantly, 0 allowed: t00" in flag.stdout
    merged = merge(GateSpec(max_regressed_tasks=3), flag_spec(max_regressed_tasks=0))
    assert merged.max_regressed_tasks == 0
    assert merge(GateSpec(max_regressed_tasks=3), flag_spec()).max_regressed_tasks == 3


def test_bad_max_regressed_tasks_exits_2(store: Store, tmp_path: Path) -> None:
    run = stored_run(store, {"a": "PP"})
    negative = invoke("gate", run, "--store", store.url, "--max-regressed-tasks", "-1")
    assert negative.code == 2
    assert "--max-regressed-tasks -1: must be 0 or more" in str(negative.error)
    suite_dir = mini_suite(tmp_path / "mini", "gate:\n  max_regressed_tasks: some\n")
    line = (suite_dir / "suite.yaml").read_text().splitlines().index("  max_regressed_tasks: some")
    located = invoke("gate", run, "--store", store.url, "--suite", suite_dir)
    assert located.code == 2
    assert f"suite.yaml:{line + 1}: gate.max_regressed_tasks" in str(located.error)


def test_max_regressed_tasks_without_a_baseline_is_skipped(store: Store) -> None:
    run = stored_run(store, {"a": "PP"})
    spec = GateSpec(max_regressed_tasks=0)
    assert not spec.is_empty()
    result = evaluate_gate(store, run, spec)
    [skipped] = [c for c in result.checks if c.kind == "regressed_tasks"]
    assert skipped.skipped and detail(skipped) == "no --baseline run given"
    assert result.passed


def test_k_above_the_trials_is_still_an_error_with_a_baseline(store: Store) -> None:
    baseline = stored_run(store, {"a": "PP"})
    run = stored_run(store, {"a": "PF"})
    with pytest.raises(MetricError, match="k=5"):
        evaluate_gate(store, run, GateSpec(min={"pass^5": 0.5}), baseline)
    done = invoke("gate", run, "--baseline", baseline, "--store", store.url, "--min", "pass^5=0.5")
    assert done.code == 2 and "k=5" in str(done.error)


def test_tampered_run_fails_the_gate(store: Store) -> None:
    run = stored_run(store, {"a": "PPF"})
    record_manifest(store, run)
    assert evaluate_gate(store, run, GateSpec(min={"pass@1": 0.5})).passed
    with store.engine.begin() as conn:
        conn.exec_driver_sql(
            "UPDATE trials SET outcome = 'passed', reason = '' WHERE run_id = ? AND trial = 2",
            (run,),
        )
    result = evaluate_gate(store, run, GateSpec(min={"pass@1": 0.5}))
    [failed] = result.failed
    assert failed.name == "manifest verified"
    assert "task a trial 2" in detail(failed)


def test_the_gate_decides_on_point_values_and_its_reports_get_the_whole_summary(
    store: Store,
) -> None:
    run = stored_run(store, {"a": "PPF", "b": "PFP", "c": "PPP"}, k=[1, 2])
    spec = GateSpec(min={"pass@1": 0.5, "pass^2": 0.5})
    result = evaluate_gate(store, run, spec)
    whole = stored_summary(store, run, [1, 2])
    assert result.points.ci["pass@1"] is None and whole.ci is not None and whole.ci["pass@1"]
    limits = [c for c in result.checks if c.kind in ("min", "max")]
    assert limits == limit_checks(whole, spec) and len(limits) == 2
    assert result.summary.as_json() == whole.as_json()
    assert gate_json(result)["summary"] == whole.as_json()


def test_fail_under_is_the_gates_min_on_a_summary_and_adds_its_k(store: Store) -> None:
    run = stored_run(store, {"a": "PPF", "b": "PFP", "c": "PPP"}, k=[1, 2])
    summary = stored_summary(store, run, with_threshold_ks([1], ["pass^2=0.5"]))
    assert with_threshold_ks([1], ["pass^2=0.5"]) == [1, 2]
    assert with_threshold_ks(None, ["pass^2=0.5"]) is None  # the run's own k values
    assert with_threshold_ks([3], None) == [3]
    assert fail_under(summary, []) == []
    [failed] = fail_under(summary, ["pass@1=0.5", "pass^2=0.6"])  # pass^2 = (1/3+1/3+1)/3
    assert (failed.name, failed.value, failed.limit) == ("pass^2 ≥ 0.6", pytest.approx(5 / 9), 0.6)
    empty = stored_summary(store, stored_run(store, {"a": ""}))
    with pytest.raises(UsageError, match="the run has no finished trial"):
        fail_under(empty, ["pass@1=0.5"])


def test_a_stored_result_changed_underneath_its_columns_fails_the_gate(store: Store) -> None:
    run = stored_run(store, {"a": "PPF", "b": "PP"})
    record_manifest(store, run)
    with store.engine.begin() as conn:
        conn.exec_driver_sql(
            "UPDATE trials SET result = ? WHERE run_id = ? AND task_id = 'b' AND trial = 1",
            (payload.encode({"outcome": "passed", "forged": True}), run),
        )
    result = evaluate_gate(store, run, GateSpec(min={"pass@1": 0.5}))
    [failed] = result.failed
    assert failed.name == "manifest verified"
    assert "task b trial 1" in detail(failed) and "task a" not in detail(failed)
    assert result.summary.counts.total == 5


def test_a_regraded_run_is_gated_on_its_new_outcomes_and_still_verifies(tmp_path: Path) -> None:
    store = Store(str(tmp_path / "runs.db"))
    suite_dir = mini_suite(tmp_path / "mini")
    report = asyncio.run(run_suite(load_suite(suite_dir), RunRequest(trials=3), store))
    spec = GateSpec(min={"pass@1": 0.9})
    assert evaluate_gate(store, report.run_id, spec).passed
    text = (suite_dir / "suite.yaml").read_text()
    (suite_dir / "suite.yaml").write_text(text.replace("must_say: [shipped]", "must_say: [x]"))
    assert asyncio.run(regrade_run(load_suite(suite_dir), store, report.run_id)) == 3
    result = evaluate_gate(store, report.run_id, spec)
    assert [c.name for c in result.failed] == ["pass@1 ≥ 0.9"]
    assert result.verification is not None and result.verification.ok
    assert result.points.metrics is not None and result.points.metrics["pass@1"] == 0.5


# ---------------------------------------------------------------- reports


def test_the_gate_returns_typed_findings_that_report_puts_in_words(store: Store) -> None:
    """Each check carries what it found as values (the metric, its limit, the test's
    p-value, the flagged tasks, the verification); the words are the report's."""
    baseline = stored_run(store, THIRTY, k=[1])
    candidate = stored_run(store, {**THIRTY, **broken(1)}, k=[1])
    record_manifest(store, candidate)
    spec = GateSpec(min={"pass@1": 0.99}, max={"cost_usd": 1.0})
    result = evaluate_gate(store, candidate, spec, baseline)
    found = {c.name: c.found for c in result.checks}
    assert found["run finished"] == RunState("finished", result.run.finished_at, None, 180)
    floor = found["pass@1 ≥ 0.99"]
    assert isinstance(floor, Threshold) and floor.at_least and floor.limit == 0.99
    assert floor.value == pytest.approx(29 / 30)
    drop = found["pass@1: no significant drop > 0.03 vs baseline"]
    assert isinstance(drop, Drop) and drop.dropped and drop.tasks == 30
    assert (drop.metric.a, drop.metric.p_value) == (1.0, pytest.approx(1.0))
    tasks = found[TASKS]
    assert isinstance(tasks, RegressedTasks)
    assert [t.task_id for t in tasks.flagged] == ["t00"] and tasks.allowed == 0
    verified = found["manifest verified"]
    assert isinstance(verified, Integrity) and verified.verification.ok
    unrecorded = found[f"baseline manifest verified ({baseline})"]
    assert isinstance(unrecorded, Integrity) and not unrecorded.verification.recorded
    said = {c.name: detail(c) for c in result.checks}
    assert said["pass@1 ≥ 0.99"] == "pass@1 = 0.9667 is below 0.99"
    assert (
        said["manifest verified"]
        == f"180 trials match manifest {verified.verification.manifest_hash}"
    )
    assert said[f"baseline manifest verified ({baseline})"] == (
        f"no manifest recorded for run {baseline}"
    )


def test_junit_has_a_case_per_check_and_per_task(store: Store) -> None:
    base = {"ok": "PPP", "flaky": "PPP", "down": "PPP"}
    baseline = stored_run(store, base)
    run = stored_run(store, {"ok": "PPP", "flaky": "PFP", "down": "IIP"})
    result = evaluate_gate(store, run, GateSpec(min={"pass@1": 0.9}), baseline)
    root = ET.fromstring(junit_text(result))
    assert root.tag == "testsuites"
    gate, tasks = root.findall("testsuite")
    assert gate.get("name") == "gate"
    gate_cases = {c.get("name"): c for c in gate.findall("testcase")}
    assert set(gate_cases) == set(titles(result.checks))  # type: ignore[arg-type]
    failure = gate_cases["pass@1 ≥ 0.9"].find("failure")
    assert failure is not None and "below 0.9" in (failure.get("message") or "")
    props = {p.get("name"): p.get("value") for p in gate.iter("property")}
    assert props["run_id"] == run and props["baseline"] == baseline
    cases = {c.get("name"): c for c in tasks.findall("testcase")}
    assert set(cases) == {"ok", "flaky", "down"}
    assert len(list(cases["ok"])) == 1  # system-out only
    flaky = cases["flaky"].find("failure")
    assert flaky is not None
    assert flaky.get("message") == "1 of 3 trials did not pass: state: wrong order"
    down = cases["down"].find("error")
    assert down is not None and down.get("type") == "infra_error"
    assert "provider: 503 overloaded (×2)" in (down.get("message") or "")
    assert root.get("tests") == str(len(gate_cases) + 3)
    assert tasks.get("failures") == "1" and tasks.get("errors") == "1"


def test_markdown_says_what_failed_and_why(store: Store) -> None:
    base = {f"t{i}": "PPPPPP" for i in range(8)}
    baseline = stored_run(store, base, k=[1, 3])
    down = {f"t{i}": "FFFFFF" for i in (0, 1, 2, 3, 5)}
    run = stored_run(store, {**base, **down, "t4": "PPPPPF"}, k=[1, 3])
    result = evaluate_gate(store, run, GateSpec(min={"reliability_score": 0.9}), baseline)
    text = gate_markdown(result)
    assert text.startswith("## ❌ toolproof gate failed: mini 1")
    assert "checks failed:**" in text
    assert "- ❌ **reliability_score ≥ 0.9**: reliability_score = " in text
    assert "(1 of 4 parts) is below 0.9" in text  # never read as the whole score
    assert "> ℹ️ Reliability Score built from pass^k alone" in text
    assert "- ❌ **pass@1: no significant drop > 0.03 vs baseline**" in text
    assert "| `reliability_score` |" in text and "| ≥ 0.9 |" in text
    assert "### Regressed tasks against" in text
    # Fisher p = 1/924 for 6/6 → 0/6, Holm over 8 tasks: 8/924; 6/6 → 5/6: p = 1/2
    assert "- ❌ **no task regressed significantly vs baseline**: 5 of 8 tasks" in text
    assert (
        "| t3 | 6/6 | 0/6 | -1.000 | 0.0011 | 0.0087 | significant | state: wrong order |" in text
    )
    assert "| t4 | 6/6 | 5/6 | -0.167 | 0.5000 | 1.0000 |  | state: wrong order |" in text
    assert "### Tasks with failed trials (6)" in text

    ok = evaluate_gate(store, baseline, GateSpec(min={"pass@1": 0.5}))
    assert gate_markdown(ok).startswith("## ✅ toolproof gate passed")


# ---------------------------------------------------------------- the command, on real runs


@pytest.fixture(scope="module")
def real_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str, str]:
    """An oracle run (the model in production) and a scripted candidate that fails the
    cancellation task, 6 trials each, of the mini suite; the suite gets a gate: section."""
    root = tmp_path_factory.mktemp("gate")
    suite_dir = mini_suite(root / "mini")
    script = root / "half.yaml"
    script.write_text(HALF, encoding="utf-8")
    store = Store(str(root / "runs.db"))
    suite = load_suite(suite_dir)

    def run(agent: str) -> str:
        request = RunRequest(agent=agent, trials=6, k=[1, 3])
        return asyncio.run(run_suite(suite, request, store)).run_id

    production, candidate = run("oracle"), run(f"scripted:{script}")
    suite_file = suite_dir / "suite.yaml"
    suite_file.write_text(suite_file.read_text() + GATE_SECTION)
    return root, store.url, production, candidate


@pytest.mark.slow
def test_gate_command_blocks_a_regressed_candidate(real_runs: tuple[Path, str, str, str]) -> None:
    root, url, production, candidate = real_runs
    junit, markdown = root / "out" / "junit.xml", root / "out" / "gate.md"
    result = toolproof_ci(
        "gate",
        candidate,
        "--baseline",
        production,
        "--store",
        url,
        "--junit",
        junit,
        "--markdown",
        markdown,
        "--json",
        root / "out" / "gate.json",
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert "FAIL" in result.stdout and "pass@1 ≥ 0.9" in result.stdout
    assert "gate failed" in result.stdout
    text = markdown.read_text()
    # Fisher p = 1/924, Holm over the suite's two tasks: 2/924
    assert "| cancel | 6/6 | 0/6 | -1.000 | 0.0011 | 0.0022 | significant | state:" in text
    cases = {c.get("name"): c for c in ET.parse(junit).getroot().iter("testcase")}
    assert cases["cancel"].find("failure") is not None
    assert cases["status"].find("failure") is None
    # one task of two fell: a drop, but two tasks cannot show it is not chance (the floor
    # on pass@1 is what blocks this candidate)
    regression = cases["pass@1: no significant drop > 0.03 vs baseline"]
    assert regression.find("failure") is None
    assert "a drop, but not significant" in ET.tostring(regression, encoding="unicode")
    # the task itself is flagged: its 6/6 → 0/6 alone is significant
    tasks = cases["no task regressed significantly vs baseline"].find("failure")
    assert tasks is not None and "cancel 6/6 → 0/6" in (tasks.get("message") or "")

    passed = invoke("gate", production, "--store", url, "--max", "loop_rate=0")
    assert passed.code == 0, passed.stdout
    assert "gate passed" in passed.stdout


@pytest.mark.slow
def test_gate_command_bad_input_exits_2(real_runs: tuple[Path, str, str, str]) -> None:
    root, url, production, _ = real_runs
    bad_flag = toolproof_ci("gate", production, "--store", url, "--min", "pass@1")
    assert bad_flag.returncode == 2
    assert "--min 'pass@1': expected METRIC=VALUE" in bad_flag.stderr
    suite_dir = mini_suite(root / "broken", GATE_SECTION)
    text = (suite_dir / "suite.yaml").read_text().replace("pass@1: 0.9", "pass@1: high")
    (suite_dir / "suite.yaml").write_text(text)
    line = text.splitlines().index("    pass@1: high") + 1
    located = invoke("gate", production, "--store", url, "--suite", suite_dir)
    assert located.code == 2
    assert f"suite.yaml:{line}: gate.min.pass@1" in str(located.error)
    unknown = invoke("gate", "nope", "--store", url, "--min", "pass@1=1")
    assert unknown.code == 2 and "no run 'nope'" in str(unknown.error)


@pytest.mark.skipif(
    "gate" not in SuiteFile.model_fields, reason="spec.suite.SuiteFile has no gate: field yet"
)
def test_a_suite_with_a_gate_section_runs_and_gates(tmp_path: Path) -> None:
    suite_dir = mini_suite(tmp_path / "mini", GATE_SECTION)
    assert load_suite(suite_dir).file.gate == suite_gate(suite_dir)  # type: ignore[attr-defined]
    store = Store(str(tmp_path / "runs.db"))
    request = RunRequest(agent="oracle", trials=3, k=[1, 3])
    run_id = asyncio.run(run_suite(load_suite(suite_dir), request, store)).run_id
    spec, sources, _ = resolve_spec(store.run(run_id), None, GateSpec())
    assert sources == [f"{suite_dir.resolve() / 'suite.yaml'}: gate"]
    assert evaluate_gate(store, run_id, spec).passed


def test_a_run_without_trials_cannot_pass(store: Store) -> None:
    empty = stored_run(store, {"t": ""})
    full = stored_run(store, {"t": "PPP"})
    result = evaluate_gate(store, empty, GateSpec(min={"pass@1": 0.5}))
    assert [c.name for c in result.failed] == ["run has trials"]
    against_empty = evaluate_gate(store, full, GateSpec(), empty)
    assert [detail(c) for c in against_empty.failed] == [
        f"no trial of the run can be paired with one of baseline {empty}"
    ]


def test_markdown_carries_the_suites_notes_above_the_checks(store: Store) -> None:
    note = "122 nl assertions are left out: no trial is graded on them"
    run = stored_run(store, {"t0": "PP"}, notes=[note])
    text = gate_markdown(evaluate_gate(store, run, GateSpec(min={"pass@1": 0.5})))
    assert f"> ℹ️ {note}\n\n### Checks" in text
    plain = stored_run(store, {"t0": "PP"})
    assert "no trial is graded" not in gate_markdown(
        evaluate_gate(store, plain, GateSpec(min={"pass@1": 0.5}))
    )
