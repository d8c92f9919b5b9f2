"""drift_robustness, completion_under_load and load_level_stats against hand-computed values."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolproof.errors import MetricError
from toolproof.metrics.load import completion_under_load, drift_robustness, load_level_stats

# ---------------------------------------------------------------- schema drift


def test_drift_robustness_is_the_mean_of_the_variants_and_its_ratio_to_clean() -> None:
    result = drift_robustness(0.8, {"renamed-fields": 0.6, "split-tools": 0.4})
    # mean (0.6 + 0.4) / 2 = 0.5; ratio 0.5 / 0.8 = 0.625
    assert result["drift_robustness"] == pytest.approx(0.5)
    assert result["ratio_to_clean"] == pytest.approx(0.625)
    assert result["clean_pass_rate"] == 0.8
    assert result["variants"] == {
        "renamed-fields": {"pass_rate": 0.6, "ratio_to_clean": pytest.approx(0.75)},
        "split-tools": {"pass_rate": 0.4, "ratio_to_clean": pytest.approx(0.5)},
    }


@pytest.mark.parametrize("clean", [0.0, None])
def test_no_ratio_without_a_clean_pass_rate(clean: float | None) -> None:
    result = drift_robustness(clean, {"v": 0.5})
    assert result["drift_robustness"] == 0.5
    assert result["ratio_to_clean"] is None
    assert result["variants"]["v"]["ratio_to_clean"] is None


def test_no_variants_means_drift_not_measured() -> None:
    result = drift_robustness(0.9, {})
    assert result["drift_robustness"] is None
    assert result["ratio_to_clean"] is None
    assert result["variants"] == {}


def test_drift_ratio_is_not_capped_at_one() -> None:
    # 0.6 / 0.5 = 1.2: the variant did better than the clean run; shown as measured
    assert drift_robustness(0.5, {"v": 0.6})["ratio_to_clean"] == pytest.approx(1.2)


@pytest.mark.parametrize("bad", [-0.1, 1.5, float("nan")])
def test_drift_rates_outside_zero_one_are_errors(bad: float) -> None:
    with pytest.raises(MetricError):
        drift_robustness(0.5, {"v": bad})
    with pytest.raises(MetricError):
        drift_robustness(bad, {"v": 0.5})


# ---------------------------------------------------------------- completion under load


def test_completion_under_load_is_the_peak_rate_and_its_ratio_to_level_one() -> None:
    result = completion_under_load({50: 0.4, 1: 0.8, 10: 0.7}, peak=50)
    # 0.4 at the peak; 0.4 / 0.8 = 0.5
    assert result["completion_under_load"] == 0.4
    assert result["ratio_to_baseline"] == pytest.approx(0.5)
    assert result["baseline"] == 1
    assert result["baseline_pass_rate"] == 0.8
    assert list(result["levels"]) == [1, 10, 50]


def test_without_level_one_the_lowest_level_is_the_baseline() -> None:
    result = completion_under_load({10: 0.8, 50: 0.6}, peak=50)
    # 0.6 / 0.8 = 0.75
    assert result["baseline"] == 10
    assert result["ratio_to_baseline"] == pytest.approx(0.75)


def test_peak_at_the_baseline_has_ratio_one() -> None:
    assert completion_under_load({1: 0.7}, peak=1)["ratio_to_baseline"] == 1.0


def test_zero_baseline_has_no_ratio() -> None:
    result = completion_under_load({1: 0.0, 10: 0.2}, peak=10)
    assert result["completion_under_load"] == 0.2
    assert result["ratio_to_baseline"] is None


def test_unmeasured_peak_is_an_error() -> None:
    with pytest.raises(MetricError, match="peak load level 200"):
        completion_under_load({1: 0.8, 50: 0.6}, peak=200)
    with pytest.raises(MetricError):
        completion_under_load({}, peak=1)


# ---------------------------------------------------------------- one load level


def _row(
    outcome: str, started_at: str, duration_s: float, tool_calls: int, tool_errors: int
) -> dict[str, Any]:
    return {
        "outcome": outcome,
        "started_at": started_at,
        "duration_s": duration_s,
        "tool_calls": tool_calls,
        "tool_errors": tool_errors,
    }


ROWS = [
    _row("passed", "2025-03-01T12:00:00.000+00:00", 60.0, 4, 1),
    _row("failed", "2025-03-01T12:00:30.000+00:00", 30.0, 2, 0),
    _row("infra_error", "2025-03-01T12:01:00.000+00:00", 90.0, 6, 2),
]


def test_load_level_stats_by_hand() -> None:
    stats = load_level_stats(ROWS)
    # ends: 12:01:00, 12:01:00, 12:02:30 -> window 12:00:00..12:02:30 = 150 s = 2.5 min
    # throughput 3 / 2.5 = 1.2 trials per minute
    assert stats["throughput_per_min"] == pytest.approx(1.2)
    # durations sorted 30, 60, 90; nearest rank p50 = ceil(1.5) = 2nd, p95 = ceil(2.85) = 3rd
    assert stats["trial_latency_p50_s"] == 60.0
    assert stats["trial_latency_p95_s"] == 90.0
    # tool errors (1 + 0 + 2) / tool calls (4 + 2 + 6) = 3 / 12
    assert stats["tool_calls"] == 12
    assert stats["tool_errors"] == 3
    assert stats["tool_error_rate"] == pytest.approx(0.25)
    # infra errors fail by default: 1 passed / 3
    assert stats["pass_rate"] == pytest.approx(1 / 3)
    assert stats["trials"] == 3
    assert stats["infra_error"] == 1


def test_excluding_infra_errors_changes_only_the_pass_rate() -> None:
    fail, exclude = load_level_stats(ROWS), load_level_stats(ROWS, infra="exclude")
    # 1 passed / 2 trials that were not infra errors
    assert exclude["pass_rate"] == pytest.approx(1 / 2)
    assert {k: v for k, v in fail.items() if k != "pass_rate"} == {
        k: v for k, v in exclude.items() if k != "pass_rate"
    }


def test_time_zones_are_honoured_and_z_is_utc() -> None:
    rows = [
        _row("passed", "2025-03-01T12:00:00Z", 30.0, 1, 0),
        # 13:00:30+01:00 is 12:00:30 UTC; ends at 12:01:00 -> window 60 s
        _row("passed", "2025-03-01T13:00:30+01:00", 30.0, 1, 0),
    ]
    assert load_level_stats(rows)["throughput_per_min"] == pytest.approx(2.0)


def test_times_without_a_zone_are_read_as_utc() -> None:
    rows = [
        _row("passed", "2025-03-01T12:00:00", 30.0, 1, 0),
        _row("passed", "2025-03-01T12:00:30+00:00", 30.0, 1, 0),
    ]
    assert load_level_stats(rows)["throughput_per_min"] == pytest.approx(2.0)


def test_empty_level_measures_nothing() -> None:
    stats = load_level_stats([])
    assert stats["trials"] == 0
    for name in (
        "pass_rate",
        "throughput_per_min",
        "trial_latency_p50_s",
        "trial_latency_p95_s",
        "tool_error_rate",
    ):
        assert stats[name] is None


def test_no_tool_calls_no_error_rate_and_zero_window_no_throughput() -> None:
    stats = load_level_stats([_row("passed", "2025-03-01T12:00:00Z", 0.0, 0, 0)])
    assert stats["tool_error_rate"] is None
    assert stats["throughput_per_min"] is None
    assert stats["pass_rate"] == 1.0


def test_only_infra_errors_excluded_leaves_no_pass_rate() -> None:
    rows = [_row("infra_error", "2025-03-01T12:00:00Z", 10.0, 1, 1)]
    assert load_level_stats(rows, infra="exclude")["pass_rate"] is None
    assert load_level_stats(rows)["pass_rate"] == 0.0


def test_bad_rows_are_errors() -> None:
    with pytest.raises(MetricError, match="ISO-8601"):
        load_level_stats([_row("passed", "yesterday", 1.0, 1, 0)])
    with pytest.raises(MetricError, match="tool errors"):
        load_level_stats([_row("passed", "2025-03-01T12:00:00Z", 1.0, 1, 2)])


@settings(max_examples=50, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["passed", "failed", "infra_error"]),
            st.integers(0, 3599),
            st.floats(0.1, 600),
            st.integers(0, 20),
        ),
        min_size=1,
        max_size=10,
    )
)
def test_throughput_never_exceeds_trials_over_longest_trial(
    specs: list[tuple[str, int, float, int]],
) -> None:
    rows = [
        _row(o, f"2025-03-01T12:{s // 60:02d}:{s % 60:02d}Z", d, c, c // 2) for o, s, d, c in specs
    ]
    stats = load_level_stats(rows)
    # the window is at least as long as the longest trial
    longest = max(d for _, _, d, _ in specs)
    assert stats["throughput_per_min"] <= len(rows) / (longest / 60) * (1 + 1e-9)
    assert 0.0 <= stats["pass_rate"] <= 1.0
    assert stats["trial_latency_p50_s"] <= stats["trial_latency_p95_s"]
