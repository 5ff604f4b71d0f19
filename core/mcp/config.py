"""MCP server configuration: ``[mcp_servers.NAME]`` in config.toml, a project's ``.mcp.json``, ``--mcp-config``.

The user config file is the user's own and always read. A project's ``.mcp.json``
(Claude Code's format, ``{"mcpServers": {NAME: {...}}}``) is repository content: it
names programs to run, so it is read only when the project is trusted, the same
rule as the ``*_BASE_URL`` endpoints of its ``.env`` (:func:`core.config.is_trusted`).
A file given with ``--mcp-config`` is read as given (the user chose it).

Both formats describe a server as ``command`` + ``args`` + ``env`` + ``cwd`` (stdio)
or ``url`` (+ ``headers``) for streamable HTTP. ``${VAR}`` and ``${VAR:-default}`` in
those values are expanded from our environment, as Claude Code does, except our
own provider keys, which never reach a server.
"""

from __future__ import annotations

import json
import logging
import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

log = logging.getLogger(__name__)

DEFAULT_STARTUP_TIMEOUT = 30.0
"""Seconds a server may take to start and list its tools."""
DEFAULT_CALL_TIMEOUT = 120.0
"""Seconds one tool call may run before it is cancelled."""

_NAME = re.compile(r"^[A-Za-z0-9_-]{1,40}$")
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
# Our provider credentials: a server config may not pull them in through ${VAR}.
_OUR_KEYS = frozenset({"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_AUTH_TOKEN"})
_KNOWN_KEYS = frozenset(
    {"command", "args", "env", "cwd", "url", "headers", "type", "allow", "enabled", "startup_timeout", "tool_timeout"}
)


class McpConfigError(ValueError):
    """A server entry cannot be used; the message names the server, the source and the problem."""


@dataclass(frozen=True, kw_only=True)
class McpServerConfig:
    """One configured MCP server."""

    name: str
    """Its name in the config; tools are registered as ``mcp__NAME__TOOL``."""
    source: str
    """Where it was configured (a file path), for messages."""
    command: str = ""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    """Exactly the variables the server gets (plus a minimal PATH and git hardening)."""
    cwd: str = ""
    url: str = ""
    """Streamable HTTP endpoint (instead of ``command``)."""
    headers: Mapping[str, str] = field(default_factory=dict)
    allow: tuple[str, ...] = ()
    """Tools that run without asking (``"*"``: every tool of the server)."""
    enabled: bool = True
    startup_timeout: float = DEFAULT_STARTUP_TIMEOUT
    tool_timeout: float = DEFAULT_CALL_TIMEOUT

    @property
    def transport(self) -> str:
        """``"http"`` for a URL, else ``"stdio"``."""
        return "http" if self.url else "stdio"

    def allows(self, tool: str) -> bool:
        """True when ``tool`` is on this server's allow list."""
        return "*" in self.allow or tool in self.allow

    def describe(self) -> str:
        """The command line or URL, for ``/mcp`` (environment values are not shown)."""
        return self.url or " ".join([self.command, *self.args])


def parse_server(name: str, raw: Any, source: str, environ: Mapping[str, str] | None = None) -> McpServerConfig:
    """Validate one server entry of either format.

    Raises:
        McpConfigError: the entry is not usable; the message says why.
    """
    where = f"MCP server {name!r} in {source}"
    if not _NAME.match(name):
        raise McpConfigError(f"{where}: the name may only use letters, digits, '-' and '_' (at most 40)")
    if not isinstance(raw, dict):
        raise McpConfigError(f"{where}: expected a table of settings, got {type(raw).__name__}")
    unknown = sorted(set(raw) - _KNOWN_KEYS)
    if unknown:
        log.warning("%s: ignoring unknown keys %s", where, ", ".join(unknown))
    environ = os.environ if environ is None else environ
    kind = raw.get("type", "")
    if kind not in ("", "stdio", "http", "streamable-http", "streamable_http"):
        raise McpConfigError(f"{where}: transport type {kind!r} is not supported (use a command, or type \"http\" with a url)")
    command = _text(raw.get("command", ""), where, "command", environ)
    url = _text(raw.get("url", ""), where, "url", environ)
    if bool(command) == bool(url):
        raise McpConfigError(f"{where}: give either a command (stdio) or a url (streamable HTTP)")
    if url and not url.startswith(("http://", "https://")):
        raise McpConfigError(f"{where}: url must start with http:// or https://, got {url!r}")
    args = raw.get("args", [])
    if not isinstance(args, list):
        raise McpConfigError(f"{where}: args must be a list of strings")
    allow = raw.get("allow", [])
    if allow is True:
        allow = ["*"]
    if not isinstance(allow, list) or not all(isinstance(a, str) for a in allow):
        raise McpConfigError(f"{where}: allow must be a list of tool names (or [\"*\"] / true for all)")
    return McpServerConfig(
        name=name,
        source=source,
        command=command,
        args=tuple(_text(a, where, "args", environ) for a in args),
        env=_table(raw.get("env", {}), where, "env", environ),
        cwd=_text(raw.get("cwd", ""), where, "cwd", environ),
        url=url,
        headers=_table(raw.get("headers", {}), where, "headers", environ),
        allow=tuple(allow),
        enabled=bool(raw.get("enabled", True)),
        startup_timeout=_seconds(raw.get("startup_timeout", DEFAULT_STARTUP_TIMEOUT), where, "startup_timeout"),
        tool_timeout=_seconds(raw.get("tool_timeout", DEFAULT_CALL_TIMEOUT), where, "tool_timeout"),
    )


