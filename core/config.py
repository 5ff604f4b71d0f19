"""Configuration: one settings object, loaded from one place.

Precedence, highest first:

1. CLI flags (``overrides``),
2. the process environment, then a ``.env`` file in the project directory,
3. the user config file (``$XDG_CONFIG_HOME/assistant-tui/config.toml``),
4. the defaults below.

:class:`Settings` is a pydantic-settings model; :func:`load_settings` builds it from
one settings source per layer (posting loads its settings the same way). A project's
``.env`` is repository content: until the user trusts the project it may set only the
keys of :data:`UNTRUSTED_KEYS` (none); every other key it holds is ignored and named in
:attr:`Settings.notices` (:class:`TrustedDotEnvSource`, :mod:`core.trust`).
``Settings(...)`` called directly uses only the values it is given.
"""

from __future__ import annotations

import logging
import os
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal, Mapping, get_args

from pydantic import Field, PrivateAttr, ValidationError, field_validator
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    InitSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from core import paths
from core.trust import is_trusted, root_problem, trust_project, trusted_projects_file  # noqa: F401 - also imported from here

log = logging.getLogger(__name__)

ProviderName = Literal["anthropic", "openai"]

DEFAULT_MODELS: dict[str, str] = {
    "anthropic": "claude-sonnet-4-5",
    "openai": "gpt-4o-mini",
}

Count = Annotated[int, Field(ge=0)]
Seconds = Annotated[float, Field(gt=0)]
Dollars = Annotated[float, Field(ge=0)]
"""A budget: 0 means none."""

SECRET_FIELDS = frozenset({"anthropic_api_key", "openai_api_key"})
UNTRUSTED_KEYS: frozenset[str] = frozenset()
"""Settings fields a project's ``.env`` may set before the user trusts the project: none.

An allowlist: a field joins only if it cannot widen what runs, what is read, where
requests go or what is spent. Every field so far does one of these (approvals, sandbox
paths, endpoints, keys: an attacker's key routes the conversation to their account,
model, thinking and budgets: spending, timeouts and limits: what runs)."""
# Tables of the user config file read elsewhere (core.mcp.config), not Settings fields.
OTHER_SECTIONS = frozenset({"mcp_servers"})
ENV_PREFIX = "ASSISTANT_TUI_"
SDK_VARIABLES = {
    "anthropic_api_key": "ANTHROPIC_API_KEY",
    "anthropic_base_url": "ANTHROPIC_BASE_URL",
    "openai_api_key": "OPENAI_API_KEY",
    "openai_base_url": "OPENAI_BASE_URL",
}
"""Fields read from the SDKs' own variables instead of ``ASSISTANT_TUI_<FIELD>``."""
NOT_FROM_ENVIRONMENT = frozenset({"mcp_enabled", "prices", "project_root", "base_system_prompt"})
"""Fields set only by a flag (``--no-mcp``, ``--project``), the config file, or code."""


class ConfigError(ValueError):
    """A setting has a value that cannot be used; the message says which and why."""


