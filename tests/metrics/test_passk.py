"""pass@k, pass^k and pass^k_strict against hand-computed values and their invariants."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolproof.errors import MetricError
from toolproof.metrics.passk import (
    TaskTrials,
    check_k,
    pass_at_k,
    pass_hat_k,
    pass_hat_k_strict,
    per_task,
    summarize,
)

# ---------------------------------------------------------------- hand-computed cases


def test_pass_hat_k_is_chance_that_k_drawn_trials_all_pass() -> None:
    # n=4, c=2, k=2: C(2,2) / C(4,2) = 1 / 6
    assert pass_hat_k(4, 2, 2) == pytest.approx(1 / 6)
    # n=5, c=3, k=2: C(3,2) / C(5,2) = 3 / 10
    assert pass_hat_k(5, 3, 2) == pytest.approx(3 / 10)
    # n=8, c=6, k=3: C(6,3) / C(8,3) = 20 / 56
    assert pass_hat_k(8, 6, 3) == pytest.approx(20 / 56)


def test_pass_at_k_is_chance_that_one_of_k_drawn_trials_passes() -> None:
    # n=4, c=2, k=2: 1 - C(2,2) / C(4,2) = 1 - 1/6 = 5/6
    assert pass_at_k(4, 2, 2) == pytest.approx(5 / 6)
    # n=5, c=1, k=2: 1 - C(4,2) / C(5,2) = 1 - 6/10 = 2/5
    assert pass_at_k(5, 1, 2) == pytest.approx(2 / 5)
    # n=8, c=2, k=3: 1 - C(6,3) / C(8,3) = 1 - 20/56 = 36/56
    assert pass_at_k(8, 2, 3) == pytest.approx(36 / 56)


def test_all_passed_gives_one_for_every_k() -> None:
    # n=5, c=5: C(5,k)/C(5,k) = 1 and 1 - C(0,k)/C(5,k) = 1 - 0 = 1
    for k in range(1, 6):
        assert pass_hat_k(5, 5, k) == 1.0
        assert pass_at_k(5, 5, k) == 1.0


def test_none_passed_gives_zero_for_every_k() -> None:
    # c=0: C(0,k) = 0 for k >= 1, and 1 - C(5,k)/C(5,k) = 0
    for k in range(1, 6):
        assert pass_hat_k(5, 0, k) == 0.0
        assert pass_at_k(5, 0, k) == 0.0


def test_k_equal_to_n_needs_every_trial_for_pass_hat_and_one_for_pass_at() -> None:
    # n=k=4: pass^4 = C(c,4)/C(4,4) is 1 only when c=4; pass@4 = 1 - C(4-c,4) is 1 when c>=1
    assert pass_hat_k(4, 3, 4) == 0.0
    assert pass_hat_k(4, 4, 4) == 1.0
    assert pass_at_k(4, 1, 4) == 1.0
    assert pass_at_k(4, 0, 4) == 0.0


def test_pass_hat_k_is_zero_when_fewer_passes_than_k() -> None:
    # C(2,3) = 0
    assert pass_hat_k(6, 2, 3) == 0.0


def test_pass_at_k_is_one_when_fewer_failures_than_k() -> None:
    # n=6, c=4, k=3: C(2,3) = 0, so 1 - 0 = 1
    assert pass_at_k(6, 4, 3) == 1.0


def test_pass_hat_k_strict_looks_only_at_the_first_k_trials() -> None:
    outcomes = [True, True, False, True]
    assert pass_hat_k_strict(outcomes, 1) == 1.0
    assert pass_hat_k_strict(outcomes, 2) == 1.0
    assert pass_hat_k_strict(outcomes, 3) == 0.0
    # same counts (c=3 of n=4) in another order: the first trial failed
    assert pass_hat_k_strict([False, True, True, True], 1) == 0.0


def test_per_task_names_its_metrics_by_k() -> None:
    # outcomes T,F,T,T: n=4, c=3, k=2
    # pass@2 = 1 - C(1,2)/C(4,2) = 1; pass^2 = C(3,2)/C(4,2) = 3/6; strict: T,F -> 0
    row = per_task(TaskTrials("t", (True, False, True, True)), 2)
    assert row == {"pass@2": 1.0, "pass^2": pytest.approx(0.5), "pass^2_strict": 0.0}


def test_task_trials_counts_trials_and_passes() -> None:
    task = TaskTrials("t", (True, False, True))
    assert (task.n, task.c) == (3, 2)


def test_summarize_averages_over_tasks_and_reports_reliability_tax() -> None:
    tasks = [
        TaskTrials("a", (True, False, True, False)),  # n=4, c=2
        TaskTrials("b", (True, True, True, True)),  # n=4, c=4
        TaskTrials("c", (False, False, False, True)),  # n=4, c=1
    ]
    out = summarize(tasks, [2])
    # pass@1: (2/4 + 4/4 + 1/4) / 3 = 1.75 / 3
    assert out["pass@1"] == pytest.approx(1.75 / 3)
    # pass@2: a 1 - C(2,2)/6 = 5/6; b 1; c 1 - C(3,2)/6 = 1/2 -> (5/6 + 1 + 1/2) / 3 = 7/9
    assert out["pass@2"] == pytest.approx(7 / 9)
    # pass^2: a C(2,2)/6 = 1/6; b 1; c C(1,2)/6 = 0 -> (1/6 + 1 + 0) / 3 = 7/18
    assert out["pass^2"] == pytest.approx(7 / 18)
    # strict: a T,F -> 0; b T,T -> 1; c F,F -> 0 -> 1/3
    assert out["pass^2_strict"] == pytest.approx(1 / 3)
    # reliability tax: pass@1 - pass^2 = 10.5/18 - 7/18 = 7/36
    assert out["reliability_tax@2"] == pytest.approx(7 / 36)
    assert set(out) == {"pass@1", "pass@2", "pass^2", "pass^2_strict", "reliability_tax@2"}


def test_summarize_reports_every_requested_k() -> None:
    tasks = [TaskTrials("a", (True, True, False)), TaskTrials("b", (False, True, True))]
    out = summarize(tasks, [1, 3])
    # c/n = 2/3 for both tasks
    assert out["pass^1"] == pytest.approx(2 / 3)
    assert out["pass@1"] == pytest.approx(2 / 3)
    assert out["reliability_tax@1"] == pytest.approx(0.0)
    # pass^3 = C(2,3)/C(3,3) = 0; pass@3 = 1 - C(1,3)/1 = 1
    assert out["pass^3"] == 0.0
    assert out["pass@3"] == 1.0
    assert out["reliability_tax@3"] == pytest.approx(2 / 3)


# ---------------------------------------------------------------- errors


@pytest.mark.parametrize("metric", [pass_at_k, pass_hat_k])
def test_k_larger_than_n_is_an_error_not_a_number(metric) -> None:
    with pytest.raises(MetricError, match="k=5"):
        metric(4, 2, 5)


def test_strict_k_larger_than_n_is_an_error() -> None:
    with pytest.raises(MetricError):
        pass_hat_k_strict([True, True], 3)


@pytest.mark.parametrize("k", [0, -1])
@pytest.mark.parametrize("metric", [pass_at_k, pass_hat_k])
def test_k_below_one_is_an_error(metric, k) -> None:
    with pytest.raises(MetricError, match="at least 1"):
        metric(4, 2, k)


def test_strict_k_below_one_is_an_error() -> None:
    with pytest.raises(MetricError, match="at least 1"):
        pass_hat_k_strict([True], 0)


@pytest.mark.parametrize("c", [-1, 5])
def test_passes_outside_zero_to_n_are_an_error(c) -> None:
    with pytest.raises(MetricError):
        pass_hat_k(4, c, 1)
    with pytest.raises(MetricError):
        pass_at_k(4, c, 1)


def test_check_k_names_the_task_with_too_few_trials() -> None:
    tasks = [TaskTrials("enough", (True,) * 5), TaskTrials("short-task", (True, False))]
    with pytest.raises(MetricError, match="'short-task' has 2"):
        check_k(tasks, [1, 3])


def test_check_k_accepts_k_up_to_the_smallest_n() -> None:
    tasks = [TaskTrials("a", (True,) * 5), TaskTrials("b", (True, False, True))]
    check_k(tasks, [1, 2, 3])  # the smallest n is 3


def test_summarize_refuses_k_larger_than_some_task_n() -> None:
    tasks = [TaskTrials("a", (True,) * 4), TaskTrials("b", (True, True))]
    with pytest.raises(MetricError, match="'b'"):
        summarize(tasks, [4])


def test_summarize_of_no_tasks_is_an_error() -> None:
    with pytest.raises(MetricError, match="no tasks"):
        summarize([], [1])


# ---------------------------------------------------------------- properties


@st.composite
def n_c_k(draw: st.DrawFn) -> tuple[int, int, int]:
    n = draw(st.integers(1, 40))
    c = draw(st.integers(0, n))
    k = draw(st.integers(1, n))
    return n, c, k


@given(n_c_k())
def test_pass_hat_k_never_exceeds_pass_at_1_nor_pass_at_k(nck: tuple[int, int, int]) -> None:
    n, c, k = nck
    eps = 1e-12
    hat = pass_hat_k(n, c, k)
    at = pass_at_k(n, c, k)
    assert -eps <= hat <= c / n + eps
    assert c / n - eps <= at <= 1.0 + eps


@given(n_c_k())
def test_k_of_one_gives_the_pass_rate(nck: tuple[int, int, int]) -> None:
    n, c, _ = nck
    assert pass_hat_k(n, c, 1) == pytest.approx(c / n)
    assert pass_at_k(n, c, 1) == pytest.approx(c / n)


@given(st.integers(2, 40).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n))))
def test_pass_hat_k_falls_and_pass_at_k_rises_as_k_grows(nc: tuple[int, int]) -> None:
    n, c = nc
    eps = 1e-12
    for k in range(1, n):
        assert pass_hat_k(n, c, k + 1) <= pass_hat_k(n, c, k) + eps
        assert pass_at_k(n, c, k + 1) >= pass_at_k(n, c, k) - eps


@given(st.lists(st.booleans(), min_size=1, max_size=20), st.data())
def test_strict_pass_hat_k_is_one_exactly_when_the_first_k_trials_passed(
    outcomes: list[bool], data: st.DataObject
) -> None:
    k = data.draw(st.integers(1, len(outcomes)))
    strict = pass_hat_k_strict(outcomes, k)
    assert strict in (0.0, 1.0)
    assert strict == (1.0 if all(outcomes[:k]) else 0.0)


@st.composite
def task_lists(draw: st.DrawFn) -> tuple[list[TaskTrials], list[int]]:
    count = draw(st.integers(1, 8))
    tasks = [
        TaskTrials(f"t{i}", tuple(draw(st.lists(st.booleans(), min_size=1, max_size=10))))
        for i in range(count)
    ]
    smallest = min(t.n for t in tasks)
    ks = draw(st.lists(st.integers(1, smallest), min_size=1, max_size=4, unique=True))
    return tasks, sorted(ks)


@given(task_lists())
def test_summary_keeps_pass_hat_k_below_pass_at_1_below_pass_at_k(
    case: tuple[list[TaskTrials], list[int]],
) -> None:
    tasks, ks = case
    out = summarize(tasks, ks)
    eps = 1e-12
    assert out["pass@1"] == pytest.approx(sum(t.c / t.n for t in tasks) / len(tasks))
    previous_hat, previous_at = out["pass@1"], out["pass@1"]
    for k in ks:
        assert -eps <= out[f"pass^{k}"] <= out["pass@1"] + eps
        assert out["pass@1"] - eps <= out[f"pass@{k}"] <= 1.0 + eps
        assert out[f"reliability_tax@{k}"] == pytest.approx(out["pass@1"] - out[f"pass^{k}"])
        assert out[f"reliability_tax@{k}"] >= -eps
        # ks are sorted, so the metrics move monotonically
        assert out[f"pass^{k}"] <= previous_hat + eps
        assert out[f"pass@{k}"] >= previous_at - eps
        previous_hat, previous_at = out[f"pass^{k}"], out[f"pass@{k}"]
    if 1 in ks:
        assert out["pass^1"] == pytest.approx(out["pass@1"])
