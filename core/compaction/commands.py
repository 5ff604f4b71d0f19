"""``/compact [focus]`` and ``/model [name]``: the commands of issue 27, for every consumer (TUI, ACP).

``/model`` lists the models of the configured providers (Anthropic when it has a key or
an endpoint, the OpenAI-compatible endpoint likewise) with their window and price, and
switches the next turns to one of them; the conversation is carried over
(:mod:`core.compaction.carry`).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any

from core.compaction.carry import carry_over
from core.compaction.compactor import CompactionFailed
from core.compaction.probe import PUBLIC_HOSTS, TIMEOUT
from core.models import WINDOWS, limits_for

log = logging.getLogger(__name__)


class ModelSwitchError(ValueError):
    """The model asked for is not one the configured providers offer (the message lists them)."""


def _busy(handler: Any) -> bool:
    return bool(getattr(handler, "turn_running", False))


async def compact_now(handler: Any, focus: str = "") -> str:
    """Compact the handler's conversation now; the line to show.

    Raises:
        CompactionFailed: a turn is running, there is nothing to compact, or the summary request failed.
    """
    if handler is None:
        raise CompactionFailed("There is no conversation to compact: the engine did not start.")
    if _busy(handler):
        raise CompactionFailed("A turn is running; /compact when it has finished (or press Esc first).")
    await handler.compactor.ensure_window()
    outcome = await handler.compactor.compact(handler.system_prompt(), handler.get_tool_specs(), focus=focus, trigger="command")
    if outcome is None:
        raise CompactionFailed("Nothing to compact yet: the conversation is short.")
    return outcome.line()


@dataclass(frozen=True)
class ModelChoice:
    """A model ``/model`` offers: provider, name, window (None: unknown until asked) and $/Mtok in and out."""

    provider: str
    model: str
    window: int | None
    price: tuple[float, float] | None
    current: bool = False

    @property
    def label(self) -> str:
        return f"{self.provider}:{self.model}"

    def line(self) -> str:
        """A Markdown list item: it wraps between words in a narrow chat (80 columns), where aligned columns broke mid-word."""
        window = f"{self.window:,} tokens" if self.window else "window from the server"
        price = f"${self.price[0]:g}/${self.price[1]:g} per Mtok in/out" if self.price else "no price known"
        current = " (current)" if self.current else ""
        return f"- `{self.label}`{current} · {window} · {price}"


def _configured(config: Any) -> dict[str, str]:
    """Provider -> its endpoint ("" for the vendor's own) of each provider with a key or an endpoint."""
    found: dict[str, str] = {}
    if config.anthropic_api_key or config.anthropic_base_url or os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_BASE_URL"):
        found["anthropic"] = config.anthropic_base_url or os.environ.get("ANTHROPIC_BASE_URL", "")
    if config.openai_api_key or config.openai_base_url or os.environ.get("OPENAI_API_KEY") or os.environ.get("OPENAI_BASE_URL"):
        found["openai"] = config.openai_base_url or os.environ.get("OPENAI_BASE_URL", "")
    return found


def _served_models(base_url: str) -> list[str]:
    """The ids an OpenAI-compatible server lists at ``/models`` (blocking; [] when it lists none)."""
    try:
        with urllib.request.urlopen(base_url.rstrip("/") + "/models", timeout=TIMEOUT) as response:  # noqa: S310 - the configured endpoint
            listed = json.loads(response.read(1_000_000) or b"null")
    except (OSError, ValueError) as exc:
        log.info("the endpoint %s lists no models: %s", base_url, exc)
        return []
    return [str(card["id"]) for card in (listed or {}).get("data") or [] if isinstance(card, dict) and card.get("id")]


async def available_models(handler: Any) -> list[ModelChoice]:
    """The models of the configured providers, the current one first."""
    config = handler.config
    prices = handler.usage.prices
    names: list[tuple[str, str]] = [(config.provider, handler.model_name)]
    for provider, endpoint in _configured(config).items():
        local = provider == "openai" and endpoint and urllib.parse.urlsplit(endpoint).hostname not in PUBLIC_HOSTS
        if local:
            names += [(provider, m) for m in await asyncio.to_thread(_served_models, endpoint)]
        else:
            prefix = ("claude-",) if provider == "anthropic" else ("gpt-", "o3", "o4")
            names += [(provider, m) for m in WINDOWS if m.startswith(prefix)]
    choices: list[ModelChoice] = []
    seen: set[tuple[str, str]] = set()
    for provider, model in names:
        if (provider, model) in seen:
            continue
        seen.add((provider, model))
        current = (provider, model) == (config.provider, handler.model_name)
        window = handler.compactor.window.tokens if current else (limits.window if (limits := limits_for(model)) else None)
        price = prices.price_for(model)
        choices.append(ModelChoice(provider, model, window, (price.input, price.output) if price else None, current))
    return choices


async def model_listing(handler: Any) -> str:
    """``/model`` without a name, as Markdown: the models to choose from, and how to choose."""
    if handler is None:
        return "No model to switch: the engine did not start."
    choices = await available_models(handler)
    window = handler.compactor.window
    lines = [f"Current: {handler.config.provider}:{handler.model_name}, window {window.describe()}.", ""]
    lines += [choice.line() for choice in choices]
    lines += ["", "`/model NAME` (or `PROVIDER:NAME`) switches for the next turn; the conversation carries over."]
    return "\n".join(lines)


def _pick(handler: Any, choice: str) -> tuple[str, str]:
    configured = _configured(handler.config)
    provider, _, model = choice.strip().partition(":") if ":" in choice and choice.split(":", 1)[0] in ("anthropic", "openai") else ("", "", choice.strip())
    if not model:
        raise ModelSwitchError("Name a model: /model NAME or /model PROVIDER:NAME (/model alone lists them).")
    if not provider:
        provider = "anthropic" if model.startswith("claude") and "anthropic" in configured else handler.config.provider
        if model.startswith(("gpt-", "o3", "o4")) and "openai" in configured:
            provider = "openai"
    if provider not in configured and provider != handler.config.provider:
        have = ", ".join(sorted(configured)) or "none"
        raise ModelSwitchError(f"{provider} is not configured (configured providers: {have}); set its key or endpoint first.")
    return provider, model


async def switch_model(handler: Any, choice: str) -> str:
    """Point the handler at another model for the next turns; the line to show.

    Raises:
        ModelSwitchError: a turn is running, or the provider is not configured.
    """
    if handler is None:
        raise ModelSwitchError("No model to switch: the engine did not start.")
    if _busy(handler):
        raise ModelSwitchError("A turn is running; switch models when it has finished.")
    provider, model = _pick(handler, choice)
    config = handler.config
    before = f"{config.provider}:{handler.model_name}"
    handler.use_model(provider, model)
    carried = carry_over(handler.conversation_history, provider)
    for old, new in carried.mapping.items():
        if old in handler.compactor.originals:
            handler.compactor.originals[new] = handler.compactor.originals.pop(old)
    window = await handler.compactor.ensure_window()
    tokens = handler.compactor.estimate(handler.system_prompt(), handler.get_tool_specs())
    price = handler.usage.prices.price_for(model)
    text = f"Switched from {before} to {provider}:{model}; window {window.describe()}."
    if price is not None:
        caching = provider == "anthropic" and getattr(handler.model_provider, "prompt_cache", False)
        rate = price.cache_write if caching else price.input
        text += f" The next request sends the conversation (~{tokens:,} tokens) with no cached prefix: about ${tokens * rate / 1_000_000:.4f}."
    else:
        text += f" The next request sends the conversation (~{tokens:,} tokens) with no cached prefix (no price known for {model})."
    if carried.ids_mapped:
        text += f" {carried.ids_mapped} tool-call ids were mapped to ones {provider} accepts."
    if carried.thinking_not_sent:
        text += f" {carried.thinking_not_sent} thinking blocks of the other provider are kept in the transcript but not sent."
    if tokens and window.tokens and tokens >= window.tokens:
        text += " The conversation is larger than this window: it will be compacted before the next request."
    log.info("%s", text)
    return text
