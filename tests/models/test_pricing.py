"""The price table: exact names, dated snapshots of a priced model, and nothing else."""

from __future__ import annotations

import pytest

from toolproof.models.base import Usage
from toolproof.models.pricing import PriceTable
from toolproof.spec.model_settings import Price


@pytest.mark.parametrize(
    ("model", "priced_as"),
    [
        ("openai/gpt-4o", "openai/gpt-4o"),
        ("openai/gpt-4o-2024-08-06", "openai/gpt-4o"),
        ("anthropic/claude-sonnet-4-5-20250929", "anthropic/claude-sonnet-4-5"),
        ("anthropic/claude-sonnet-4-latest", "anthropic/claude-sonnet-4"),
    ],
)
def test_a_model_or_its_dated_snapshot_takes_the_price(model: str, priced_as: str) -> None:
    table = PriceTable()
    assert table.price(model) == table.prices[priced_as]


@pytest.mark.parametrize(
    "model",
    [
        "anthropic/claude-opus-4-8",  # a newer version, not a snapshot of claude-opus-4
        "anthropic/claude-sonnet-4-6",
        "openai/gpt-4o-mini-tts",
        "openai/gpt-5-6",
        "openai-compatible/kimi-k3",
    ],
)
def test_any_other_name_is_unpriced_never_an_older_model_s_price(model: str) -> None:
    table = PriceTable()
    assert table.price(model) is None
    assert table.cost(model, Usage(input_tokens=1000, output_tokens=100)) is None


def test_an_override_prices_a_new_model() -> None:
    table = PriceTable({"anthropic/claude-opus-4-8": Price(input=5.0, output=25.0)})
    cost = table.cost("anthropic/claude-opus-4-8", Usage(input_tokens=1_000_000, output_tokens=0))
    assert cost == pytest.approx(5.0)
