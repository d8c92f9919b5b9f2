"""The metric catalogue: one definition per metric, a concrete name read back to its
definition and parameters, a misspelt name refused, the gate's grammar and the score's
default weights taken from it; and a variant's key read in one place."""

from __future__ import annotations

import pytest

from toolproof.spec.conditions import ScoreSpec
from toolproof.spec.gate import GateSpec, check_metric, k_of
from toolproof.spec.metrics import (
    CATALOGUE,
    PASS_HAT,
    RATIO_TO_CLEAN,
    RECOVERY_RATE,
    MetricDef,
    UnknownMetric,
)
from toolproof.spec.variants import VariantKey

EXAMPLE = {"k": "3", "persona": "terse", "turns": "8"}
read = CATALOGUE.read


def test_every_definition_reads_back_from_a_name_of_its_own() -> None:
    for definition in CATALOGUE:
        params = {name: EXAMPLE[name] for name in definition.params}
        name = definition.at(**params)
        named = read(name)
        assert named.definition is definition, name
        assert dict(named.params) == params


def test_a_family_reads_its_parameters() -> None:
    assert read("pass^12").k == 12
    assert read("persona.topic-switcher.pass^2").params == {"persona": "topic-switcher", "k": "2"}
    assert read("checkpoint.25.pass@1").params == {"turns": "25"} and read("cost_usd").k is None
    assert PASS_HAT.generic == "pass^k" and PASS_HAT.grammar == "pass^K"


@pytest.mark.parametrize(
    "name",
    ["recovery_rat", "pass^0", "pass^k", "pass@", "persona.Terse.pass@1", "checkpoint.x.pass@1"],
)
def test_a_name_the_catalogue_does_not_define_is_an_error(name: str) -> None:
    with pytest.raises(UnknownMetric, match="unknown metric"):
        read(name)


def test_a_metric_is_defined_once_and_never_as_a_member_of_a_family() -> None:
    with pytest.raises(ValueError, match="already defined"):
        CATALOGUE.define(MetricDef("recovery_rate", "again", "higher", "share", "conditions"))
    with pytest.raises(ValueError, match="already defined"):
        CATALOGUE.define(MetricDef("pass^7", "one of a family", "higher", "share", "pass"))
    with pytest.raises(ValueError, match="unknown parameter"):
        MetricDef("rate@{level}", "a parameter no grammar knows", "higher", "share", "pass")


def test_a_definition_added_is_read_and_taken_out_again() -> None:
    added = CATALOGUE.define(MetricDef("answers_per_trial", "answers", "higher", "calls", "pass"))
    try:
        assert read("answers_per_trial").definition is added
        assert list(CATALOGUE)[-1] is added
    finally:
        CATALOGUE.undefine("answers_per_trial")
    with pytest.raises(UnknownMetric):
        read("answers_per_trial")


def test_the_gate_grammar_is_the_catalogues_gateable_names() -> None:
    for definition in CATALOGUE:
        name = definition.at(**{p: EXAMPLE[p] for p in definition.params})
        if definition.gateable:
            assert check_metric(name) == name
        else:
            with pytest.raises(ValueError, match="is shown, not gated"):
                check_metric(name)
    assert not RATIO_TO_CLEAN.gateable and k_of("checkpoint.8.pass^3") == 3
    assert GateSpec(min={"pass^5": 0.8, "cost_usd": 1.0}).ks() == [5]


def test_the_unknown_name_error_lists_the_grammar_in_words() -> None:
    with pytest.raises(ValueError) as caught:
        check_metric("recovery_rat")
    assert str(caught.value) == (
        "unknown metric 'recovery_rat'; use pass@K, pass^K, pass^K_strict, reliability_tax@K, "
        "persona.NAME.(pass@1|pass^K|recovery_turns), checkpoint.N.(pass@1|pass^K) or "
        "checkpoint_degradation, completion_under_load, corrective_action, cost_per_pass_usd, "
        "cost_per_task_usd, cost_usd, drift_robustness, infra_error_share, latency_p50_s, "
        "latency_p95_s, loop_rate, policy_adherence, recovery_rate, reliability_score, "
        "tokens_input, tokens_output, tool_calls_per_trial, trial_latency_p50_s, "
        "trial_latency_p95_s, turns_per_trial, user_cost_usd"
    )


def test_the_score_s_parts_and_default_weights_come_from_the_catalogue() -> None:
    weights = CATALOGUE.default_weights()
    assert weights == {
        "pass^k": 0.4,
        "recovery_rate": 0.3,
        "completion_under_load": 0.2,
        "drift_robustness": 0.1,
    }
    assert ScoreSpec().weights == weights
    assert [part.under for part in CATALOGUE.score_parts()] == [None, "faults", "load", "drift"]
    assert RECOVERY_RATE.score_weight == 0.3 and not RECOVERY_RATE.imported


def test_a_surface_lists_its_metrics_group_by_group() -> None:
    shown = [d.name for d in CATALOGUE.where("compare", ("score", "outcomes"))]
    assert shown == ["reliability_score", "infra_error_share"]


def test_a_variant_key_is_read_and_written_in_one_place() -> None:
    key = VariantKey.parse("faults:production+drift:v2+load:20+persona:terse+turns:8")
    assert (key.faults, key.drift, key.load, key.persona, key.turns) == (
        "production",
        "v2",
        20,
        "terse",
        8,
    )
    assert key.key == "faults:production+drift:v2+load:20+persona:terse+turns:8"
    assert key.without("persona", "turns").key == "faults:production+drift:v2+load:20"
    assert key.kinds() == {"faults", "drift", "load", "persona", "turns"}
    assert VariantKey.parse("drift:v2").only("drift")
    assert not VariantKey.parse("drift:v2+load:3").only("drift")
    assert VariantKey.parse("").key == "" and VariantKey.parse("").kinds() == set()
    assert VariantKey.parse("later:x+load:3") == VariantKey(load=3)
