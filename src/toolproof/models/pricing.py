"""Prices in USD per million tokens, bundled for common models and overridable.

Bundled prices are list prices as published by the providers (input, output, cached input);
they change, so a suite (`prices:`) or the config file can override any of them. A model with
no known price has an unknown cost, shown as such: never as zero.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from toolproof.models.base import Message, ModelClient, ModelResponse, Usage
from toolproof.spec.model_settings import Price
from toolproof.tools.base import ToolSchema


def _p(input: float, output: float, cached: float | None = None) -> Price:
    return Price(input=input, output=output, cached=cached)


BUNDLED: dict[str, Price] = {
    "openai/gpt-4o": _p(2.50, 10.00, 1.25),
    "openai/gpt-4o-mini": _p(0.15, 0.60, 0.075),
    "openai/gpt-4.1": _p(2.00, 8.00, 0.50),
    "openai/gpt-4.1-mini": _p(0.40, 1.60, 0.10),
    "openai/gpt-4.1-nano": _p(0.10, 0.40, 0.025),
    "openai/o3": _p(2.00, 8.00, 0.50),
    "openai/o4-mini": _p(1.10, 4.40, 0.275),
    "openai/gpt-5": _p(1.25, 10.00, 0.125),
    "openai/gpt-5-mini": _p(0.25, 2.00, 0.025),
    "openai/gpt-5-nano": _p(0.05, 0.40, 0.005),
    "anthropic/claude-opus-4": _p(15.00, 75.00, 1.50),
    "anthropic/claude-opus-4-1": _p(15.00, 75.00, 1.50),
    "anthropic/claude-opus-4-5": _p(5.00, 25.00, 0.50),
    "anthropic/claude-sonnet-4": _p(3.00, 15.00, 0.30),
    "anthropic/claude-sonnet-4-5": _p(3.00, 15.00, 0.30),
    "anthropic/claude-haiku-4-5": _p(1.00, 5.00, 0.10),
    "anthropic/claude-3-5-haiku": _p(0.80, 4.00, 0.08),
    "openai-compatible/kimi-k2": _p(0.60, 2.50, 0.15),
    "local/smollm2": _p(0.0, 0.0, 0.0),
}


# A provider's snapshot of a model: `gpt-4o-2024-08-06`, `claude-sonnet-4-5-20250929`.
_SNAPSHOT = re.compile(r"\d{8}|\d{4}-\d{2}-\d{2}|latest")


class PriceTable:
    """Bundled prices with overrides; looks a model up exactly, then as a dated snapshot of a
    priced model. Any other name is unpriced: a newer version (`claude-opus-4-8`) never takes
    an older one's price (`claude-opus-4`)."""

    def __init__(self, overrides: Mapping[str, Price] | None = None) -> None:
        self.prices = {**BUNDLED, **(overrides or {})}
        self._found: dict[str, Price | None] = {}

    def price(self, model: str) -> Price | None:
        """The model's price, looked up once per name: every model call asks for it."""
        if model not in self._found:
            self._found[model] = self._look_up(model)
        return self._found[model]

    def _look_up(self, model: str) -> Price | None:
        if model in self.prices:
            return self.prices[model]
        if model.startswith(("local/", "scripted/")):  # nothing in process costs per token
            return self.prices["local/smollm2"]
        matches = [
            name
            for name in self.prices
            if model.startswith(name + "-") and _SNAPSHOT.fullmatch(model[len(name) + 1 :])
        ]
        return self.prices[max(matches, key=len)] if matches else None

    def cost(self, model: str, usage: Usage) -> float | None:
        """USD for one call; None when the model has no known price."""
        price = self.price(model)
        if price is None:
            return None
        cached = min(usage.cached_tokens, usage.input_tokens)
        cached_rate = price.input if price.cached is None else price.cached
        return (
            (usage.input_tokens - cached) * price.input
            + cached * cached_rate
            + usage.output_tokens * price.output
        ) / 1_000_000


class Metered(ModelClient):
    """Prices every call of an inner client from the table (None when the model is unpriced)."""

    def __init__(self, inner: ModelClient, prices: PriceTable) -> None:
        self.inner = inner
        self.name = inner.name
        self.prices = prices

    async def generate(
        self, messages: list[Message], tools: list[ToolSchema], *, seed: int | None = None
    ) -> ModelResponse:
        response = await self.inner.generate(messages, tools, seed=seed)
        return response.model_copy(update={"cost_usd": self.prices.cost(self.name, response.usage)})
