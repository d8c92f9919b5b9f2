"""Confidence intervals of the condition metrics and the Reliability Score: a bootstrap over
tasks, ratios on matched tasks, the score's components resampled jointly, and no interval
where there is too little to resample."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rows import trial

from toolproof.metrics.stats import percentile_interval, resample_indices
from toolproof.metrics.summary import summarize_run

CONDITION_CIS = (
    "recovery_rate",
    "loop_rate",
    "corrective_action",
    "drift_robustness",
    "completion_under_load",
    "reliability_score",
)


def model(rows: Sequence[dict[str, Any]], seed: int = 0) -> dict[str, Any]:
    entry: dict[str, Any] = summarize_run(rows, [], [1], seed=seed)["models"][0]
    return entry


def outcomes(task: str, variant: str, text: str) -> list[dict[str, Any]]:
    """P passed, F failed; under a fault profile, every trial had one failed call that was
    recovered when the trial passed."""
    faulted = variant.startswith("faults:")
    return [
        trial(task, variant, i, o == "P", failed=int(faulted), recovered=int(faulted and o == "P"))
        for i, o in enumerate(text)
    ]


# four tasks, every condition: clean, a fault profile, two drift variants, a load level
FULL = {
    "a": {"": "PPPP", "faults:f": "PPPF", "drift:v2": "PPFF", "drift:v3": "PFFF", "load:8": "PPPF"},
    "b": {"": "PPPF", "faults:f": "PPFF", "drift:v2": "PPPF", "drift:v3": "PPFF", "load:8": "PFFF"},
    "c": {"": "PPFF", "faults:f": "PFFF", "drift:v2": "PFFF", "drift:v3": "FFFF", "load:8": "PPFF"},
    "d": {"": "PFFF", "faults:f": "FFFF", "drift:v2": "FFFF", "drift:v3": "PFFF", "load:8": "FFFF"},
}
FULL_ROWS = [
    row for t, runs in FULL.items() for v, text in runs.items() for row in outcomes(t, v, text)
]


def test_every_condition_metric_and_the_score_get_an_interval_around_their_value() -> None:
    entry = model(FULL_ROWS, seed=3)
    for name in CONDITION_CIS:
        low, high = entry["ci"][name]
        assert low <= entry["metrics"][name] <= high, name
    conditions = entry["conditions"]
    assert conditions["recovery"]["ci"]["recovery_rate"] == entry["ci"]["recovery_rate"]
    assert conditions["drift"]["ci"]["drift_robustness"] == entry["ci"]["drift_robustness"]
    assert conditions["load"]["ci"]["completion_under_load"] == entry["ci"]["completion_under_load"]
    assert entry["reliability"]["ci"]["reliability_score"] == entry["ci"]["reliability_score"]
    for low, high in (
        conditions["drift"]["ci"]["ratio_to_clean"],
        conditions["load"]["ci"]["ratio_to_baseline"],
    ):
        assert 0.0 <= low <= high
    [kind] = conditions["recovery"]["by_fault"].values()
    assert kind["ci"]["rate"] == entry["ci"]["recovery_rate"]  # one fault kind: the same counts


def _rate(tasks: Sequence[str], variant: str) -> float | None:
    values = [FULL[t][variant].count("P") / len(FULL[t][variant]) for t in tasks]
    return sum(values) / len(values) if values else None


def _brute_force(statistic: Callable[[list[str]], float | None], seed: int) -> list[float]:
    """The interval computed the long way: draw tasks as the bootstrap does, evaluate the
    statistic on the drawn tasks, take the percentiles and reach the value on all tasks."""
    tasks = sorted(FULL)
    draws = [
        statistic([tasks[i] for i in positions]) for positions in resample_indices(4, seed=seed)
    ]
    low, high = percentile_interval([d for d in draws if d is not None], 0.95)
    point = statistic(tasks)
    assert point is not None
    return [min(low, point), max(high, point)]


def test_a_ratio_is_bootstrapped_on_matched_tasks() -> None:
    def ratio(tasks: list[str]) -> float | None:
        drift = ((_rate(tasks, "drift:v2") or 0) + (_rate(tasks, "drift:v3") or 0)) / 2
        clean = _rate(tasks, "")
        return drift / clean if clean else None

    entry = model(FULL_ROWS, seed=11)
    expected = _brute_force(ratio, seed=11)
    assert entry["conditions"]["drift"]["ci"]["ratio_to_clean"] == pytest.approx(expected)


def test_the_score_is_bootstrapped_with_its_components_drawn_together() -> None:
    def score(tasks: list[str]) -> float | None:
        recovered = sum(FULL[t]["faults:f"].count("P") for t in tasks)
        failed = sum(len(FULL[t]["faults:f"]) for t in tasks)
        parts = {
            "pass^k": _rate(tasks, ""),  # pass^1 = pass@1
            "recovery_rate": recovered / failed,
            "completion_under_load": _rate(tasks, "load:8"),
            "drift_robustness": ((_rate(tasks, "drift:v2") or 0) + (_rate(tasks, "drift:v3") or 0))
            / 2,
        }
        weights = {
            "pass^k": 0.4,
            "recovery_rate": 0.3,
            "completion_under_load": 0.2,
            "drift_robustness": 0.1,
        }
        return sum(weights[n] * (v or 0.0) for n, v in parts.items())

    entry = model(FULL_ROWS, seed=5)
    assert entry["ci"]["reliability_score"] == pytest.approx(_brute_force(score, seed=5))


def test_same_seed_same_intervals_and_another_seed_other_draws() -> None:
    assert model(FULL_ROWS, seed=2)["ci"] == model(FULL_ROWS, seed=2)["ci"]
    # four tasks give few distinct resamples: some seeds land on the same percentiles
    assert len({str(model(FULL_ROWS, seed=seed)["ci"]) for seed in range(6)}) > 1


# ---------------------------------------------------------------- too little data: no interval


def test_without_a_failed_call_recovery_has_no_interval() -> None:
    rows = [row for t in FULL for row in outcomes(t, "", FULL[t][""])]
    entry = model(rows)
    assert entry["metrics"]["recovery_rate"] is None and entry["ci"]["recovery_rate"] is None
    assert entry["conditions"]["recovery"]["ci"]["corrective_action"] is None
    # no drift or load run: neither the metric nor an interval
    assert entry["ci"]["drift_robustness"] is None and entry["ci"]["completion_under_load"] is None
    assert "drift" not in entry["conditions"] and "load" not in entry["conditions"]
    # loops are counted over every trial: four tasks, an interval (all zero here)
    assert entry["ci"]["loop_rate"] == [0.0, 0.0]
    # the score is pass^1 alone, with its interval
    assert entry["ci"]["reliability_score"] == pytest.approx(entry["ci"]["pass^1"])


def test_failed_calls_in_a_single_task_give_a_rate_but_no_interval() -> None:
    rows = [
        trial("a", "faults:f", 0, True, failed=2, recovered=1),
        trial("b", "faults:f", 0, True),
        trial("c", "faults:f", 0, False),
    ]
    entry = model(rows)
    assert entry["metrics"]["recovery_rate"] == 0.5
    assert entry["ci"]["recovery_rate"] is None
    assert entry["conditions"]["recovery"]["by_fault"]["server_error"]["ci"] == {"rate": None}
    # a score built on recovery has no interval either
    assert entry["metrics"]["reliability_score"] == 0.5 and entry["ci"]["reliability_score"] is None
    rows.append(trial("b", "faults:f", 1, True, failed=1, recovered=1))
    assert model(rows)["ci"]["recovery_rate"] is not None


def test_a_ratio_to_a_base_that_passed_in_one_task_only_has_no_interval() -> None:
    rows = [
        *outcomes("a", "", "PP"),
        *outcomes("b", "", "FF"),
        *outcomes("c", "", "FF"),
        *outcomes("a", "drift:v2", "PF"),
        *outcomes("b", "drift:v2", "PF"),
        *outcomes("c", "drift:v2", "FF"),
    ]
    drift = model(rows)["conditions"]["drift"]
    assert drift["ratio_to_clean"] == pytest.approx(1.0)  # (1/3) / (1/3)
    assert drift["ci"]["ratio_to_clean"] is None
    assert drift["ci"]["drift_robustness"] is not None


def test_a_clean_pass_rate_of_zero_leaves_the_ratio_and_its_interval_out() -> None:
    rows = [
        *outcomes("a", "", "FF"),
        *outcomes("b", "", "FF"),
        *outcomes("a", "load:4", "PF"),
        *outcomes("b", "load:4", "PP"),
    ]
    load = model(rows)["conditions"]["load"]
    assert load["ratio_to_baseline"] is None and load["ci"]["ratio_to_baseline"] is None
    assert load["ci"]["completion_under_load"] is not None


# ---------------------------------------------------------------- properties

TASK = st.fixed_dictionaries(
    {
        "": st.lists(st.booleans(), min_size=1, max_size=4),
        "drift:v2": st.lists(st.booleans(), min_size=1, max_size=4),
        "load:6": st.lists(st.booleans(), min_size=1, max_size=4),
        "faults": st.lists(
            st.tuples(st.booleans(), st.integers(0, 3), st.integers(0, 3)), min_size=1, max_size=4
        ),
    }
)


def generated(tasks: Sequence[dict[str, Any]], copies: int = 1) -> list[dict[str, Any]]:
    """Rows of the generated tasks, each task `copies` times under another id."""
    rows = []
    for copy in range(copies):
        for n, task in enumerate(tasks):
            name = f"t{n}-{copy}"
            for variant in ("", "drift:v2", "load:6"):
                rows += [trial(name, variant, i, p) for i, p in enumerate(task[variant])]
            for i, (passed, failed, recovered) in enumerate(task["faults"]):
                rows.append(
                    trial(name, "faults:f", i, passed, failed, min(failed, recovered), failed >= 3)
                )
    return rows


def _intervals(entry: dict[str, Any]) -> dict[str, tuple[float | None, list[float] | None]]:
    """Every condition interval with its value: model-level, ratios and fault kinds."""
    conditions = entry["conditions"]
    out = {name: (entry["metrics"][name], entry["ci"][name]) for name in CONDITION_CIS}
    out["ratio_to_clean"] = (
        conditions["drift"]["ratio_to_clean"],
        conditions["drift"]["ci"]["ratio_to_clean"],
    )
    out["ratio_to_baseline"] = (
        conditions["load"]["ratio_to_baseline"],
        conditions["load"]["ci"]["ratio_to_baseline"],
    )
    for kind, entry_ in conditions["recovery"]["by_fault"].items():
        out[kind] = (entry_["rate"], entry_["ci"]["rate"])
    return out


@settings(max_examples=40, deadline=None)
@given(st.lists(TASK, min_size=1, max_size=6), st.integers(0, 2**16))
def test_an_interval_holds_its_value_and_is_none_when_the_value_is(
    tasks: list[dict[str, Any]], seed: int
) -> None:
    rows = generated(tasks)
    entry = model(rows, seed)
    for name, (value, interval) in _intervals(entry).items():
        if value is None:
            assert interval is None, name
        elif interval is not None:
            low, high = interval
            assert low - 1e-9 <= value <= high + 1e-9, name
    assert model(rows, seed)["ci"] == entry["ci"]


@settings(max_examples=15, deadline=None)
@given(st.lists(TASK, min_size=2, max_size=4))
def test_an_interval_narrows_with_more_tasks(tasks: list[dict[str, Any]]) -> None:
    few = _intervals(model(generated(tasks)))
    many = _intervals(model(generated(tasks, copies=16)))
    for name, (_, interval) in few.items():
        wide = many[name][1]
        if interval is not None and wide is not None:
            assert wide[1] - wide[0] <= interval[1] - interval[0] + 1e-9, name
