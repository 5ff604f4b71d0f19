"""The window table: each known model's context window and output limit, beside the price table.

A model's window decides when the conversation is compacted (``core.compaction``) and
what the context meter measures against. :func:`resolve_window` picks, in order:

1. the ``context_window`` setting, when the user set it (flag, environment, config file);
2. what an OpenAI-compatible server reports for the model (:mod:`core.window_probe`:
   Ollama, vLLM, llama.cpp, LM Studio), asked once per model;
3. this table (exact name, else the longest known prefix, after any ``vendor/`` part);
4. the setting's default, marked as assumed.

SOURCES (read on WINDOWS_DATE):

- Anthropic: https://platform.claude.com/docs/en/about-claude/models/overview
  ("Model comparison": context window, max output).
- OpenAI: https://platform.openai.com/docs/models (each model's page: context window,
  max output tokens).
- Google: https://ai.google.dev/gemini-api/docs/models (input and output token limits).
- DeepSeek: https://api-docs.deepseek.com/quick_start/pricing (context length, max output).
- Qwen: the model cards on huggingface.co/Qwen (native context length; YaRN extensions
  not counted, since servers do not enable them by default).
- Meta Llama: the model cards on huggingface.co/meta-llama (context length).
- Mistral: https://docs.mistral.ai/getting-started/models/models_overview/ (context).
- Gemma, Phi: the model cards on huggingface.co/google and huggingface.co/microsoft.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

WINDOWS_DATE = "2026-11-26"
"""The day the table below was read from the sources named in the module docstring."""


@dataclass(frozen=True)
class ModelLimits:
    """A model's context window and the most tokens one response may hold (None: not documented)."""

    window: int
    output: int | None = None


K = 1024

WINDOWS: dict[str, ModelLimits] = {
    # Anthropic
    "claude-opus-4-5": ModelLimits(200_000, 64_000),
    "claude-opus-4-1": ModelLimits(200_000, 32_000),
    "claude-opus-4": ModelLimits(200_000, 32_000),
    "claude-sonnet-4-5": ModelLimits(200_000, 64_000),
    "claude-sonnet-4": ModelLimits(200_000, 64_000),
    "claude-3-7-sonnet": ModelLimits(200_000, 64_000),
    "claude-haiku-4-5": ModelLimits(200_000, 64_000),
    "claude-3-5-haiku": ModelLimits(200_000, 8_192),
    "claude-3-5-sonnet": ModelLimits(200_000, 8_192),
    "claude-3-haiku": ModelLimits(200_000, 4_096),
    "claude-3-opus": ModelLimits(200_000, 4_096),
    # OpenAI
    "gpt-5": ModelLimits(400_000, 128_000),
    "gpt-5-mini": ModelLimits(400_000, 128_000),
    "gpt-5-nano": ModelLimits(400_000, 128_000),
    "gpt-4.1": ModelLimits(1_047_576, 32_768),
    "gpt-4.1-mini": ModelLimits(1_047_576, 32_768),
    "gpt-4.1-nano": ModelLimits(1_047_576, 32_768),
    "gpt-4o": ModelLimits(128_000, 16_384),
    "gpt-4o-mini": ModelLimits(128_000, 16_384),
    "gpt-4-turbo": ModelLimits(128_000, 4_096),
    "gpt-3.5-turbo": ModelLimits(16_385, 4_096),
    "o3": ModelLimits(200_000, 100_000),
    "o3-mini": ModelLimits(200_000, 100_000),
    "o4-mini": ModelLimits(200_000, 100_000),
    "gpt-oss-120b": ModelLimits(131_072, 131_072),
    "gpt-oss-20b": ModelLimits(131_072, 131_072),
    "gpt-oss": ModelLimits(131_072, 131_072),
    # Google
    "gemini-2.5-pro": ModelLimits(1_048_576, 65_536),
    "gemini-2.5-flash": ModelLimits(1_048_576, 65_536),
    "gemini-2.5-flash-lite": ModelLimits(1_048_576, 65_536),
    "gemini-2.0-flash": ModelLimits(1_048_576, 8_192),
    "gemini-1.5-pro": ModelLimits(2_097_152, 8_192),
    "gemini-1.5-flash": ModelLimits(1_048_576, 8_192),
    # DeepSeek
    "deepseek-chat": ModelLimits(128 * K, 8 * K),
    "deepseek-reasoner": ModelLimits(128 * K, 64 * K),
    "deepseek-coder-v2": ModelLimits(128 * K, None),
    "deepseek-r1": ModelLimits(128 * K, None),
    "deepseek-v3": ModelLimits(128 * K, None),
    # Qwen (native lengths)
    "qwen3-coder": ModelLimits(262_144, 65_536),
    "qwen3": ModelLimits(32_768, None),
    "qwen2.5-coder": ModelLimits(32_768, 8_192),
    "qwen2.5": ModelLimits(32_768, 8_192),
    "qwq": ModelLimits(131_072, None),
    # Meta Llama (Ollama and Hugging Face spellings)
    "llama3.3": ModelLimits(131_072, None),
    "llama3.2": ModelLimits(131_072, None),
    "llama3.1": ModelLimits(131_072, None),
    "llama3": ModelLimits(8_192, None),
    "llama-3.3": ModelLimits(131_072, None),
    "llama-3.2": ModelLimits(131_072, None),
    "llama-3.1": ModelLimits(131_072, None),
    "meta-llama-3.1": ModelLimits(131_072, None),
    "llama-3": ModelLimits(8_192, None),
    "llama4": ModelLimits(1_048_576, None),
    "codellama": ModelLimits(16_384, None),
    # Mistral
    "mistral-large": ModelLimits(131_072, None),
    "mistral-medium": ModelLimits(131_072, None),
    "mistral-small": ModelLimits(131_072, None),
    "mistral-nemo": ModelLimits(131_072, None),
    "mistral": ModelLimits(32_768, None),
    "codestral": ModelLimits(256_000, None),
    "devstral": ModelLimits(131_072, None),
    "mixtral": ModelLimits(32_768, None),
    # Others often served locally
    "gemma3": ModelLimits(131_072, 8_192),
    "gemma2": ModelLimits(8_192, None),
    "phi4": ModelLimits(16_384, None),
    "phi3": ModelLimits(4_096, None),
}

