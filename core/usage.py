"""What the provider reported each response cost: tokens by kind, totals, cost, and the budget.

Every response's usage is normalised to four counts (Anthropic's own split):
``input_tokens`` (uncached input), ``cache_write_tokens``, ``cache_read_tokens``
and ``output_tokens``. OpenAI's ``prompt_tokens`` include the cached ones
(``prompt_tokens_details.cached_tokens``), so they are split the same way.
The :class:`UsageLedger` keeps one entry per response, tagged with the user
turn and the model, and answers the totals, the cost, the per-turn and
per-model breakdowns and the cache hit rate; :class:`Budget` says whether the
next step may run.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Iterable, Mapping

from core.pricing import Price, PriceTable

TOKEN_KINDS = ("input_tokens", "cache_write_tokens", "cache_read_tokens", "output_tokens")


@dataclass(frozen=True)
class Usage:
    """Tokens of one response (or a sum of responses), by kind."""

    input_tokens: int = 0
    """Input tokens neither read from nor written to the cache."""
    output_tokens: int = 0
    cache_write_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_1h_tokens: int = 0
    """The part of ``cache_write_tokens`` written with the 1-hour TTL."""

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> "Usage":
        """A Usage from its dict (unknown keys and bad values ignored)."""
        values: dict[str, int] = {}
        for name in cls.__dataclass_fields__:
            raw = (data or {}).get(name)
            if isinstance(raw, (int, float)) and not isinstance(raw, bool) and raw >= 0:
                values[name] = int(raw)
        return cls(**values)

    def as_dict(self) -> dict[str, int]:
        return asdict(self)

    def __add__(self, other: "Usage") -> "Usage":
        return Usage(**{k: getattr(self, k) + getattr(other, k) for k in self.__dataclass_fields__})

    @property
    def prompt_tokens(self) -> int:
        """Every input token the request carried, cached or not."""
        return self.input_tokens + self.cache_write_tokens + self.cache_read_tokens

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.output_tokens

    @property
    def hit_rate(self) -> float:
        """Share of the input tokens read from the cache."""
        return self.cache_read_tokens / self.prompt_tokens if self.prompt_tokens else 0.0

    def cost(self, price: Price | None) -> float | None:
        """Dollars at ``price``; None when the price is unknown."""
        if price is None:
            return None
        write_1h = min(self.cache_write_1h_tokens, self.cache_write_tokens)
        dollars = (
            self.input_tokens * price.input
            + (self.cache_write_tokens - write_1h) * price.cache_write
            + write_1h * (price.cache_write_1h or price.cache_write)
            + self.cache_read_tokens * price.cache_read
            + self.output_tokens * price.output
        )
        return dollars / 1_000_000


@dataclass(frozen=True, kw_only=True, slots=True)
class ContextMeter:
    """How full the next request's context is: the one figure the context pane and the status line show.

    The last response's real prompt tokens plus an estimate of what was added since
    (messages, and picked files not yet sent); before the first response, an
    estimate of everything. ``estimated`` says how much of ``tokens`` is estimated.
    """

    tokens: int
    estimated: int
    window: int

    @property
    def fraction(self) -> float:
        """Share of the window used (0 when no window is known)."""
        return self.tokens / self.window if self.window else 0.0

    def as_metrics(self) -> dict[str, Any]:
        """The resource metrics' keys for it (``estimated_tokens`` keeps SPEC 4's name)."""
        return {
            "estimated_tokens": self.tokens,
            "context_estimated_tokens": self.estimated,
            "context_window": self.window,
            "context_used": round(self.fraction, 4),
        }


def anthropic_usage(raw: Any) -> Usage:
    """Normalise an Anthropic ``usage`` (SDK object or dict)."""
    get = raw.get if isinstance(raw, Mapping) else (lambda k, d=None: getattr(raw, k, d))
    creation = get("cache_creation", None)
    one_hour = 0
    if creation is not None:
        cget = creation.get if isinstance(creation, Mapping) else (lambda k, d=None: getattr(creation, k, d))
        one_hour = int(cget("ephemeral_1h_input_tokens", 0) or 0)
    return Usage(
        input_tokens=int(get("input_tokens", 0) or 0),
        output_tokens=int(get("output_tokens", 0) or 0),
        cache_write_tokens=int(get("cache_creation_input_tokens", 0) or 0),
        cache_read_tokens=int(get("cache_read_input_tokens", 0) or 0),
        cache_write_1h_tokens=one_hour,
    )


def openai_usage(raw: Any) -> Usage:
    """Normalise an OpenAI ``usage`` (``prompt_tokens`` includes ``prompt_tokens_details.cached_tokens``)."""
    get = raw.get if isinstance(raw, Mapping) else (lambda k, d=None: getattr(raw, k, d))
    prompt = int(get("prompt_tokens", 0) or 0)
    details = get("prompt_tokens_details", None)
    cached = 0
    if details is not None:
        dget = details.get if isinstance(details, Mapping) else (lambda k, d=None: getattr(details, k, d))
        cached = int(dget("cached_tokens", 0) or 0)
    cached = min(cached, prompt)
    return Usage(input_tokens=prompt - cached, output_tokens=int(get("completion_tokens", 0) or 0), cache_read_tokens=cached)


@dataclass(frozen=True)
class UsageEntry:
    """One response's usage: which user turn (1-based, :mod:`core.turns`) and model it belongs to.

    ``reported`` is False for a response that ended before the provider's final usage
    report (interrupted, dropped, or cut by an error): ``usage`` is then what had been
    reported when it ended (Anthropic's input from ``message_start``; nothing from an
    OpenAI-compatible endpoint), a lower bound of what it is billed.
    """

    turn: int
    model: str
    usage: Usage
    reported: bool = True


class UsageLedger:
    """Every response's usage in a session, and what it adds up to (kept summed as it grows).

    Args:
        prices: the price table the costs come from.
    """

    def __init__(self, prices: PriceTable | None = None) -> None:
        self.prices = prices or PriceTable()
        self.entries: list[UsageEntry] = []
        self._by_turn: dict[int, dict[str, Usage]] = {}
        """Usage summed by turn, then model."""
        self._by_model: dict[str, Usage] = {}
        """Usage summed by model over the session."""
        self._unreported: dict[tuple[int, str], int] = {}
        """Responses without their final usage report, by (turn, model)."""

    def add(self, turn: int, model: str, usage: Usage, *, reported: bool = True) -> UsageEntry:
        """Book one response (``reported`` False: it ended before its final usage report)."""
        entry = UsageEntry(turn=turn, model=model, usage=usage, reported=reported)
        self.entries.append(entry)
        models = self._by_turn.setdefault(turn, {})
        models[model] = models.get(model, Usage()) + usage
        self._by_model[model] = self._by_model.get(model, Usage()) + usage
        if not reported:
            self._unreported[(turn, model)] = self._unreported.get((turn, model), 0) + 1
        return entry

    def clear(self) -> None:
        self.entries.clear()
        self._by_turn.clear()
        self._by_model.clear()
        self._unreported.clear()

    def unreported(self, turn: int | None = None, model: str | None = None) -> int:
        """Responses of the session (or of one turn and/or model) that ended without a final usage report.

        When it is not 0, the tokens and the cost are lower bounds ("at least").
        """
        return sum(n for (t, m), n in self._unreported.items() if (turn is None or t == turn) and (model is None or m == model))

    def _select(self, turn: int | None = None, model: str | None = None) -> list[tuple[str, Usage]]:
        groups = self._by_model if turn is None else self._by_turn.get(turn, {})
        return [(m, u) for m, u in groups.items() if model is None or m == model]

    def total(self, turn: int | None = None, model: str | None = None) -> Usage:
        """Usage of the session, or of one turn and/or one model."""
        return sum((u for _, u in self._select(turn, model)), Usage())

    def cost(self, turn: int | None = None, model: str | None = None) -> tuple[float, bool]:
        """(dollars of the priced usage, True when some usage has no price) of the session or a part of it."""
        dollars, unpriced = 0.0, False
        for name, usage in self._select(turn, model):
            value = usage.cost(self.prices.price_for(name))
            if value is None:
                unpriced = unpriced or usage.total_tokens > 0
            else:
                dollars += value
        return dollars, unpriced

    def turns(self) -> list[int]:
        return sorted(self._by_turn)

    def models(self) -> list[str]:
        return list(self._by_model)

    def row(self, turn: int | None = None, model: str | None = None) -> dict[str, Any]:
        """Tokens by kind, hit rate and cost (None when unpriced; ``cost_partial`` for the priced part).

        ``unreported`` counts the responses without a final usage report: when it is not 0,
        the figures are what the provider reported, and the cost is "at least" (:func:`at_least`).
        """
        usage = self.total(turn, model)
        dollars, unpriced = self.cost(turn, model)
        priced = not unpriced and usage.total_tokens > 0
        return {
            **usage.as_dict(),
            "total_tokens": usage.total_tokens,
            "hit_rate": round(usage.hit_rate, 4),
            "cost": round(dollars, 6) if priced else None,
            "cost_partial": round(dollars, 6) if unpriced and dollars else None,
            "unreported": self.unreported(turn, model),
        }

    def summary(self, turns: bool = True) -> dict[str, Any]:
        """Totals, cost, hit rate, and the per-model and (unless ``turns`` is False) per-turn breakdowns."""
        out = {**self.row(), "responses": len(self.entries), "per_model": [{"model": m, **self.row(model=m)} for m in self.models()]}
        if turns:
            out["per_turn"] = [{"turn": t, **self.row(turn=t)} for t in self.turns()]
        return out


@dataclass
class Budget:
    """Per-turn and per-session allowances in dollars and tokens (0 means none).

    The session allowance counts from ``session_base`` (what was spent when the
    user last granted a fresh allowance), so ``/budget`` can give more without
    forgetting what was spent.
    """

    turn_cost: float = 0.0
    session_cost: float = 0.0
    turn_tokens: int = 0
    session_tokens: int = 0
    session_base_cost: float = 0.0
    session_base_tokens: int = 0

    @property
    def active(self) -> bool:
        return bool(self.turn_cost or self.session_cost or self.turn_tokens or self.session_tokens)

    def refresh(self, spent_cost: float, spent_tokens: int) -> None:
        """A fresh session allowance, counted from what has been spent so far."""
        self.session_base_cost = spent_cost
        self.session_base_tokens = spent_tokens

    def check(
        self,
        *,
        turn_spent: tuple[float, int],
        session_spent: tuple[float, int],
        next_step: tuple[float | None, int],
    ) -> str:
        """'' when the next step fits every allowance; else a sentence naming the one it would exceed.

        Each spent / next_step is ``(dollars, tokens)``; dollars None means unknown (no price):
        money budgets then cannot be checked and only token budgets apply.
        """
        cost, tokens = next_step
        limits = (
            ("turn", "cost", self.turn_cost, turn_spent[0], cost),
            ("session", "cost", self.session_cost, session_spent[0] - self.session_base_cost, cost),
            ("turn", "tokens", self.turn_tokens, turn_spent[1], tokens),
            ("session", "tokens", self.session_tokens, session_spent[1] - self.session_base_tokens, tokens),
        )
        for scope, unit, limit, spent, step in limits:
            if not limit or step is None:
                continue
            if spent + step > limit:
                if unit == "cost":
                    return (
                        f"the {scope} budget of {money(limit)} would be exceeded: {money(spent)} spent, "
                        f"the next request would cost about {money(step)}"
                    )
                return (
                    f"the {scope} budget of {limit:,} tokens would be exceeded: {spent:,} used, "
                    f"the next request would use about {step:,}"
                )
        return ""


def money(dollars: float) -> str:
    """Dollars as people read them: cents from ten cents up, else four decimals."""
    return f"${dollars:,.2f}" if dollars >= 0.1 else f"${dollars:.4f}"


def at_least(row: Mapping[str, Any]) -> str:
    """``"≥ "`` when a ledger row's figures are lower bounds (a response ended without its usage report), else ``""``."""
    return "≥ " if row.get("unreported") else ""


def estimate_step(last: Usage | None, added_tokens: int, output_allowance: int, caching: bool = True) -> Usage:
    """The usage the next request will probably report.

    With a previous response: its prompt is read from the cache (when it was cached
    at all), what was added since is written, plus an output allowance. Without one,
    ``added_tokens`` is the whole prompt, written to the cache when the provider caches.
    """
    if last is None or not last.prompt_tokens:
        if caching:
            return Usage(cache_write_tokens=added_tokens, output_tokens=output_allowance)
        return Usage(input_tokens=added_tokens, output_tokens=output_allowance)
    cached = last.cache_read_tokens + last.cache_write_tokens
    if cached:
        return Usage(cache_read_tokens=cached, cache_write_tokens=last.input_tokens + added_tokens, output_tokens=output_allowance)
    return Usage(input_tokens=last.prompt_tokens + added_tokens, output_tokens=output_allowance)


def output_allowance(ledger: UsageLedger, floor: int = 256) -> int:
    """Output tokens to expect from the next response: the session's mean so far, at least ``floor``."""
    reported = [entry.usage.output_tokens for entry in ledger.entries if entry.reported]
    if not reported:
        return floor
    return max(floor, math.ceil(sum(reported) / len(reported)))
