"""Compaction of a handler's conversation: when, how much, and what the user and the transcript are told.

A request that would fill more than ``compact_at`` of the model's window (85% by
default) is preceded by a compaction; ``/compact [focus]`` asks for one; a provider's
"prompt is too long" answer triggers one and the request is retried once.

Cheapest first: large tool results older than the newest turns are pruned (each
replaced by a pointer saying what it was and how to get it again: no model call);
when that does not bring the request under :data:`TARGET` of the window, the older
part is replaced by a summary the model writes (:mod:`core.compaction.summary`), the
newest messages staying verbatim. The model's view changes; the whole conversation
stays with the handler (:meth:`Compactor.full_history`, which f2 and ``/export`` show)
and in the transcript, where a ``compaction`` record lets a resume rebuild the view.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import time
from dataclasses import dataclass
from typing import Any, AsyncIterator, Sequence

from core import events as ev
from core.compaction.apply import apply_compaction, prune_pointer, replay
from core.compaction.carry import carry_over
from core.compaction.probe import probe_window
from core.compaction.summary import SUMMARY_SYSTEM, render_transcript, summary_request
from core.tokens import MESSAGE_OVERHEAD, estimate_request_tokens, estimate_text_tokens
from core.models import SOURCE_SERVER, Window, resolve_window
from core.providers.base import ProviderError, ResponseComplete
from core.turn_context import file_part
from core.turns import current_turn
from core.usage import Usage

log = logging.getLogger(__name__)

TARGET = 0.6
"""Share of the window a compaction aims to bring the request under."""
KEEP = 0.3
"""Share of the window the newest messages may keep verbatim."""
SUMMARY_ALLOWANCE = 0.1
"""Share of the window a summary is expected to take: a summary cannot help when what stays is already that close to the window."""
PRUNE_MIN_CHARS = 1_200
"""Tool results shorter than this are not worth a pointer."""
PROMPT_TOO_LONG_WORDS = ("prompt is too long", "context length", "context_length", "maximum context", "context window", "too many tokens", "exceeds the")


_ANTHROPIC_FIGURES = re.compile(r"(\d+) tokens > (\d+) maximum")
_OPENAI_MAXIMUM = re.compile(r"maximum context length is (\d+) tokens")
_OPENAI_COUNTED = re.compile(r"(?:resulted in|requested) (\d+) tokens")


def _figures(said: str) -> tuple[int, int]:
    """``(tokens the provider counted, its maximum)`` from a "prompt is too long" answer (0 when not said)."""
    if match := _ANTHROPIC_FIGURES.search(said):
        return int(match.group(1)), int(match.group(2))
    maximum, counted = _OPENAI_MAXIMUM.search(said), _OPENAI_COUNTED.search(said)
    return (int(counted.group(1)) if counted else 0), (int(maximum.group(1)) if maximum else 0)


class CompactionFailed(Exception):
    """The summary could not be written (the message says why)."""


def is_prompt_too_long(error: ProviderError) -> bool:
    """True when the provider refused the request for its size (Anthropic's ``prompt is too long``, OpenAI's ``context_length_exceeded``)."""
    if error.kind in ("context_limit", "too_large"):
        return True
    return error.kind == "bad_request" and any(word in str(error).lower() for word in PROMPT_TOO_LONG_WORDS)


@dataclass(frozen=True)
class Outcome:
    """What one compaction did."""

    messages: int
    """Messages of the model's view replaced by the summary (0: pruning only)."""
    pruned: int
    summary_tokens: int
    tokens_before: int
    tokens_after: int
    usage: Usage | None
    cost: float | None
    seconds: float

    def line(self) -> str:
        """The chat line: ``Compacted 142 messages into a summary of 1,900 tokens; f2 shows them all``."""
        if self.messages:
            text = f"Compacted {self.messages:,} messages into a summary of {self.summary_tokens:,} tokens"
            if self.pruned:
                text += f" (and pruned {self.pruned:,} old tool results)"
        else:
            text = f"Compacted the conversation: pruned {self.pruned:,} old tool results (no summary needed)"
        text += f"; ~{self.tokens_before:,} -> ~{self.tokens_after:,} tokens"
        if self.usage is not None:
            spent = f"${self.cost:.4f}" if self.cost is not None else "no price known"
            text += f"; the summary cost {self.usage.total_tokens:,} tokens ({spent})"
        return text + "; f2 shows them all."


