"""What a session offers the client besides the conversation: modes, config options, usage, a title, sign-in.

- Modes are our approval modes; the same choice is also a ``mode`` config option,
  beside a ``model`` option (the models ``/model`` offers).
- Usage (``usage_update``: context used and size, the session's cost), the title
  (``session_info_update``) and config option changes (``config_option_update``) are
  update kinds newer clients draw and older ones refuse (Toad 0.6 type-checks its
  updates): they are sent only to a client that says it is of that generation, by
  advertising the ``session`` client capabilities introduced with them.
- Sign-in: the provider keys are environment variables, so the auth methods are of
  the ``env_var`` kind: a client asks for the key, starts the agent with it set, and
  ``authenticate`` checks it arrived.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from acp.schema import (
    AuthEnvVar,
    ConfigOptionUpdate,
    Cost,
    EnvVarAuthMethod,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    SessionInfoUpdate,
    SessionMode,
    SessionModeState,
    UsageUpdate,
)

log = logging.getLogger(__name__)

MODES = [
    SessionMode(id="ask", name="Ask", description="Ask before tool calls that change things (edits, commands outside the read-only list)"),
    SessionMode(id="allow", name="Allow all", description="Run every tool call without asking"),
    SessionMode(id="deny", name="Read-only", description="Deny every tool call that would change things"),
]
"""Session modes: our approval modes (``approval_mode``), switchable from the client."""

AUTH_METHODS = [
    EnvVarAuthMethod(
        type="env_var", id="anthropic-api-key", name="Anthropic API key", link="https://console.anthropic.com/settings/keys",
        description="Claude models; the key is kept by the client and given to the agent as ANTHROPIC_API_KEY.",
        vars=[AuthEnvVar(name="ANTHROPIC_API_KEY", label="Anthropic API key")],
    ),
    EnvVarAuthMethod(
        type="env_var", id="openai-api-key", name="OpenAI-compatible API key", link="https://platform.openai.com/api-keys",
        description="OpenAI or any OpenAI-compatible endpoint (set OPENAI_BASE_URL for a local server, which needs no key).",
        vars=[AuthEnvVar(name="OPENAI_API_KEY", label="API key"), AuthEnvVar(name="OPENAI_BASE_URL", label="Endpoint (optional)", secret=False, optional=True)],
    ),
]
_AUTH_VARIABLES = {"anthropic-api-key": ("anthropic", "ANTHROPIC_API_KEY"), "openai-api-key": ("openai", "OPENAI_API_KEY")}


def takes_newer_updates(client_capabilities: Any) -> bool:
    """Whether the client draws ``usage_update``, ``session_info_update`` and ``config_option_update``."""
    return getattr(client_capabilities, "session", None) is not None


def mode_state(mode: str) -> SessionModeState:
    """The session's modes with ``mode`` current."""
    return SessionModeState(current_mode_id=mode, available_modes=MODES)


async def config_options(application: Any) -> list[SessionConfigOptionSelect]:
    """The session's config options: its mode and its model."""
    from core.compaction.commands import available_models

    state = application.session_state
    handler = application.handler
    current = f"{handler.config.provider}:{handler.model_name}"
    try:
        choices = [choice.label for choice in await available_models(handler)]
    except Exception:  # noqa: BLE001 - a local server that does not answer: the current model only
        log.exception("listing the models failed")
        choices = []
    models = list(dict.fromkeys([current, *choices]))
    return [
        SessionConfigOptionSelect(
            type="select", id="mode", name="Approval", category="mode", current_value=state.approval_mode,
            options=[SessionConfigSelectOption(value=mode.id, name=mode.name, description=mode.description) for mode in MODES],
        ),
        SessionConfigOptionSelect(
            type="select", id="model", name="Model", category="model", current_value=current,
            options=[SessionConfigSelectOption(value=model, name=model) for model in models],
        ),
    ]


def config_update(options: list[SessionConfigOptionSelect]) -> ConfigOptionUpdate:
    """A ``config_option_update`` with every option's current value."""
    return ConfigOptionUpdate(session_update="config_option_update", config_options=options)


def usage_update(metrics: dict[str, Any]) -> UsageUpdate | None:
    """Context used and size, and the session's cost so far, from a ``MetricsUpdated`` event."""
    used, size = metrics.get("estimated_tokens"), metrics.get("context_window")
    if not isinstance(used, int) or not isinstance(size, int) or size <= 0:
        return None
    cost = (metrics.get("usage") or {}).get("cost")
    return UsageUpdate(
        session_update="usage_update", used=max(0, used), size=size,
        cost=Cost(amount=float(cost), currency="USD") if isinstance(cost, (int, float)) else None,
    )


def title_update(title: str, updated_at: str | None = None) -> SessionInfoUpdate:
    """A ``session_info_update`` naming the session."""
    return SessionInfoUpdate(session_update="session_info_update", title=title, updated_at=updated_at)


def title_of(query: str) -> str:
    """A session title from its first prompt: its first line, at most 60 characters."""
    line = next((line.strip() for line in query.splitlines() if line.strip()), "")
    return line if len(line) <= 60 else line[:59].rstrip() + "…"


def auth_problem(method_id: str) -> str | None:
    """Why ``authenticate(method_id)`` cannot succeed (the key did not arrive), or None."""
    if method_id not in _AUTH_VARIABLES:
        return f"unknown authentication method {method_id!r}; the methods are {', '.join(_AUTH_VARIABLES)}"
    provider, variable = _AUTH_VARIABLES[method_id]
    if os.environ.get(variable, "").strip() or (provider == "openai" and os.environ.get("OPENAI_BASE_URL", "").strip()):
        return None
    return f"{variable} is not set in the agent's environment: enter the key in the client, which starts the agent with it."


def auth_provider(method_id: str) -> str:
    """The provider an authentication method configures."""
    return _AUTH_VARIABLES[method_id][0]
