"""Model provider adapters. ``create_provider`` picks one from the settings."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from core.config import Settings
    from core.providers.base import ProviderAdapter


def create_provider(settings: "Settings") -> "ProviderAdapter":
    """Build the configured provider (its SDK is imported only on first request)."""
    common = dict(
        api_key=settings.api_key or None,
        base_url=settings.base_url or None,
        max_retries=0,  # the tool loop retries, visibly and within one budget
        idle_timeout=settings.idle_timeout,
    )
    if settings.provider == "openai":
        from core.providers.openai import OpenAICompatibleProvider

        return OpenAICompatibleProvider(settings.model_name, **common)
    from core.providers.anthropic import ClaudeProvider

    return ClaudeProvider(
        settings.model_name,
        prompt_cache=settings.prompt_cache,
        cache_ttl=settings.cache_ttl,
        thinking_budget=settings.thinking_budget,
        **common,
    )
