"""Comparing runs: the paired bootstrap and permutation test checked against hand
computations, trial matching, the per-task test, and `toolproof compare` on stored runs.

`stored_run` (tests/stored.py) writes a run of chosen outcomes straight into a store, so each
statistical situation is exact and fast to build.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from stored import OUTCOME, invoke, stored_run, toolproof_ci

from toolproof.ci.compare import compare_runs
from toolproof.ci.gate import evaluate_gate
from toolproof.errors import UsageError
from toolproof.metrics.comparison import compare_rows, pair_models
from toolproof.metrics.stats import paired_bootstrap, paired_permutation
from toolproof.metrics.summary import ModelSummary, model_metrics, summarize_run
from toolproof.spec.gate import GateSpec
from toolproof.store.journal import Store


def rows(outcomes: Mapping[str, str], variant: str = "") -> list[dict[str, Any]]:
    return [
        {"variant": variant, "task_id": task, "trial": i, "outcome": OUTCOME[c], "reason": c}
        for task, letters in outcomes.items()
        for i, c in enumerate(letters)
    ]


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(str(tmp_path / "runs.db"))


# ---------------------------------------------------------------- paired bootstrap


def test_paired_bootstrap_is_the_percentile_interval_of_the_differences() -> None:
    a = [1.0, 1.0, 0.5, 1.0, 0.0, 1.0]
    b = [1.0, 0.0, 0.5, 1.0, 0.0, 0.5]
    mean, low, high = paired_bootstrap(a, b, seed=7, resamples=500)
    assert mean == pytest.approx(-0.25)
    # The same computation by hand: resample the six differences, take the percentiles.
    diffs = [y - x for x, y in zip(a, b, strict=True)]
    rng = random.Random(7)
    means = sorted(sum(rng.choices(diffs, k=6)) / 6 for _ in range(500))
    assert (low, high) == (means[int(0.025 * 499)], means[round(0.975 * 499)])
    assert paired_bootstrap(a, b, seed=7, resamples=500) == (mean, low, high)


def test_paired_bootstrap_degenerate_cases() -> None:
    assert paired_bootstrap([1.0, 1.0], [1.0, 1.0]) == (0.0, 0.0, 0.0)
    assert paired_bootstrap([1.0, 1.0, 1.0], [0.0, 0.0, 0.0]) == (-1.0, -1.0, -1.0)
    with pytest.raises(ValueError):
        paired_bootstrap([1.0], [1.0, 0.0])
    with pytest.raises(ValueError):
        paired_bootstrap([], [])


def test_one_task_of_many_dropping_is_not_significant() -> None:
    a = [1.0] * 30
    b = [1.0] * 29 + [0.0]
    mean, low, high = paired_bootstrap(a, b)
    assert mean == pytest.approx(-1 / 30)
    assert high == 0.0 and low < 0.0
    assert paired_permutation(a, b) == 1.0


# ---------------------------------------------------------------- permutation over tasks


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ([1.0] * 5, [0.0] * 5, 2 / 32),  # five tasks all down: 2 of 32 sign assignments
        ([1.0] * 6, [0.0] * 6, 2 / 64),
        ([1.0, 1.0, 0.5], [1.0, 1.0, 0.5], 1.0),  # nothing changed
        ([1.0, 1.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0], 10 / 16),  # |Σ| ≥ 2: 10 of 16
        ([0.5, 0.5], [0.0, 1.0], 1.0),  # +0.5 and −0.5 cancel: every assignment as extreme
    ],
)
def test_paired_permutation_enumerates_sign_flips(
    a: list[float], b: list[float], expected: float
) -> None:
    assert paired_permutation(a, b) == pytest.approx(expected)


def test_paired_permutation_samples_many_changed_tasks_seeded() -> None:
    a, b = [1.0] * 20, [0.0] * 15 + [1.0] * 5  # 15 tasks down, beyond exact enumeration
    p = paired_permutation(a, b, seed=3)
    assert p == paired_permutation(a, b, seed=3)
    assert p == pytest.approx(1 / 10_001)  # exact 2 / 2^15; no sample reaches it
    mixed_a = [1.0] * 16
    mixed_b = [0.0] * 9 + [2.0] * 7  # −9 + 7: a weak net drop
    assert 0.5 < paired_permutation(mixed_a, mixed_b, seed=3) < 1.0
    with pytest.raises(ValueError):
        paired_permutation([1.0], [])


# ---------------------------------------------------------------- matching


def test_compare_rows_matches_trials_by_variant_task_and_index() -> None:
    a = rows({"t1": "PPPPPP", "t2": "PPP", "t3": "FFF"})
    b = rows({"t1": "FFFFFF", "t2": "PPPF", "t4": "PPP"})
    [v] = compare_rows(a, b, ks=[1, 3])
    assert v.variant == ""
    assert v.matched == 9  # t1 × 6 and t2 × 3; t3 and t4 are in one run only
    assert v.only_a == 3 and v.only_b == 4
    assert (v.a_only, v.b_only) == (6, 0)
    t1 = next(t for t in v.tasks if t.task_id == "t1")
    assert (t1.trials, t1.passed_a, t1.passed_b, t1.delta) == (6, 6, 0, -1.0)
    assert t1.regressed and t1.significant and t1.reasons_b == ("F",)
    t2 = next(t for t in v.tasks if t.task_id == "t2")
    assert (t2.trials, t2.passed_a, t2.passed_b) == (3, 3, 3)  # trial 3 of B has no match
    assert not t2.regressed and not t2.significant
    assert [t.task_id for t in v.regressed] == ["t1"]
    pass1 = v.metric("pass@1")
    assert pass1 is not None
    assert (pass1.a, pass1.b, pass1.delta) == (1.0, 0.5, -0.5)
    assert pass1.test == "permutation" and pass1.p_value == 1.0  # one task of three moved
    assert not pass1.significant
    pass3 = v.metric("pass^3")
    assert pass3 is not None
    assert (pass3.a, pass3.b) == (1.0, 0.5) and pass3.test == "permutation"


def test_compare_rows_tests_each_task_for_a_regression_with_holm_over_the_tasks() -> None:
    """Fisher's one-sided p on each task's passes, Holm-adjusted over the variant's tasks:
    only a drop can be significant, and only after the correction."""
    a = rows({"down": "PPPPPP", "up": "FFFFFF", "slip": "PPPPPP", "same": "PPPFFF"})
    b = rows({"down": "FFFFFF", "up": "PPPPPP", "slip": "PPPFFF", "same": "PPPFFF"})
    [v] = compare_rows(a, b)
    by = {t.task_id: t for t in v.tasks}
    assert by["down"].p_value == pytest.approx(1 / 924)
    assert by["down"].p_adjusted == pytest.approx(4 / 924)  # the smallest of 4, times 4
    assert by["slip"].p_value == pytest.approx(20 / 220)  # C(6,3)·C(6,6) / C(12,9)
    assert by["slip"].p_adjusted == pytest.approx(3 * 20 / 220)
    assert by["up"].p_value == 1.0
    assert by["same"].p_value == pytest.approx(662 / 924)  # P[X ≤ 3]: (1 + 36 + 225 + 400)/924
    assert by["same"].p_adjusted == 1.0
    assert [t.task_id for t in v.significantly_regressed] == ["down"]
    assert not by["up"].significant and by["up"].improved
    data = v.as_json()["tasks"][0]
    assert (data["task"], data["significant"]) == ("down", True)
    assert data["p_adjusted"] == pytest.approx(4 / 924)
    # at alpha 0.001 the same drop is not enough
    [strict] = compare_rows(a, b, alpha=0.001)
    assert strict.significantly_regressed == []


def test_compare_rows_leaves_out_k_above_the_matched_trials() -> None:
    [v] = compare_rows(rows({"t": "PPPPP"}), rows({"t": "PPP"}), ks=[1, 3, 5])
    assert [m.name for m in v.metrics] == ["pass@1", "pass^3"]


def test_compare_rows_infra_policy() -> None:
    a = rows({"t": "PPPP"})
    b = rows({"t": "IIPP"})
    [fail] = compare_rows(a, b, infra="fail")
    assert (fail.tasks[0].trials, fail.tasks[0].passed_b, fail.a_only) == (4, 2, 2)
    [exclude] = compare_rows(a, b, infra="exclude")
    assert (exclude.tasks[0].trials, exclude.tasks[0].passed_b, exclude.a_only) == (2, 2, 0)
    assert exclude.matched == 4


def test_compare_rows_per_variant_clean_first() -> None:
    a = rows({"t": "PP"}, "faults:flaky") + rows({"t": "PP"})
    b = rows({"t": "PF"}, "faults:flaky") + rows({"t": "PP"}) + rows({"t": "PP"}, "drift:v2")
    out = compare_rows(a, b)
    assert [v.variant for v in out] == ["", "faults:flaky"]
    assert [t.task_id for t in out[1].regressed] == ["t"]


def test_compare_rows_flags_changed_tasks() -> None:
    [v] = compare_rows(rows({"t": "P", "u": "P"}), rows({"t": "F", "u": "P"}), changed=["t"])
    assert {t.task_id: t.changed for t in v.tasks} == {"t": True, "u": False}


def test_pair_models() -> None:
    assert pair_models(["x", "y"], ["y", "x"]) == [("y", "y"), ("x", "x")]
    assert pair_models([""], ["m1", "m2"]) == [("", "m1"), ("", "m2")]
    assert pair_models(["m1", "m2"], ["m3"]) == [("m1", "m3"), ("m2", "m3")]
    assert pair_models(["a", "b"], ["b", "c"]) == [("b", "b")]
    with pytest.raises(UsageError, match="cannot pair"):
        pair_models(["a", "b"], ["c", "d"])


def _summarised(cost: float | None) -> ModelSummary:
    """Three tasks of three trials: one infra error in the clean variant, two under faults,
    and the clean trials' cost (its first trial's) as given."""
    clean = rows({"a": "PPI", "b": "PPP", "c": "PPP"})
    faulted = rows({"a": "PIP", "b": "PPI", "c": "PPP"}, "faults:x")
    for row in clean:
        row["cost_usd"] = 0.0
    clean[0]["cost_usd"] = cost
    body = summarize_run([*clean, *faulted], [], [1])
    return ModelSummary.model_validate({"model": "m", **body["models"][0]})


def test_model_metrics_adds_cost_per_task_and_infra_share() -> None:
    metrics = model_metrics(_summarised(3.0))
    assert metrics["cost_per_task_usd"] == 1.0
    assert metrics["infra_error_share"] == pytest.approx(3 / 18)
    assert model_metrics(_summarised(None))["cost_per_task_usd"] is None


# ---------------------------------------------------------------- stored runs


def test_compare_runs_reads_both_runs(store: Store) -> None:
    tasks_a = {f"t{i}": "PPPPPP" for i in range(8)}
    tasks_b = {**tasks_a, "t0": "FFFFFF", "t1": "PPPPPF"}
    a = stored_run(store, tasks_a, k=[1, 3])
    b = stored_run(store, tasks_b, k=[1, 3], task_hashes={"t1": "new"})
    comparison = compare_runs(store, a, b)
    [pair] = comparison.pairs
    assert pair.label == "scripted"
    [v] = pair.variants
    assert (v.a_only, v.b_only) == (7, 0)
    # two tasks of eight moved, both down: 2 of the 4 sign assignments are as extreme
    assert v.metric("pass@1").p_value == 0.5  # type: ignore[union-attr]
    assert [t.task_id for t in v.regressed] == ["t0", "t1"]
    assert [t.task_id for t in v.regressed if t.significant] == ["t0"]
    assert next(t for t in v.tasks if t.task_id == "t1").changed
    assert any("1 task(s) changed" in w for w in comparison.warnings)
    names = [m.name for m in pair.metrics]
    assert "reliability_score" in names and "cost_per_task_usd" in names
    data = comparison.as_json()
    assert data["pairs"][0]["variants"][0]["regressed"] == ["t0", "t1"]
    json.dumps(data)


def test_compare_runs_of_different_models_and_seeds(store: Store) -> None:
    a = stored_run(store, {"t": "PPP"}, models=["openai/old"], agent="openai/old", seed=1)
    b = stored_run(store, {"t": "PPF"}, models=["openai/new", "openai/other"], agent="x, y", seed=2)
    comparison = compare_runs(store, a, b)
    assert [(p.label_a, p.label_b) for p in comparison.pairs] == [
        ("openai/old", "openai/new"),
        ("openai/old", "openai/other"),
    ]
    assert any("different seeds" in w for w in comparison.warnings)


def test_compare_runs_refuses_nonsense(store: Store) -> None:
    a = stored_run(store, {"t": "P"})
    other = stored_run(store, {"t": "P"}, suite="retail")
    with pytest.raises(UsageError, match="itself"):
        compare_runs(store, a, a)
    with pytest.raises(UsageError, match="same suite"):
        compare_runs(store, a, other)


@pytest.mark.slow
def test_compare_command(store: Store, tmp_path: Path) -> None:
    down = [f"t{i}" for i in range(1, 7)]
    a = stored_run(store, {**dict.fromkeys(down, "PPPPPP"), "t7": "PPPPPP"}, k=[1, 3])
    b = stored_run(store, {**dict.fromkeys(down, "FFFFFF"), "t7": "PPPPPP"}, k=[1, 3])
    out = tmp_path / "out" / "compare.json"
    result = toolproof_ci("compare", a, b, "--store", store.url, "--json", out)
    assert result.returncode == 0, result.stderr
    assert "pass@1" in result.stdout and "significant drop" in result.stdout
    assert "6 task(s) passed fewer matched trials" in result.stdout and "t1" in result.stdout
    data = json.loads(out.read_text())
    variant = data["pairs"][0]["variants"][0]
    assert variant["regressed"] == down
    assert variant["trials"] == {"a_only": 36, "b_only": 0}
    pass1 = variant["metrics"][0]
    assert (pass1["name"], pass1["test"], pass1["p_value"]) == ("pass@1", "permutation", 2 / 64)

    assert "6 task(s) regressed significantly (what the gate counts):" in result.stdout
    assert data["task_test"] == {"test": "fisher_exact_one_sided", "correction": "holm"}
    down_t1 = variant["tasks"][0]
    assert (down_t1["task"], down_t1["significant"]) == ("t1", True)
    # Holm over 7 tasks: the six tied p-values of 1/924 are all adjusted to 7/924
    assert down_t1["p_adjusted"] == pytest.approx(7 / 924)

    missing = invoke("compare", a, "nope", "--store", store.url)
    assert missing.code == 2
    assert "no run 'nope'" in str(missing.error)


def test_compare_and_the_gate_flag_the_same_tasks(store: Store) -> None:
    tasks = {f"t{i}": "PPPPPPPP" for i in range(12)}
    changes = {"t0": "FFFFFFFF", "t1": "PFFFFFFF", "t2": "PPPPFFFF", "t3": "PPPPPPPF"}
    a = stored_run(store, tasks)
    b = stored_run(store, {**tasks, **changes})
    [v] = compare_runs(store, a, b).pairs[0].variants
    flagged = [t.task_id for t in v.significantly_regressed]
    # 8/8 → 0/8: 1/12870 · 12; 8/8 → 1/8: 8/11440 · 11; 8/8 → 4/8: 70/1820 · 10 is not
    assert flagged == ["t0", "t1"]
    result = evaluate_gate(store, b, GateSpec(max_regressed_tasks=2), a)
    [check] = [c for c in result.checks if c.kind == "regressed_tasks"]
    assert [t.task_id for t in check.found.flagged] == flagged and check.passed