class Settings(BaseSettings):
    """Everything configurable about assistant-tui."""

    model_config = SettingsConfigDict(
        extra="forbid",
        validate_default=False,
        coerce_numbers_to_str=True,
        frozen=True,
    )
    """Read-only once loaded (issue 24): a change of mode or model is the session's, never written here."""

    provider: ProviderName = "anthropic"
    """Which model provider to use: ``anthropic`` or ``openai`` (any OpenAI-compatible endpoint)."""
    model: str = ""
    """Chat model name; empty means the provider's default (see ``DEFAULT_MODELS``)."""
    max_tool_calls: Count = 10
    """Most tool calls the model may make in one user turn."""
    max_turns: Count = 0
    """Most model responses per user turn; 0 means no limit beyond the tool-call guard."""
    context_window: Count = 200_000
    """Context window in tokens when set; unset, the model's own (the window table, or what a local server reports)."""
    compact_at: Annotated[float, Field(ge=0, le=1)] = 0.85
    """Share of the window at which the conversation is compacted before a request; 0 turns automatic compaction off."""
    approval_mode: Literal["ask", "allow", "deny"] = "ask"
    """What to do with tool calls that change things: ask the user, allow all, or deny all."""
    aider_model: str = ""
    """Model aider uses, in aider's naming; empty means the chat model."""
    aider_auto_commit: bool = False
    """Let aider commit its edits."""
    command_timeout: Seconds = 30.0
    """Seconds a file-finding command may run before its process group is killed."""
    max_tool_result_chars: Count = 100_000
    """Characters of one tool result kept for the model, the history and the transcript."""
    tool_timeout: Seconds = 900.0
    """Seconds any one tool call may run before it is abandoned with an error result."""
    idle_timeout: Seconds = 90.0
    """Seconds a streaming response may stay silent before it is abandoned."""
    max_retries: Count = 2
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
    max_cost: Dollars = 0.0
    """Session budget in US dollars (estimated from the price table); 0 means none."""
    max_turn_cost: Dollars = 0.0
    """Budget of one user turn in US dollars; 0 means none."""
    max_session_tokens: Count = 0
    """Session budget in tokens (input, cached or not, plus output); 0 means none."""
    max_turn_tokens: Count = 0
    """Budget of one user turn in tokens; 0 means none."""
    prices: dict[str, dict[str, float]] = Field(default_factory=dict)
    """Price overrides, config file only: ``[prices."model"]`` with ``input``, ``output``, ``cache_write``, ``cache_read`` ($/Mtok)."""
    thinking: str = "off"
    """Anthropic extended thinking: ``off`` or a token budget (at least 1024)."""
    command_approval: Literal["ask", "sandbox-auto", "deny"] = "ask"
    """Commands the model runs (runCommand, runTests): ask each time, run sandboxed ones without asking, or deny."""
    test_command: str = ""
    """The project's test command; empty means detected (pytest, npm test, cargo test, go test ./..., make test)."""
    auto_test: bool = False
    """Run the tests after every aiderAutomatic edit and hand failures back to aider."""
    auto_test_attempts: Count = 2
    """Most times aider is asked to fix failing tests after one edit."""
    sandbox_timeout: Seconds = 300.0
    """Longest wall-clock seconds a sandboxed command may run (runCommand's timeout_s is capped at it)."""
    sandbox_max_processes: Count = 256
    """Most processes and threads alive at once in the sandbox."""
    sandbox_max_output: Count = 4_000_000
    """Bytes of output a sandboxed command may print before it is stopped."""
    sandbox_paths: str = ""
    """Extra host paths visible read-only in the sandbox (toolchains outside /usr), separated by ':'."""
    allow_unsandboxed: bool = False
    """When the sandbox is unavailable, let commands run unsandboxed (each one still asks)."""
    anthropic_api_key: str = Field(default="", repr=False)
    """Anthropic API key (the SDK's own variable)."""
    anthropic_base_url: str = ""
    """Anthropic endpoint (a project's ``.env``, like any of its keys, applies only once the project is trusted)."""
    openai_api_key: str = Field(default="", repr=False)
    """Key of the OpenAI-compatible endpoint (local servers need none)."""
    openai_base_url: str = ""
    """OpenAI-compatible endpoint (a project's ``.env`` applies only once the project is trusted)."""
    project_root: Path = Field(default_factory=Path.cwd)
    """The project the assistant works in; tools never reach outside it."""
    base_system_prompt: str = ""
    """Replaces the default base system prompt when set."""

    @field_validator("*", mode="before")
    @classmethod
    def _strip(cls, value: Any) -> Any:
        return value.strip() if isinstance(value, str) else value

    @field_validator("thinking", mode="before")
    @classmethod
    def _thinking(cls, value: Any) -> str:
        text = str(value).strip().lower() or "off"
        if text in {"off", "0", "false", "no"}:
            return "off"
        if not text.isdigit() or int(text) < 1024:
            raise ValueError(f"thinking must be 'off' or a token budget of at least 1024, got {value!r}")
        return str(int(text))

    @field_validator("prices", mode="before")
    @classmethod
    def _prices(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            raise ValueError(PRICES_HELP)
        return value

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """``Settings(...)`` takes only its arguments; :func:`load_settings` passes the layered sources."""
        return (init_settings,)

    _notices: list[str] = PrivateAttr(default_factory=list)

    @property
    def notices(self) -> list[str]:
        """What loading ignored and the user should hear (an untrusted ``.env``'s keys, unknown config keys, a root holding HOME)."""
        return self._notices

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
        """The configured provider's key."""
        return self.anthropic_api_key if self.provider == "anthropic" else self.openai_api_key

    @property
    def base_url(self) -> str:
        """The configured provider's endpoint ("" for the SDK's default)."""
        return self.anthropic_base_url if self.provider == "anthropic" else self.openai_base_url

    @property
    def provider_configured(self) -> bool:
        """True when the provider has a key or an endpoint (local servers need no key)."""
        return bool(self.api_key or self.base_url)

    def secrets(self) -> list[str]:
        """Secret values that must never reach logs, the model or child processes."""
        return [value for name in SECRET_FIELDS if (value := getattr(self, name))]


PRICES_HELP = 'prices must be a table of model tables in the config file, e.g. [prices."my-model"] input = 1.0'

ENV_VARS: dict[str, str] = {
    name: SDK_VARIABLES.get(name, ENV_PREFIX + name.upper()) for name in Settings.model_fields if name not in NOT_FROM_ENVIRONMENT
}
"""Settings field -> environment variable (also read from the project's ``.env``)."""


class VariablesSource(PydanticBaseSettingsSource):
    """Settings from environment variables (:data:`ENV_VARS`); empty values count as unset."""

    def __init__(self, settings_cls: type[BaseSettings], variables: Mapping[str, str]) -> None:
        super().__init__(settings_cls)
        self.variables = variables

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        variable = ENV_VARS.get(field_name, "")
        return self.variables.get(variable) or None, field_name, False

    def __call__(self) -> dict[str, Any]:
        return {name: value for name in ENV_VARS if (value := self.get_field_value(FieldInfo(), name)[0]) is not None}


class TrustedDotEnvSource(VariablesSource):
    """The project's ``.env``; until the project is trusted only :data:`UNTRUSTED_KEYS` apply."""

    def __init__(self, settings_cls: type[BaseSettings], project_root: Path) -> None:
        self.notices: list[str] = []
        """What was ignored, for the user (:attr:`Settings.notices`): the keys, never their values."""
        values = read_project_env(project_root)
        if values and not is_trusted(project_root):
            if ignored := ignored_variables(values):
                self.notices.append(
                    f"ignoring {', '.join(ignored)} from {project_root / '.env'}: the project is not trusted "
                    "(trust it when assistant-tui asks at start, or run assistant-tui --trust)"
                )
            allowed = {ENV_VARS[name] for name in UNTRUSTED_KEYS}
            values = {name: value for name, value in values.items() if name in allowed}
        super().__init__(settings_cls, values)


def read_project_env(project_root: Path) -> dict[str, str]:
    """The variables of the project's ``.env`` (empty when there is none), trusted or not."""
    env_file = Path(project_root) / ".env"
    if not env_file.is_file():
        return {}
    from dotenv import dotenv_values

    try:
        return {k: v for k, v in dotenv_values(env_file).items() if v is not None}
    except (OSError, UnicodeDecodeError) as exc:
        log.warning("cannot read %s: %s", env_file, exc)
        return {}


def ignored_variables(values: Mapping[str, str]) -> list[str]:
    """The variables of an untrusted ``.env`` that would configure us and are ignored, sorted.

    Ours (:data:`ENV_VARS`, and any ``ASSISTANT_TUI_*``) beyond :data:`UNTRUSTED_KEYS`;
    a variable we never read (``STRIPE_KEY``) is not configuration and is not named.
    """
    allowed = {ENV_VARS[name] for name in UNTRUSTED_KEYS}
    ours = set(ENV_VARS.values())
    return sorted(name for name in values if (name in ours or name.startswith(ENV_PREFIX)) and name not in allowed)


SECRET_VARIABLES = frozenset(ENV_VARS[name] for name in SECRET_FIELDS)
"""The variables whose values are never shown (the trust question masks them)."""


class UserConfigSource(TomlConfigSettingsSource):
    """The user config file; unknown keys are logged and ignored, unreadable TOML is a ConfigError."""

    def __init__(self, settings_cls: type[BaseSettings], path: Path) -> None:
        super().__init__(settings_cls, toml_file=path)
        unknown = sorted(set(self.toml_data) - set(settings_cls.model_fields) - OTHER_SECTIONS)
        self.notices = [f"ignoring unknown keys in {path}: {', '.join(unknown)}"] if unknown else []
        """What was ignored, for the user (:attr:`Settings.notices`)."""

    def _read_file(self, file_path: Path) -> dict[str, Any]:  # type: ignore[override]
        try:
            return tomllib.loads(file_path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise ConfigError(f"cannot read {file_path}: {exc}") from None

    def __call__(self) -> dict[str, Any]:
        return {k: v for k, v in super().__call__().items() if k in self.settings_cls.model_fields}


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
        ConfigError: a value is invalid or the config file unreadable; the message names the setting.
    """
    flags = {k: v for k, v in (overrides or {}).items() if v is not None and k in Settings.model_fields}
    root = Path(project_root or flags.get("project_root") or Path.cwd()).resolve()
    flags["project_root"] = root
    dotenv, user = TrustedDotEnvSource(Settings, root), UserConfigSource(Settings, user_config or paths.config_file())
    sources = (InitSettingsSource(Settings, init_kwargs=flags), VariablesSource(Settings, os.environ if environ is None else environ), dotenv, user)
    try:
        settings = Settings(_build_sources=(sources, flags))
    except ValidationError as exc:
        raise ConfigError("; ".join(_explain(error) for error in exc.errors())) from None
    settings._notices = [*dotenv.notices, *user.notices]
    if problem := root_problem(root):
        settings._notices.append(f"{problem} (commands are refused there)")
    for notice in settings.notices:
        log.warning("%s", notice)
    return settings


def _explain(error: Mapping[str, Any]) -> str:
    """One validation error as the sentence a user needs: the setting, what it accepts, what it got."""
    location = error.get("loc") or ("settings",)
    name, value = str(location[0]), error.get("input")
    if error.get("type") == "value_error":
        return str(error["ctx"]["error"])
    if name == "prices":
        return f"{PRICES_HELP} ({'.'.join(map(str, location[1:]))}: {error.get('msg')})"
    annotation = Settings.model_fields[name].annotation if name in Settings.model_fields else None
    if annotation is bool:
        return f"{name} must be a boolean, got {value!r}"
    if get_args(annotation) and all(isinstance(option, str) for option in get_args(annotation)):
        options = [repr(option) for option in get_args(annotation)]
        return f"{name} must be {', '.join(options[:-1])} or {options[-1]}, got {value!r}"
    if annotation in (int, float):
        return f"{name} must be a non-negative number, got {value!r}"
    return f"{name}: {error.get('msg')}, got {value!r}"


def provider_missing_message(settings: Any) -> str:
    """What to set when the chosen provider has neither a key nor an endpoint (and why the project's .env did not count).

    Said by ``-p`` and by ACP's session/new alike.
    """
    message = (
        f"no {settings.provider} provider is configured: set "
        + ("ANTHROPIC_API_KEY (or ANTHROPIC_BASE_URL)" if settings.provider == "anthropic" else "OPENAI_API_KEY or OPENAI_BASE_URL")
        + " in the environment or .env, or choose another with --provider"
    )
    prefix = "ANTHROPIC_" if settings.provider == "anthropic" else "OPENAI_"
    ignored = sorted(k for k in read_project_env(settings.project_root) if k in (prefix + "API_KEY", prefix + "BASE_URL"))
    if ignored and not is_trusted(settings.project_root):
        message += (f"; the project's .env sets {', '.join(ignored)}, which applies only once you trust the project "
                    "(assistant-tui --trust, once)")
    return message
