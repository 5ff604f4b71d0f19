"""Configuration: one settings object, loaded from one place.

Precedence, highest first:

1. CLI flags (``overrides``),
2. the process environment, then a ``.env`` file in the project directory,
3. the user config file (``$XDG_CONFIG_HOME/assistant-tui/config.toml``),
4. the defaults below.

A project's ``.env`` is repository content. Until the user trusts the project it
may not redirect the API endpoint (``*_BASE_URL``); see :func:`is_trusted`.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Mapping

from core import paths

log = logging.getLogger(__name__)

ProviderName = Literal["anthropic", "openai"]

DEFAULT_MODELS: dict[str, str] = {
    "anthropic": "claude-sonnet-4-5",
    "openai": "gpt-4o-mini",
}

# Settings field -> environment variable.
ENV_VARS: dict[str, str] = {
    "provider": "ASSISTANT_TUI_PROVIDER",
    "model": "ASSISTANT_TUI_MODEL",
    "max_tool_calls": "ASSISTANT_TUI_MAX_TOOL_CALLS",
    "max_turns": "ASSISTANT_TUI_MAX_TURNS",
    "context_window": "ASSISTANT_TUI_CONTEXT_WINDOW",
    "approval_mode": "ASSISTANT_TUI_APPROVAL_MODE",
    "aider_model": "ASSISTANT_TUI_AIDER_MODEL",
    "aider_auto_commit": "ASSISTANT_TUI_AIDER_AUTO_COMMIT",
    "command_timeout": "ASSISTANT_TUI_COMMAND_TIMEOUT",
    "tool_timeout": "ASSISTANT_TUI_TOOL_TIMEOUT",
    "max_tool_result_chars": "ASSISTANT_TUI_MAX_TOOL_RESULT_CHARS",
    "idle_timeout": "ASSISTANT_TUI_IDLE_TIMEOUT",
    "max_retries": "ASSISTANT_TUI_MAX_RETRIES",
    "mcp_config": "ASSISTANT_TUI_MCP_CONFIG",
    "mcp_allow_read_only": "ASSISTANT_TUI_MCP_ALLOW_READ_ONLY",
    "prompt_cache": "ASSISTANT_TUI_PROMPT_CACHE",
    "cache_ttl": "ASSISTANT_TUI_CACHE_TTL",
    "max_cost": "ASSISTANT_TUI_MAX_COST",
    "max_turn_cost": "ASSISTANT_TUI_MAX_TURN_COST",
    "max_session_tokens": "ASSISTANT_TUI_MAX_SESSION_TOKENS",
    "max_turn_tokens": "ASSISTANT_TUI_MAX_TURN_TOKENS",
    "thinking": "ASSISTANT_TUI_THINKING",
    "command_approval": "ASSISTANT_TUI_COMMAND_APPROVAL",
    "test_command": "ASSISTANT_TUI_TEST_COMMAND",
    "auto_test": "ASSISTANT_TUI_AUTO_TEST",
    "auto_test_attempts": "ASSISTANT_TUI_AUTO_TEST_ATTEMPTS",
    "sandbox_timeout": "ASSISTANT_TUI_SANDBOX_TIMEOUT",
    "sandbox_max_processes": "ASSISTANT_TUI_SANDBOX_MAX_PROCESSES",
    "sandbox_max_output": "ASSISTANT_TUI_SANDBOX_MAX_OUTPUT",
    "sandbox_paths": "ASSISTANT_TUI_SANDBOX_PATHS",
    "allow_unsandboxed": "ASSISTANT_TUI_ALLOW_UNSANDBOXED",
    "anthropic_api_key": "ANTHROPIC_API_KEY",
    "anthropic_base_url": "ANTHROPIC_BASE_URL",
    "openai_api_key": "OPENAI_API_KEY",
    "openai_base_url": "OPENAI_BASE_URL",
}

SECRET_FIELDS = frozenset({"anthropic_api_key", "openai_api_key"})
# Keys a repository's .env may not set before the project is trusted (endpoints; MCP servers run programs).
ENDPOINT_FIELDS = frozenset({"anthropic_base_url", "openai_base_url", "mcp_config", "mcp_allow_read_only"})
# Tables of the user config file read elsewhere (core.mcp.config), not Settings fields.
OTHER_SECTIONS = frozenset({"mcp_servers"})


BUDGET_FIELDS = frozenset({"max_cost", "max_turn_cost"})
"""Float settings where 0 is allowed (it means no budget)."""


class ConfigError(ValueError):
    """A setting has a value that cannot be used; the message says which and why."""


@dataclass(kw_only=True)
class Settings:
    """Everything configurable about assistant-tui."""

    provider: ProviderName = "anthropic"
    """Which model provider to use: ``anthropic`` or ``openai`` (any OpenAI-compatible endpoint)."""
    model: str = ""
    """Chat model name; empty means the provider's default (see ``DEFAULT_MODELS``)."""
    max_tool_calls: int = 10
    """Most tool calls the model may make in one user turn."""
    max_turns: int = 0
    """Most model responses per user turn; 0 means no limit beyond the tool-call guard."""
    context_window: int = 200_000
    """Context window in tokens; requests estimated above it are not sent."""
    approval_mode: Literal["ask", "allow", "deny"] = "ask"
    """What to do with tool calls that change things: ask the user, allow all, or deny all."""
    aider_model: str = ""
    """Model aider uses, in aider's naming; empty means the chat model."""
    aider_auto_commit: bool = False
    """Let aider commit its edits."""
    command_timeout: float = 30.0
    """Seconds a file-finding command may run before its process group is killed."""
    max_tool_result_chars: int = 100_000
    """Characters of one tool result kept for the model, the history and the transcript."""
    tool_timeout: float = 900.0
    """Seconds any one tool call may run before it is abandoned with an error result."""
    idle_timeout: float = 90.0
    """Seconds a streaming response may stay silent before it is abandoned."""
    max_retries: int = 2
    """Retries the SDK makes on rate limits, overloads and connection errors."""
    mcp_enabled: bool = True
    """Start the configured MCP servers (``--no-mcp`` turns them off)."""
    mcp_config: str = ""
    """An extra MCP server file (``--mcp-config``): ``.mcp.json`` format, or TOML with ``[mcp_servers.NAME]``."""
    mcp_allow_read_only: bool = False
    """Run MCP tools that their server marks read-only (``readOnlyHint``) without asking."""
    prompt_cache: bool = True
    """Mark prompt-cache breakpoints on Anthropic requests (OpenAI-compatible endpoints cache by themselves)."""
    cache_ttl: Literal["5m", "1h"] = "5m"
    """Anthropic cache lifetime: ``5m`` (writes cost 1.25x input) or ``1h`` (2x; worth it with long pauses)."""
    max_cost: float = 0.0
    """Session budget in US dollars (estimated from the price table); 0 means none."""
    max_turn_cost: float = 0.0
    """Budget of one user turn in US dollars; 0 means none."""
    max_session_tokens: int = 0
    """Session budget in tokens (input, cached or not, plus output); 0 means none."""
    max_turn_tokens: int = 0
    """Budget of one user turn in tokens; 0 means none."""
    prices: dict[str, dict[str, float]] = field(default_factory=dict)
    """Price overrides, config file only: ``[prices."model"]`` with ``input``, ``output``, ``cache_write``, ``cache_read`` ($/Mtok)."""
    thinking: str = "off"
    """Anthropic extended thinking: ``off`` or a token budget (at least 1024)."""
    command_approval: Literal["ask", "sandbox-auto", "deny"] = "ask"
    """Commands the model runs (runCommand, runTests): ask each time, run sandboxed ones without asking, or deny."""
    test_command: str = ""
    """The project's test command; empty means detected (pytest, npm test, cargo test, go test ./..., make test)."""
    auto_test: bool = False
    """Run the tests after every aiderAutomatic edit and hand failures back to aider."""
    auto_test_attempts: int = 2
    """Most times aider is asked to fix failing tests after one edit."""
    sandbox_timeout: float = 300.0
    """Longest wall-clock seconds a sandboxed command may run (runCommand's timeout_s is capped at it)."""
    sandbox_max_processes: int = 256
    """Most processes and threads alive at once in the sandbox."""
    sandbox_max_output: int = 4_000_000
    """Bytes of output a sandboxed command may print before it is stopped."""
    sandbox_paths: str = ""
    """Extra host paths visible read-only in the sandbox (toolchains outside /usr), separated by ':'."""
    allow_unsandboxed: bool = False
    """When the sandbox is unavailable, let commands run unsandboxed (each one still asks)."""
    anthropic_api_key: str = field(default="", repr=False)
    anthropic_base_url: str = ""
    openai_api_key: str = field(default="", repr=False)
    openai_base_url: str = ""
    project_root: Path = field(default_factory=Path.cwd)
    """The project the assistant works in; tools never reach outside it."""
    base_system_prompt: str = ""
    """Replaces the default base system prompt when set."""

    @property
    def model_name(self) -> str:
        """The chat model, defaulted per provider."""
        return self.model or DEFAULT_MODELS[self.provider]

    @property
    def thinking_budget(self) -> int:
        """The extended-thinking budget in tokens; 0 when thinking is off."""
        return 0 if self.thinking in ("", "off", "0") else int(self.thinking)

    @property
    def api_key(self) -> str:
        return self.anthropic_api_key if self.provider == "anthropic" else self.openai_api_key

    @property
    def base_url(self) -> str:
        return self.anthropic_base_url if self.provider == "anthropic" else self.openai_base_url

    @property
    def provider_configured(self) -> bool:
        """True when the provider has a key or an endpoint (local servers need no key)."""
        return bool(self.api_key or self.base_url)

    def secrets(self) -> list[str]:
        """Secret values that must never reach logs, the model or child processes."""
        return [value for name in SECRET_FIELDS if (value := getattr(self, name))]


