"""Dollar cost of a model call from its usage, with a configurable price table.

Defaults are the list prices in ``shared/reference/anthropic-api.md`` (USD per million tokens,
2026-10). Cache writes cost 1.25x the input price (5-minute entries) or 2x (1-hour entries); reads
cost the model's read price (0.1x input for most models).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["DEFAULT_PRICES", "ModelPrice", "PriceTable"]


@dataclass(frozen=True, slots=True)
class ModelPrice:
    """USD per million tokens."""

    input: float
    output: float
    cache_read: float
    cache_write_5m: float
    cache_write_1h: float

    @classmethod
    def standard(cls, input: float, output: float, read_multiplier: float = 0.1) -> ModelPrice:
        return cls(input, output, input * read_multiplier, input * 1.25, input * 2)


DEFAULT_PRICES: Mapping[str, ModelPrice] = {
    "claude-haiku-4-5": ModelPrice.standard(1, 5),
    "claude-sonnet-4-5": ModelPrice.standard(3, 15),
    "claude-sonnet-4-6": ModelPrice.standard(3, 15),
    "claude-opus-4-5": ModelPrice.standard(5, 25),
    "claude-opus-4-6": ModelPrice.standard(5, 25),
    "claude-opus-4-7": ModelPrice.standard(5, 25),
    "claude-opus-4-8": ModelPrice.standard(5, 25),
    "claude-opus-4-1": ModelPrice.standard(15, 75),
    "claude-opus-4": ModelPrice.standard(15, 75),
    "claude-sonnet-5": ModelPrice.standard(2, 10),
    "claude-opus-5": ModelPrice.standard(5, 25),
    "claude-opus-5-5": ModelPrice(4, 20, 0.20, 5, 8),
    "claude-sonnet-5-5": ModelPrice.standard(2, 10),
    "claude-haiku-5-5": ModelPrice(0.10, 0.50, 0.01, 0.125, 0.20),
    "claude-fable-5-1": ModelPrice.standard(10, 50, 0.025),
    "claude-mythos-5-1": ModelPrice.standard(10, 50, 0.025),
}


class PriceTable:
    """Prices by model id. A dated id (``claude-haiku-4-5-20251001``) uses its undated entry."""

    def __init__(self, prices: Mapping[str, ModelPrice] | None = None) -> None:
        self._prices = dict(DEFAULT_PRICES if prices is None else prices)

    def models(self) -> list[str]:
        """The model ids the table knows."""
        return sorted(self._prices)

    def price(self, model: str) -> ModelPrice | None:
        """The model's price, or None when the table does not know it (its cost is then unknown, not 0)."""
        if model in self._prices:
            return self._prices[model]
        head, _, tail = model.rpartition("-")
        if tail.isdigit() and len(tail) == 8:  # a snapshot date
            return self._prices.get(head)
        return None

    def cost(self, model: str, usage: Mapping[str, Any]) -> float | None:
        """Dollars for one call's ``usage`` (the API's usage object as a dict)."""
        price = self.price(model)
        if price is None:
            return None
        created = int(usage.get("cache_creation_input_tokens") or 0)
        detail = usage.get("cache_creation") or {}
        w1h = int(detail.get("ephemeral_1h_input_tokens") or 0) if isinstance(detail, Mapping) else 0
        w5m = created - w1h
        return (
            int(usage.get("input_tokens") or 0) * price.input
            + w5m * price.cache_write_5m
            + w1h * price.cache_write_1h
            + int(usage.get("cache_read_input_tokens") or 0) * price.cache_read
            + int(usage.get("output_tokens") or 0) * price.output
        ) / 1_000_000