_SEPARATORS = "-:@._"


def _normal(model: str) -> str:
    """The name matched against the table: lower case, after any ``vendor/`` prefix (OpenRouter, Hugging Face)."""
    return model.strip().lower().rsplit("/", 1)[-1]


def limits_for(model: str, table: dict[str, ModelLimits] | None = None) -> ModelLimits | None:
    """The limits of ``model`` (exact name, else the longest known prefix ending at a separator), or None."""
    table = WINDOWS if table is None else table
    name = _normal(model)
    if name in table:
        return table[name]
    matches = [key for key in table if name.startswith(key) and name[len(key)] in _SEPARATORS]
    return table[max(matches, key=len)] if matches else None


SOURCE_SETTING = "setting"
SOURCE_SERVER = "server"
SOURCE_TABLE = "table"
SOURCE_ASSUMED = "assumed"
SOURCE_LABELS = {
    SOURCE_SETTING: "from the context_window setting",
    SOURCE_SERVER: "reported by the server",
    SOURCE_TABLE: "from the model table",
    SOURCE_ASSUMED: "assumed: an unknown model; set context_window",
}


@dataclass(frozen=True)
class Window:
    """The window the conversation is measured against, and where the figure came from.

    ``source`` is one of ``setting``, ``server``, ``table`` or ``assumed``; ``detail``
    names the server's report (``Ollama /api/show num_ctx``) when it came from one.
    """

    tokens: int
    output: int | None
    source: str
    detail: str = ""

    def describe(self) -> str:
        """``200,000 tokens (from the model table)``: what ``/model`` and the context pane say."""
        where = SOURCE_LABELS.get(self.source, self.source)
        if self.detail:
            where += f": {self.detail}"
        return f"{self.tokens:,} tokens ({where})"


def setting_was_given(config: Any) -> bool:
    """True when the user set ``context_window`` (a flag, the environment, the config file), not the default."""
    return "context_window" in getattr(config, "model_fields_set", ())


def resolve_window(config: Any, model: str, reported: tuple[int, str] | None = None) -> Window:
    """The window of ``model`` under ``config`` (see the module docstring for the order).

    Args:
        config: The settings (``context_window``).
        model: The model's name as sent to the provider.
        reported: ``(tokens, what reported it)`` from the server, when it reported one.
    """
    limits = limits_for(model)
    output = limits.output if limits is not None else None
    if setting_was_given(config) and int(config.context_window or 0) > 0:
        return Window(int(config.context_window), output, SOURCE_SETTING)
    if reported is not None and reported[0] > 0:
        return Window(reported[0], output, SOURCE_SERVER, reported[1])
    if limits is not None:
        return Window(limits.window, output, SOURCE_TABLE)
    return Window(int(config.context_window or 0), output, SOURCE_ASSUMED)