def _coerce(name: str, raw: Any) -> Any:
    """Convert a raw (string or TOML) value to the field's type, or raise ConfigError."""
    current = Settings.__dataclass_fields__[name]
    default = current.default
    try:
        if isinstance(default, bool):
            if isinstance(raw, bool):
                return raw
            text = str(raw).strip().lower()
            if text in {"1", "true", "yes", "on"}:
                return True
            if text in {"0", "false", "no", "off", ""}:
                return False
            raise ValueError(raw)
        if isinstance(default, int):
            value = int(raw)
            if value < 0:
                raise ValueError(raw)
            return value
        if isinstance(default, float):
            value = float(raw)
            if value < 0 or (value == 0 and name not in BUDGET_FIELDS):
                raise ValueError(raw)
            return value
    except (TypeError, ValueError):
        raise ConfigError(f"{name} must be a {'boolean' if isinstance(default, bool) else 'non-negative number'}, got {raw!r}") from None
    if name == "project_root":
        return Path(raw)
    if name == "prices":
        if not isinstance(raw, dict):
            raise ConfigError("prices must be a table of model tables in the config file, e.g. [prices.\"my-model\"] input = 1.0")
        return raw
    value = str(raw).strip()
    if name == "provider" and value not in DEFAULT_MODELS:
        raise ConfigError(f"provider must be 'anthropic' or 'openai', got {value!r}")
    if name == "cache_ttl" and value not in {"5m", "1h"}:
        raise ConfigError(f"cache_ttl must be '5m' or '1h', got {value!r}")
    if name == "thinking":
        value = value.lower() or "off"
        if value in {"off", "0", "false", "no"}:
            return "off"
        if not value.isdigit() or int(value) < 1024:
            raise ConfigError(f"thinking must be 'off' or a token budget of at least 1024, got {raw!r}")
        return str(int(value))
    if name == "approval_mode" and value not in {"ask", "allow", "deny"}:
        raise ConfigError(f"approval_mode must be 'ask', 'allow' or 'deny', got {value!r}")
    if name == "command_approval" and value not in {"ask", "sandbox-auto", "deny"}:
        raise ConfigError(f"command_approval must be 'ask', 'sandbox-auto' or 'deny', got {value!r}")
    return value


