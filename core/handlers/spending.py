"""The handler's side of tokens and money: usage recorded per response, the context meter, the budget.

:class:`Spending` is one of the session's parts (issue 24), owned by
:class:`core.handlers.passthrough.PassthroughHandler` (its ``spending``). The provider's
reported usage of each response goes into a :class:`core.usage.UsageLedger`
(tagged with the user turn and model); the context figure is the last
response's real prompt tokens plus an estimate of what was added since; the
budget check runs before every request of the tool loop.
"""

from __future__ import annotations

import logging
from typing import Any, Callable, Iterable, Mapping

from core.history import History
from core.tokens import MESSAGE_OVERHEAD, estimate_text_tokens
from core.pricing import PriceTable
from core.usage import Budget, Usage, UsageLedger, estimate_step, output_allowance

log = logging.getLogger(__name__)


class Spending:
    """Usage, context figure and budget of one conversation (private state; its methods say what changes).

    Args:
        config: The settings (prices and budgets, read once).
        history: The conversation (read: turn numbers, what was added since the last report).
        provider: The model provider now in use (its ``model`` and ``prompt_cache``; it changes on ``/model``).
    """

    def __init__(self, config: Any, history: History, provider: Callable[[], Any]) -> None:
        self._history = history
        self._provider = provider
        self._usage = UsageLedger(PriceTable(getattr(config, "prices", None) or {}))
        self._budget = Budget(
            turn_cost=config.max_turn_cost,
            session_cost=config.max_cost,
            turn_tokens=config.max_turn_tokens,
            session_tokens=config.max_session_tokens,
        )
        self._last_usage: Usage | None = None
        self._usage_mark = 0
        """Length of the history the last reported prompt covered."""
        self._unpriced_warned = False

    @property
    def usage(self) -> UsageLedger:
        """The provider-reported usage of every response (book it with :meth:`record_usage`)."""
        return self._usage

    @property
    def budget(self) -> Budget:
        """The token and money limits (a fresh allowance with :meth:`refresh_budget`)."""
        return self._budget

    @property
    def last_usage(self) -> Usage | None:
        """The last response's reported usage, while its prompt still describes what the next request sends."""
        return self._last_usage

    @property
    def model_name(self) -> str:
        return str(getattr(self._provider(), "model", "") or "")

    @property
    def user_turns(self) -> int:
        """The number of the current (or last) user turn: the one numbering of :mod:`core.turns`, read from the history."""
        return self._history.current_turn

    def record_usage(self, raw: Mapping[str, Any] | None, history_length: int, *, reported: bool = True) -> Usage:
        """Book one response's usage (its prompt covered ``history_length`` messages).

        ``reported`` False: the response ended before the provider's final usage report;
        ``raw`` is what it had reported by then (maybe nothing), a lower bound.
        """
        usage = Usage.from_dict(raw)
        self._usage.add(max(1, self.user_turns), self.model_name, usage, reported=reported)
        if usage.prompt_tokens and reported:
            self._last_usage = usage
            self._usage_mark = history_length
        return usage

    def usage_record(self, usage: Usage, *, reported: bool = True) -> dict[str, Any]:
        """A response's usage as events and the transcript carry it: the counts, ``model``, ``turn`` (and ``reported`` when False)."""
        record: dict[str, Any] = {"model": self.model_name, "turn": self.user_turns, **usage.as_dict()}
        if not reported:
            record["reported"] = False
        return record

    def restore_usage(self, entries: Iterable[Mapping[str, Any]]) -> None:
        """Reload the ledger of a resumed session (``{"turn", "model", "usage"}`` per response; ``usage["reported"]`` False for a lower bound)."""
        self._usage.clear()
        turn = 0
        for entry in entries:
            turn = int(entry.get("turn") or turn or 1)
            raw = entry.get("usage") or {}
            reported = not (isinstance(raw, Mapping) and raw.get("reported") is False)
            self._usage.add(turn, str(entry.get("model") or self.model_name), Usage.from_dict(raw), reported=reported)
        self._last_usage = None
        self._usage_mark = 0

    def forget_reported_prompt(self) -> None:
        """The last reported prompt no longer describes what the next request sends (a compacted view, another model)."""
        self._last_usage = None
        self._usage_mark = 0

    def reset(self) -> None:
        """Forget the usage and the reported prompt (``/reset``, ``/new``); the budget starts afresh."""
        self._usage.clear()
        self._last_usage = None
        self._usage_mark = 0
        self._budget.refresh(0.0, 0)

    def added_since_usage(self) -> int:
        """Estimated tokens of the messages added after the last reported prompt."""
        total = 0
        for message in self._history[self._usage_mark :]:
            total += MESSAGE_OVERHEAD + estimate_text_tokens(str(message.get("content") or "")) + estimate_text_tokens(message.get("context") or "")
            for call in message.get("tool_calls") or []:
                total += MESSAGE_OVERHEAD + estimate_text_tokens(str(call.get("parameters") or ""))
        return total

    def context_figure(self, heuristic: int) -> tuple[int, int]:
        """(tokens the next request carries, how many of them are estimated).

        With a reported prompt it is that prompt plus the estimate of what was added
        since; before the first response it is the heuristic over everything.
        """
        if self._last_usage is None or self._usage_mark > len(self._history):
            return heuristic, heuristic
        added = self.added_since_usage()
        return self._last_usage.prompt_tokens + added, added

    def budget_problem(self, whole_request: int) -> str:
        """'' when the next request fits the budget; else what it would exceed.

        Args:
            whole_request: the heuristic estimate of the whole request, used when no
                response has reported its prompt yet.
        """
        if not self._budget.active:
            return ""
        price = self._usage.prices.price_for(self.model_name)
        added = self.added_since_usage() if self._last_usage is not None else whole_request
        caching = bool(getattr(self._provider(), "prompt_cache", True))
        step = estimate_step(self._last_usage, added, output_allowance(self._usage), caching)
        return self._budget.check(
            turn_spent=(self._usage.cost(turn=self.user_turns)[0], self._usage.total(turn=self.user_turns).total_tokens),
            session_spent=(self._usage.cost()[0], self._usage.total().total_tokens),
            next_step=(step.cost(price), step.total_tokens),
        )

    def unpriced_budget_warning(self) -> str:
        """A sentence, once, when a money budget is set but the model has no price."""
        if self._unpriced_warned or not (self._budget.turn_cost or self._budget.session_cost):
            return ""
        if self._usage.prices.price_for(self.model_name) is not None:
            return ""
        self._unpriced_warned = True
        return (
            f"No price is known for {self.model_name}, so the money budget cannot be checked "
            f'(token budgets still apply). Add [prices."{self.model_name}"] to the config file to price it.'
        )

    def refresh_budget(self) -> str:
        """A fresh session allowance from now on (``/budget``); returns what it now allows."""
        self._budget.refresh(self._usage.cost()[0], self._usage.total().total_tokens)
        allowed = []
        if self._budget.session_cost:
            allowed.append(f"${self._budget.session_cost:.2f}")
        if self._budget.session_tokens:
            allowed.append(f"{self._budget.session_tokens:,} tokens")
        return " and ".join(allowed)

    def usage_metrics(self) -> dict[str, Any]:
        """The metrics' ``usage`` entry: session totals, cost and hit rate, this turn's, and per model.

        The whole per-turn breakdown is ``self._usage.summary()`` (``/cost``); a metrics
        event carries the current turn's row so its size does not grow with the session.
        """
        summary = self._usage.summary(turns=False)
        summary["turn"] = {"turn": self.user_turns, **self._usage.row(turn=self.user_turns)}
        summary["model"] = self.model_name
        summary["last"] = self._last_usage.as_dict() if self._last_usage else None
        return summary