class Compactor:
    """The compaction state of one handler: the window, the whole conversation, and the compacting itself.

    Args:
        handler: The handler (its ``conversation_history`` is the model's view).
    """

    def __init__(self, handler: Any) -> None:
        self.handler = handler
        self.archive: list[dict[str, Any]] = []
        """Messages compaction removed from the model's view, in order (the start of the whole conversation)."""
        self.originals: dict[str, str] = {}
        """The text of each pruned tool result, by call id."""
        self._reported: dict[tuple[str, str], tuple[int, str] | None] = {}
        self._learned: dict[tuple[str, str], Window] = {}
        self.window: Window = self._resolve(None)
        self.count = 0
        self.compacted_now = False
        """True when the last :meth:`before_request` compacted (a refused request is then worth retrying)."""
        self.seconds: list[float] = []
        """How long each compaction of this session took."""

    # -- the window ------------------------------------------------------------------
    def _resolve(self, reported: tuple[int, str] | None) -> Window:
        return resolve_window(self.handler.config, self.handler.model_name, reported)

    def _endpoint(self) -> str:
        provider = self.handler.model_provider
        if getattr(provider, "name", "") != "openai":
            return ""
        return str(getattr(provider, "_base_url", None) or os.environ.get("OPENAI_BASE_URL") or "")

    async def ensure_window(self) -> Window:
        """The window, asking an OpenAI-compatible server once per model (in a thread)."""
        key = (self._endpoint(), self.handler.model_name)
        if key[0] and key not in self._reported:
            self._reported[key] = await asyncio.to_thread(probe_window, key[0], key[1])
        window = self._resolve(self._reported.get(key))
        learned = self._learned.get(key)
        self.window = learned if learned is not None and learned.tokens < window.tokens else window
        provider = self.handler.model_provider
        asked = getattr(provider, "max_tokens", None)
        if self.window.output and isinstance(asked, int) and asked > self.window.output:
            provider.max_tokens = self.window.output  # claude-3-haiku refuses max_tokens 8192: its output limit is 4,096
        return self.window

    def learn_limit(self, said: str, estimate: int) -> None:
        """Take the window down to what a "prompt is too long" answer says fits, in our estimate's units.

        The provider counted more tokens than our estimate (``estimate``): Anthropic says
        ``prompt is too long: 203284 tokens > 200000 maximum``, OpenAI ``maximum context
        length is 128000 tokens ... resulted in 130000 tokens``. The window becomes
        ``estimate * maximum / counted`` (0.8 of the estimate when the answer gives no figures),
        for the rest of the session.
        """
        counted, maximum = _figures(said)
        fits = int(estimate * maximum / counted) if counted and maximum and counted > maximum else int(estimate * 0.8)
        if 0 < fits < self.window.tokens:
            self.window = Window(fits, self.window.output, SOURCE_SERVER, "its 'prompt is too long' answer")
            self._learned[(self._endpoint(), self.handler.model_name)] = self.window

    # -- what the view holds ---------------------------------------------------------
    def full_history(self) -> list[dict[str, Any]]:
        """The whole conversation: what compaction removed, then the view (summaries left out, pruned results whole)."""
        shown = []
        for message in [*self.archive, *self.handler.conversation_history]:
            if message.get("compaction"):
                continue
            if message.get("pruned") and str(message.get("tool_call_id")) in self.originals:
                message = {**message, "content": self.originals[str(message.get("tool_call_id"))]}
                message.pop("pruned", None)
            shown.append(message)
        return shown

    def restore(self, messages: Sequence[dict[str, Any]], compactions: Sequence[tuple[int, dict[str, Any]]]) -> list[dict[str, Any]]:
        """The view of a loaded transcript (its compactions replayed); keeps the removed part as the archive."""
        view, self.archive, self.originals = replay(messages, compactions)
        self.count = len(compactions)
        carried = carry_over(view, str(getattr(self.handler.model_provider, "name", "")))  # saved with another provider
        for old, new in carried.mapping.items():
            if old in self.originals:
                self.originals[new] = self.originals.pop(old)
        return view

    def reset(self) -> None:
        self.archive = []
        self.originals = {}

    def estimate(self, system_prompt: str, tools: Sequence[dict[str, Any]]) -> int:
        """The next request's tokens: the handler's context figure, or the whole request's estimate if larger."""
        if self.handler.last_usage is not None:  # the reported prompt plus what was added since: no pass over the history
            return int(self.handler.context_meter(0).tokens)
        history = self.handler.conversation_history
        whole = estimate_request_tokens(system_prompt, history, tools) + sum(estimate_text_tokens(m.get("context") or "") for m in history)
        return max(whole, int(self.handler.context_meter(whole).tokens))

    def over_threshold(self, tokens: int) -> bool:
        share = float(getattr(self.handler.config, "compact_at", 0.85) or 0)
        return bool(share and self.window.tokens and tokens >= share * self.window.tokens)

    # -- compacting --------------------------------------------------------------------
    async def before_request(
        self, system_prompt: str, tools: Sequence[dict[str, Any]], *, trigger: str = "threshold", error: ProviderError | None = None
    ) -> AsyncIterator[ev.Event]:
        """Compact when the next request passes the threshold (or always, for ``prompt_too_long``), yielding what to show.

        Args:
            error: The provider's "prompt is too long" answer (``trigger="prompt_too_long"``): the
                window is then taken down to what the answer says fits (see :meth:`learn_limit`).
        """
        self.compacted_now = False
        await self.ensure_window()
        before = self.estimate(system_prompt, tools)
        if error is not None:
            self.learn_limit(str(error), before)
        if trigger == "threshold" and not self.over_threshold(before):
            return
        try:
            outcome = await self.compact(system_prompt, tools, trigger=trigger)
        except CompactionFailed as exc:
            yield ev.Warning(code="compaction_failed", message=str(exc))
            return
        if outcome is not None:
            self.compacted_now = True
            yield ev.Warning(code="compacted", message=outcome.line())
            yield ev.MetricsUpdated(metrics=self.handler.get_resource_metrics())

    def _keep_from(self, history: Sequence[dict[str, Any]], budget: float) -> int:
        """Where the newest messages kept verbatim (about ``budget`` tokens) begin: a user or assistant message, never a tool result."""
        used = 0
        start = len(history)
        for index in range(len(history) - 1, -1, -1):
            message = history[index]
            used += MESSAGE_OVERHEAD + estimate_text_tokens(str(message.get("content") or "")) + estimate_text_tokens(message.get("context") or "")
            if used > budget and start < len(history):
                break
            start = index
        while start < len(history) and history[start].get("role") == "tool":
            start += 1  # never between a call and its result
        if start >= len(history):  # the newest message alone is over the budget: keep from the last call with its results
            start = len(history) - 1
            while start > 0 and history[start].get("role") == "tool":
                start -= 1
        return start

    def _prunable(self, history: Sequence[dict[str, Any]], keep_from: int) -> dict[str, str]:
        calls = {c.get("id"): c for m in history if m.get("role") == "assistant" for c in m.get("tool_calls") or []}
        pruned: dict[str, str] = {}
        for message in history[:keep_from]:
            content = str(message.get("content") or "")
            if message.get("role") == "tool" and not message.get("pruned") and len(content) >= PRUNE_MIN_CHARS:
                call = calls.get(message.get("tool_call_id")) or {}
                pruned[str(message.get("tool_call_id"))] = prune_pointer(str(message.get("name") or call.get("name") or "?"), call.get("parameters") or {}, len(content))
        return pruned

    async def compact(self, system_prompt: str, tools: Sequence[dict[str, Any]], *, focus: str = "", trigger: str = "command") -> Outcome | None:
        """Compact the view now; None when there is nothing to compact.

        Raises:
            CompactionFailed: the summary request failed (the view is unchanged).
        """
        started = time.monotonic()
        handler = self.handler
        history = handler.conversation_history
        before = self.estimate(system_prompt, tools)
        # Past the threshold the newest KEEP of the window stays; asked for (or refused by the
        # provider) below it, the newest third of what the conversation holds.
        keep_from = self._keep_from(history, KEEP * self.window.tokens if trigger == "threshold" else min(KEEP * self.window.tokens, before / 3))
        pruned = self._prunable(history, keep_from)
        record: dict[str, Any] = {"trigger": trigger, "pruned": pruned, "tokens_before": before, "model": handler.model_name}
        if focus:
            record["focus"] = focus
        saved = sum(len(str(m.get("content") or "")) for m in history if m.get("tool_call_id") in pruned) // 4
        pruning_suffices = before - saved < TARGET * self.window.tokens and trigger == "threshold" and not focus
        usage: Usage | None = None
        kept = estimate_request_tokens(system_prompt, history[keep_from:], tools) + sum(estimate_text_tokens(m.get("context") or "") for m in history[keep_from:])
        if not pruning_suffices and keep_from > 0 and kept + SUMMARY_ALLOWANCE * self.window.tokens < self.window.tokens:
            summary, usage = await self._summarise(history[:keep_from], focus)
            record.update(summary=summary, replaced=keep_from, summary_turn=current_turn(history[:keep_from]), summary_parts=self._picked_parts())
        elif not pruned:
            return None
        record["ts"] = time.time()
        view, removed = apply_compaction(history, record, self.originals)
        self.archive.extend(m for m in removed if not m.get("compaction"))
        handler.replace_view(view)  # the reported prompt no longer describes the view
        after = self.estimate(system_prompt, tools)
        record["tokens_after"] = after
        cost = None
        usage_record = None
        if usage is not None:
            booked = handler.spending.record_usage(usage.as_dict(), len(handler.conversation_history))
            handler.spending.forget_reported_prompt()  # that prompt was the summary request's, not the conversation's
            usage_record = handler.spending.usage_record(booked)
            cost = booked.cost(handler.usage.prices.price_for(handler.model_name))
        seconds = time.monotonic() - started
        self.count += 1
        self.seconds.append(seconds)
        await asyncio.to_thread(self._record, record, usage_record)
        outcome = Outcome(
            messages=len([m for m in removed if not m.get("compaction")]) if record.get("summary") is not None else 0,
            pruned=len(pruned),
            summary_tokens=estimate_text_tokens(str(record.get("summary") or "")),
            tokens_before=before,
            tokens_after=after,
            usage=usage,
            cost=cost,
            seconds=seconds,
        )
        log.info("compaction (%s): %s in %.2fs", trigger, outcome.line(), seconds)
        return outcome

    def _picked_parts(self) -> list[dict[str, Any]]:
        """The picked files as they are now, to travel with the summary."""
        handler = self.handler
        parts = []
        for path in handler.pinned_files:
            text, why = handler._picked_text(path)
            parts.append(file_part(handler._display_path(path), text, *([why] if why else [])))
        return parts

    async def _summarise(self, messages: Sequence[dict[str, Any]], focus: str) -> tuple[str, Usage]:
        """The model's summary of ``messages`` and what the request cost."""
        provider = self.handler.model_provider
        output = self.window.output or 8_192
        budget_chars = max(4_000, int((self.window.tokens - min(output, self.window.tokens // 4)) * 4 * 0.8) - len(SUMMARY_SYSTEM))
        text = summary_request(render_transcript(messages, self.originals, budget_chars), focus)
        request = [{"role": "user", "content": text}]
        complete: ResponseComplete | None = None
        try:
            async for item in provider.stream_message(request, SUMMARY_SYSTEM, ()):
                if isinstance(item, ResponseComplete):
                    complete = item
        except ProviderError as exc:
            raise CompactionFailed(f"The conversation could not be compacted: the summary request failed ({exc}).") from exc
        if complete is None or not complete.content.strip():
            raise CompactionFailed("The conversation could not be compacted: the model wrote no summary.")
        return complete.content.strip(), Usage.from_dict(complete.usage)

    def _record(self, record: dict[str, Any], usage: dict[str, Any] | None) -> None:
        """Tell the observers (the session recorder writes a ``compaction`` record, then the summary's usage)."""
        for observer in list(getattr(self.handler, "observers", [])):
            method = getattr(observer, "compaction", None)
            if method is None:
                continue
            try:
                for warning in method(record, usage) or []:
                    log.warning("%s", warning.message)
            except Exception:  # noqa: BLE001 - recording must never break the turn
                log.exception("observer failed on compaction")
