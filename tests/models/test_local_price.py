"""A model run in process costs nothing: $0, never "unpriced", whatever file it loads."""

from __future__ import annotations

from toolproof.models.base import Usage
from toolproof.models.pricing import PriceTable


def test_every_local_model_costs_nothing_rather_than_being_unpriced() -> None:
    usage = Usage(input_tokens=1200, output_tokens=80)
    table = PriceTable()
    assert table.cost("local/smollm2", usage) == 0.0
    assert table.cost("local/models/qwen2.5-0.5b-instruct-q4.gguf", usage) == 0.0
    assert table.cost("openai-compatible/some-unknown-model", usage) is None