def read_user_config(path: Path | None = None) -> dict[str, Any]:
    """The user config file's values, or {} when there is none.

    Raises:
        ConfigError: the file exists but is not valid TOML.
    """
    path = path or paths.config_file()
    if not path.is_file():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from None
    unknown = sorted(set(data) - set(Settings.__dataclass_fields__) - OTHER_SECTIONS)
    if unknown:
        log.warning("ignoring unknown keys in %s: %s", path, ", ".join(unknown))
    return {k: v for k, v in data.items() if k in Settings.__dataclass_fields__}


def trusted_projects_file() -> Path:
    return paths.config_dir() / "trusted-projects"


def is_trusted(project_root: Path) -> bool:
    """True when the user has trusted this project's own configuration (its ``.env`` endpoints)."""
    try:
        lines = trusted_projects_file().read_text(encoding="utf-8").splitlines()
    except OSError:
        return False
    return str(project_root.resolve()) in {line.strip() for line in lines}


def trust_project(project_root: Path) -> None:
    """Record that the user trusts this project's configuration."""
    target = trusted_projects_file()
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("a", encoding="utf-8") as fh:
        fh.write(str(project_root.resolve()) + "\n")


def read_project_env(project_root: Path) -> dict[str, str]:
    """Values of the project's ``.env`` for the variables we read (untrusted projects lose endpoints)."""
    env_file = project_root / ".env"
    if not env_file.is_file():
        return {}
    from dotenv import dotenv_values

    values = {k: v for k, v in dotenv_values(env_file).items() if v is not None}
    if not is_trusted(project_root):
        for name in ENDPOINT_FIELDS:
            if values.pop(ENV_VARS[name], None) is not None:
                log.warning("ignoring %s from %s: the project is not trusted", ENV_VARS[name], env_file)
    return values


def load_settings(
    overrides: Mapping[str, Any] | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    project_root: Path | None = None,
    user_config: Path | None = None,
) -> Settings:
    """Build the settings from flags, environment, project ``.env``, user config and defaults.

    Args:
        overrides: values from CLI flags; ``None`` values are ignored.
        environ: the environment (defaults to ``os.environ``).
        project_root: the project directory (defaults to the current directory).
        user_config: path of the user config file (defaults to the XDG location).

    Raises:
        ConfigError: a value is invalid; the message names the setting.
    """
    environ = os.environ if environ is None else environ
    root = Path(project_root or (overrides or {}).get("project_root") or Path.cwd()).resolve()
    values: dict[str, Any] = {}
    values.update(read_user_config(user_config))
    project_env = read_project_env(root)
    for name, var in ENV_VARS.items():
        if var in environ and environ[var] != "":
            values[name] = environ[var]
        elif var in project_env and project_env[var] != "":
            values[name] = project_env[var]
    for name, value in (overrides or {}).items():
        if value is not None:
            values[name] = value
    values["project_root"] = root
    kwargs = {name: _coerce(name, raw) for name, raw in values.items() if name in Settings.__dataclass_fields__}
    return Settings(**kwargs)


def replace(settings: Settings, **changes: Any) -> Settings:
    """A copy of ``settings`` with some fields changed."""
    return dataclasses.replace(settings, **changes)
