"""The price table: dollars per million tokens, per model, for the cost estimates.

One table, overridable from the user config file (``[prices."model-name"]``
with any of ``input``, ``output``, ``cache_write``, ``cache_write_1h``,
``cache_read``). A model with no price here (or a price override) shows its
tokens only: we never guess a price.

SOURCE (Anthropic): https://platform.claude.com/docs/en/about-claude/pricing
("Model pricing": base input, 5m and 1h cache writes, cache hits, output),
read on PRICES_DATE. SOURCE (OpenAI): https://openai.com/api/pricing/
(input, cached input, output), read on PRICES_DATE. OpenAI bills no cache
writes: a write is priced as plain input.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, fields
from typing import Any, Mapping

log = logging.getLogger(__name__)

PRICES_DATE = "2026-11-23"
"""The day the table below was read from the sources named in the module docstring."""
PRICES_SOURCE = "platform.claude.com/docs/en/about-claude/pricing; openai.com/api/pricing"


@dataclass(frozen=True)
class Price:
    """US dollars per million tokens of each kind."""

    input: float
    output: float
    cache_write: float
    """5-minute cache writes (Anthropic: 1.25x input; OpenAI: plain input)."""
    cache_read: float
    cache_write_1h: float = 0.0
    """1-hour cache writes (Anthropic: 2x input); 0 means the same as ``cache_write``."""


def _anthropic(base: float, output: float) -> Price:
    # The documented multipliers: 5m write 1.25x, 1h write 2x, read 0.1x of base input.
    return Price(input=base, output=output, cache_write=round(base * 1.25, 4), cache_read=round(base * 0.1, 4), cache_write_1h=base * 2)


def _openai(base: float, cached: float, output: float) -> Price:
    return Price(input=base, output=output, cache_write=base, cache_read=cached)


PRICES: dict[str, Price] = {
    # Anthropic, by model id prefix (dated snapshots such as claude-sonnet-4-5-20250929 match too).
    "claude-opus-4-5": _anthropic(5.0, 25.0),
    "claude-opus-4-1": _anthropic(15.0, 75.0),
    "claude-opus-4": _anthropic(15.0, 75.0),
    "claude-sonnet-4-5": _anthropic(3.0, 15.0),
    "claude-sonnet-4": _anthropic(3.0, 15.0),
    "claude-3-7-sonnet": _anthropic(3.0, 15.0),
    "claude-haiku-4-5": _anthropic(1.0, 5.0),
    "claude-3-5-haiku": _anthropic(0.8, 4.0),
    "claude-3-haiku": _anthropic(0.25, 1.25),
    # OpenAI
    "gpt-4o-mini": _openai(0.15, 0.075, 0.60),
    "gpt-4o": _openai(2.50, 1.25, 10.0),
    "gpt-4.1-nano": _openai(0.10, 0.025, 0.40),
    "gpt-4.1-mini": _openai(0.40, 0.10, 1.60),
    "gpt-4.1": _openai(2.0, 0.50, 8.0),
    "gpt-5-nano": _openai(0.05, 0.005, 0.40),
    "gpt-5-mini": _openai(0.25, 0.025, 2.0),
    "gpt-5": _openai(1.25, 0.125, 10.0),
    "o4-mini": _openai(1.10, 0.275, 4.40),
}


class PriceTable:
    """Looks prices up by model name; overrides (from config) win over the built-in table."""

    def __init__(self, overrides: Mapping[str, Mapping[str, Any]] | None = None) -> None:
        self.prices: dict[str, Price] = dict(PRICES)
        self._found: dict[str, Price | None] = {}
        for model, values in (overrides or {}).items():
            price = _price_from(model, values)
            if price is not None:
                self.prices[model] = price

    def price_for(self, model: str) -> Price | None:
        """The price of ``model`` (exact name, else the longest known prefix), or None when unknown."""
        if model not in self._found:
            matches = [key for key in self.prices if model == key or model.startswith(key + "-") or model.startswith(key + "@")]
            self._found[model] = self.prices[max(matches, key=len)] if matches else None
        return self._found[model]


def _price_from(model: str, values: Any) -> Price | None:
    """A Price from a config table, or None (with a log line) when it is not usable."""
    if not isinstance(values, Mapping):
        log.warning("ignoring the price of %s: expected a table of numbers", model)
        return None
    known = {f.name for f in fields(Price)}
    try:
        numbers = {k: float(v) for k, v in values.items() if k in known}
    except (TypeError, ValueError):
        log.warning("ignoring the price of %s: every value must be a number", model)
        return None
    if "input" not in numbers or "output" not in numbers or any(v < 0 for v in numbers.values()):
        log.warning("ignoring the price of %s: input and output are required and prices cannot be negative", model)
        return None
    numbers.setdefault("cache_write", numbers["input"])
    numbers.setdefault("cache_read", numbers["input"])
    return Price(**numbers)
