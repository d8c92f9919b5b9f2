"""A run's model overrides: any setting of a model entry, only the given ones written."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from toolproof.spec.model_settings import ModelEntry
from toolproof.spec.overrides import ModelOverrides


def test_every_setting_of_a_model_entry_can_be_overridden_and_nothing_else() -> None:
    assert set(ModelOverrides.model_fields) == set(ModelEntry.model_fields)
    with pytest.raises(ValidationError, match="trials"):
        ModelOverrides.model_validate({"trials": 3})


def test_only_the_given_settings_are_written_in_the_flags_order() -> None:
    given = ModelOverrides(headers={"X-Team": "7"}, temperature=0, base_url="http://h/v1")
    assert list(given.model_dump().items()) == [
        ("base_url", "http://h/v1"),
        ("temperature", 0),
        ("headers", {"X-Team": "7"}),
    ]
    assert ModelOverrides().model_dump() == {}
    assert ModelOverrides(prompted=False).given() == {"prompted": False}


@pytest.mark.parametrize("value", [float("nan"), float("inf"), True])
def test_a_number_that_is_no_finite_number_is_refused(value: float) -> None:
    with pytest.raises(ValidationError, match="temperature"):
        ModelOverrides(temperature=value)
