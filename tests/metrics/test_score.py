"""reliability_score: renormalised weights over measured components, missing ones shown."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolproof.errors import MetricError
from toolproof.metrics.score import part_names, reliability_score

COMPONENTS = part_names()

WEIGHTS = {
    "pass^k": 0.4,
    "recovery_rate": 0.3,
    "completion_under_load": 0.2,
    "drift_robustness": 0.1,
}


def test_every_component_measured() -> None:
    result = reliability_score(
        {
            "pass^k": 0.5,
            "recovery_rate": 0.8,
            "completion_under_load": 0.6,
            "drift_robustness": 1.0,
        },
        WEIGHTS,
    )
    # 0.4*0.5 + 0.3*0.8 + 0.2*0.6 + 0.1*1.0 = 0.2 + 0.24 + 0.12 + 0.1 = 0.66
    assert result["reliability_score"] == pytest.approx(0.66)
    assert result["missing"] == []
    assert result["weights_used"] == pytest.approx(WEIGHTS)


def test_only_pass_hat_k_and_recovery_measured_renormalises() -> None:
    result = reliability_score(
        {
            "pass^k": 0.6,
            "recovery_rate": 0.9,
            "completion_under_load": None,
            "drift_robustness": None,
        },
        WEIGHTS,
    )
    # used weights 0.4 / 0.7 = 0.5714..., 0.3 / 0.7 = 0.4285...
    assert result["weights_used"] == pytest.approx({"pass^k": 4 / 7, "recovery_rate": 3 / 7})
    # (0.4*0.6 + 0.3*0.9) / 0.7 = (0.24 + 0.27) / 0.7 = 0.51 / 0.7
    assert result["reliability_score"] == pytest.approx(0.51 / 0.7)
    assert result["missing"] == ["completion_under_load", "drift_robustness"]
    assert result["weights"] == WEIGHTS
    assert result["components"] == {
        "pass^k": 0.6,
        "recovery_rate": 0.9,
        "completion_under_load": None,
        "drift_robustness": None,
    }


def test_a_component_left_out_of_the_mapping_is_missing() -> None:
    result = reliability_score({"pass^k": 0.6}, WEIGHTS)
    assert result["missing"] == ["recovery_rate", "completion_under_load", "drift_robustness"]
    assert result["components"]["recovery_rate"] is None
    assert result["reliability_score"] == 0.6
    assert result["weights_used"] == {"pass^k": 1.0}


def test_nothing_measured_gives_no_score() -> None:
    result = reliability_score({name: None for name in COMPONENTS}, WEIGHTS)
    assert result["reliability_score"] is None
    assert result["weights_used"] == {}
    assert result["missing"] == list(WEIGHTS)


def test_a_measured_zero_counts_as_zero_not_as_missing() -> None:
    result = reliability_score({"pass^k": 0.0, "recovery_rate": 1.0}, WEIGHTS)
    # (0.4*0 + 0.3*1) / 0.7 = 3/7
    assert result["reliability_score"] == pytest.approx(3 / 7)
    assert "pass^k" not in result["missing"]


def test_weights_need_not_sum_to_one() -> None:
    result = reliability_score(
        {"pass^k": 0.2, "recovery_rate": 0.6}, {"pass^k": 2.0, "recovery_rate": 2.0}
    )
    # (2*0.2 + 2*0.6) / 4 = 0.4
    assert result["reliability_score"] == pytest.approx(0.4)
    assert result["weights_used"] == {"pass^k": 0.5, "recovery_rate": 0.5}


def test_only_the_weighted_components_are_scored() -> None:
    result = reliability_score({"pass^k": 0.7}, {"pass^k": 1.0})
    assert result["components"] == {"pass^k": 0.7}
    assert result["missing"] == []
    assert result["reliability_score"] == 0.7


def test_measured_components_of_weight_zero_give_no_score() -> None:
    result = reliability_score(
        {"pass^k": None, "recovery_rate": 0.5}, {"pass^k": 1.0, "recovery_rate": 0.0}
    )
    # Σ w_i over measured components is 0: no weighted mean exists
    assert result["reliability_score"] is None
    assert result["missing"] == ["pass^k"]


def test_a_zero_weight_component_does_not_move_the_score() -> None:
    result = reliability_score(
        {"pass^k": 0.5, "recovery_rate": 0.0}, {"pass^k": 1.0, "recovery_rate": 0.0}
    )
    assert result["reliability_score"] == 0.5
    assert result["weights_used"] == {"pass^k": 1.0, "recovery_rate": 0.0}


@pytest.mark.parametrize(
    ("components", "weights", "match"),
    [
        ({"pass^k": 0.5}, {"pass@k": 1.0}, "unknown score components"),
        ({"pass^1": 0.5}, WEIGHTS, "unknown score components"),
        ({"pass^k": 0.5, "recovery_rate": 0.5}, {"pass^k": 1.0}, "without a weight"),
        ({"pass^k": 1.5}, WEIGHTS, "between 0 and 1"),
        ({"pass^k": -0.1}, WEIGHTS, "between 0 and 1"),
        ({"pass^k": float("nan")}, WEIGHTS, "between 0 and 1"),
        ({"pass^k": 0.5}, {"pass^k": -1.0}, "non-negative"),
        ({"pass^k": 0.5}, {"pass^k": float("inf")}, "non-negative"),
    ],
)
def test_bad_input_is_an_error(
    components: dict[str, float | None], weights: dict[str, float], match: str
) -> None:
    with pytest.raises(MetricError, match=match):
        reliability_score(components, weights)


# ---------------------------------------------------------------- properties

VALUES = st.one_of(st.none(), st.floats(0.0, 1.0))
POSITIVE = st.floats(0.01, 10.0)


@settings(max_examples=200, deadline=None)
@given(
    st.fixed_dictionaries({name: VALUES for name in COMPONENTS}),
    st.fixed_dictionaries({name: POSITIVE for name in COMPONENTS}),
)
def test_score_lies_within_the_measured_components(
    components: dict[str, float | None], weights: dict[str, float]
) -> None:
    result = reliability_score(components, weights)
    measured = [v for v in components.values() if v is not None]
    if not measured:
        assert result["reliability_score"] is None
        return
    assert min(measured) <= result["reliability_score"] <= max(measured)
    assert sum(result["weights_used"].values()) == pytest.approx(1.0)
    assert sorted(result["weights_used"]) == sorted(
        name for name, v in components.items() if v is not None
    )
    assert result["missing"] == [name for name in COMPONENTS if components[name] is None]


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(COMPONENTS), st.floats(0.0, 1.0), POSITIVE)
def test_a_single_measured_component_is_the_score(name: str, value: float, weight: float) -> None:
    components: dict[str, float | None] = {other: None for other in COMPONENTS}
    components[name] = value
    result = reliability_score(components, {**WEIGHTS, name: weight})
    assert result["reliability_score"] == value
    assert result["weights_used"] == {name: 1.0}


@settings(max_examples=100, deadline=None)
@given(
    st.fixed_dictionaries({name: VALUES for name in COMPONENTS}),
    st.fixed_dictionaries({name: POSITIVE for name in COMPONENTS}),
    st.floats(0.1, 10.0),
)
def test_scaling_every_weight_does_not_change_the_score(
    components: dict[str, float | None], weights: dict[str, float], factor: float
) -> None:
    scaled = {name: w * factor for name, w in weights.items()}
    a = reliability_score(components, weights)["reliability_score"]
    b = reliability_score(components, scaled)["reliability_score"]
    assert (a is None) == (b is None)
    if a is not None:
        assert a == pytest.approx(b)