def _text(value: Any, where: str, key: str, environ: Mapping[str, str]) -> str:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        raise McpConfigError(f"{where}: {key} must be text, got {type(value).__name__}")

    def expand(match: re.Match[str]) -> str:
        variable, default = match.group(1), match.group(2)
        if variable in _OUR_KEYS:
            raise McpConfigError(f"{where}: {key} refers to ${{{variable}}}, our provider key, which is never passed to a server")
        if variable in environ:
            return environ[variable]
        if default is not None:
            return default
        raise McpConfigError(f"{where}: {key} refers to ${{{variable}}}, which is not set")

    return _VARIABLE.sub(expand, value)


def _table(value: Any, where: str, key: str, environ: Mapping[str, str]) -> dict[str, str]:
    if not isinstance(value, dict):
        raise McpConfigError(f"{where}: {key} must be a table of names to text values")
    return {str(k): _text(v, where, f"{key}.{k}", environ) for k, v in value.items()}


def _seconds(value: Any, where: str, key: str) -> float:
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        seconds = -1.0
    if seconds <= 0:
        raise McpConfigError(f"{where}: {key} must be a positive number of seconds, got {value!r}")
    return seconds


@dataclass
class McpConfig:
    """Every configured server, and the problems met while reading them."""

    servers: dict[str, McpServerConfig] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    """One sentence per entry or file that could not be used (shown by ``/mcp``)."""
    skipped: list[str] = field(default_factory=list)
    """Notes on files not read (an untrusted project's ``.mcp.json``)."""


def load_mcp_config(
    project_root: Path,
    *,
    user_config: Path | None = None,
    extra_file: str | Path | None = None,
    trusted: bool | None = None,
    environ: Mapping[str, str] | None = None,
) -> McpConfig:
    """Servers from the user config, the project's ``.mcp.json`` (when trusted) and ``--mcp-config``.

    Later sources replace servers of the same name: user config, then project, then
    the ``--mcp-config`` file. Problems never raise: they are collected in ``errors``.
    """
    from core import paths
    from core.config import is_trusted

    config = McpConfig()
    user_path = user_config or paths.config_file()
    if user_path.is_file():
        _add_servers(config, _read_toml_servers(user_path, config), str(user_path), environ)
    project_file = project_root / ".mcp.json"
    if project_file.is_file():
        if trusted if trusted is not None else is_trusted(project_root):
            _add_servers(config, _read_json_servers(project_file, config), str(project_file), environ)
        else:
            config.skipped.append(f"{project_file} was not read: the project is not trusted "
                                  "(trust it when assistant-tui asks at start, or run assistant-tui --trust)")
            log.warning("ignoring %s: the project is not trusted", project_file)
    if extra_file:
        path = Path(extra_file).expanduser()
        if not path.is_file():
            config.errors.append(f"--mcp-config {path}: no such file")
        elif path.suffix == ".toml":
            _add_servers(config, _read_toml_servers(path, config), str(path), environ)
        else:
            _add_servers(config, _read_json_servers(path, config), str(path), environ)
    return config


def read_project_servers(project_root: Path, environ: Mapping[str, str] | None = None) -> McpConfig:
    """The servers of the project's ``.mcp.json``, trusted or not: what trusting it would start (nothing is started)."""
    config = McpConfig()
    project_file = Path(project_root) / ".mcp.json"
    if project_file.is_file():
        _add_servers(config, _read_json_servers(project_file, config), str(project_file), environ)
    return config


def _read_toml_servers(path: Path, config: McpConfig) -> Any:
    """The ``[mcp_servers]`` table of a TOML file (empty, with the error noted, when unreadable)."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        config.errors.append(f"cannot read {path}: {exc}")
        return {}
    return data.get("mcp_servers", {})


def _read_json_servers(path: Path, config: McpConfig) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        config.errors.append(f"cannot read {path}: {exc}")
        return {}
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        config.errors.append(f"{path}: expected {{\"mcpServers\": {{NAME: {{...}}}}}}")
        return {}
    return servers


def _add_servers(config: McpConfig, table: Any, source: str, environ: Mapping[str, str] | None) -> None:
    if not isinstance(table, dict):
        config.errors.append(f"{source}: mcp_servers must be a table of servers")
        return
    for name, raw in table.items():
        try:
            config.servers[name] = parse_server(str(name), raw, source, environ)
        except McpConfigError as exc:
            config.errors.append(str(exc))
            config.servers.pop(name, None)


def refuse_secrets(config: McpConfig, secrets: list[str]) -> None:
    """Drop servers whose args, env or headers carry one of our secret values (an API key pasted into a server's config)."""
    values = [secret for secret in secrets if len(secret) >= 8]
    for name, server in list(config.servers.items()):
        texts = [*server.args, *server.env.values(), *server.headers.values(), server.url, server.command]
        if any(secret in text for secret in values for text in texts):
            del config.servers[name]
            config.errors.append(f"MCP server {name!r} in {server.source}: its config contains our provider API key, which is never passed to a server")
