"""Each metric's compute function, registered against its name: every definition has exactly
one, a misspelt name is an error wherever it is written (registering, computing, reading),
never a metric that was "not measured"."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from rows import trials

import toolproof.metrics.summary  # noqa: F401  (every compute function registered)
from toolproof.metrics.compute import DERIVED, RECORDED, Measured, ModelFacts
from toolproof.metrics.summary import ModelSummary, model_metrics, summarize_run
from toolproof.spec.metrics import CATALOGUE, MetricDef, UnknownMetric


def summarised() -> ModelSummary:
    rows = [*trials("a", "", "PPF"), *trials("b", "", "PPP")]
    return ModelSummary.model_validate(
        {"model": "m", **summarize_run(rows, [], [1, 2])["models"][0]}
    )


def test_every_metric_has_exactly_one_compute_function_where_its_definition_says() -> None:
    for definition in CATALOGUE:
        registry = RECORDED if definition.recorded else DERIVED
        computation = registry.computation(definition.name)
        assert computation is not None, definition.name
        assert definition in computation.definitions
        other = DERIVED if definition.recorded else RECORDED
        assert other.computation(definition.name) is None, definition.name


def test_registering_a_name_the_catalogue_does_not_define_is_an_error() -> None:
    def nothing(facts: ModelFacts) -> Measured:
        return Measured()

    with pytest.raises(UnknownMetric, match="recovery_rat"):
        RECORDED.register("recovery_rat")(nothing)
    with pytest.raises(ValueError, match="already has a compute function"):
        RECORDED.register("recovery_rate")(nothing)
    with pytest.raises(ValueError, match="recorded: register it there"):
        DERIVED.register("loop_rate")(nothing)


@pytest.fixture
def defined() -> Iterator[MetricDef]:
    """A metric defined for one test, and taken out again with any compute function."""
    definition = CATALOGUE.define(
        MetricDef("answers_per_trial", "answers", "higher", "calls", "economics")
    )
    try:
        yield definition
    finally:
        if RECORDED.computation(definition.name) is not None:
            RECORDED.unregister(definition.name)
        CATALOGUE.undefine(definition.name)


def test_a_compute_function_returning_a_misspelt_name_is_an_error(defined: MetricDef) -> None:
    @RECORDED.register(defined.name)
    def misspelt(facts: ModelFacts) -> Measured:
        return Measured({"answer_per_trial": 1.0})

    with pytest.raises(UnknownMetric, match="misspelt computed 'answer_per_trial'"):
        summarised()


def test_a_compute_function_returning_another_metric_is_an_error(defined: MetricDef) -> None:
    @RECORDED.register(defined.name)
    def other(facts: ModelFacts) -> Measured:
        return Measured({"loop_rate": 1.0})

    with pytest.raises(UnknownMetric, match="not registered for"):
        summarised()


def test_a_metric_registered_is_computed_in_the_catalogues_order(defined: MetricDef) -> None:
    @RECORDED.register(defined.name)
    def answers(facts: ModelFacts) -> Measured:
        return Measured({defined.name: float(len(facts.rows))})

    entry = summarised()
    assert entry.metrics[defined.name] == 6.0
    assert list(entry.metrics.names())[-1] == defined.name  # defined last: computed last
    assert model_metrics(entry)[defined.name] == 6.0


def test_reading_a_misspelt_metric_is_an_error_never_not_measured() -> None:
    entry = summarised()
    with pytest.raises(UnknownMetric):
        entry.metrics.get("recovery_rat")
    with pytest.raises(UnknownMetric):
        _ = "pass^" in entry.ci
    with pytest.raises(UnknownMetric):
        entry.tasks[0].metrics["latency_p95"]
    # a metric the run did not measure, or a k it did not compute, is null or absent
    assert entry.metrics.get("drift_robustness") is None and "drift_robustness" in entry.metrics
    assert entry.metrics.get("pass^7") is None and "pass^7" not in entry.metrics
    assert entry.metrics["pass^2"] == pytest.approx((1 / 3 + 1) / 2)


def test_a_misspelt_name_in_a_summary_read_back_is_an_error() -> None:
    data = summarised().model_dump()
    data["metrics"]["recovery_rat"] = 0.5
    with pytest.raises(ValueError, match="unknown metric 'recovery_rat'"):
        ModelSummary.model_validate(data)
