"""What trusting a project would change: the question the TUI asks at start (:mod:`core.trust` keeps the list).

:func:`project_changes` reads the project's ``.env`` (the keys beyond
:data:`core.config.UNTRUSTED_KEYS`) and its ``.mcp.json`` (the servers trust would
start), so it sits above the settings and MCP's configuration; :mod:`core.trust`,
which both of them ask, imports neither.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.trust import is_trusted

SHOWN_CHARS = 120
"""Characters of one value the trust question shows (the rest is cut, and says so)."""


@dataclass(frozen=True, kw_only=True)
class SettingChange:
    """One ``.env`` variable an untrusted project sets and trust would apply."""

    variable: str
    shown: str
    """Its value as shown: secrets masked, long values cut."""


@dataclass(frozen=True, kw_only=True)
class ServerChange:
    """One MCP server of the project's ``.mcp.json`` that trust would start."""

    name: str
    runs: str
    """The command line (shell-quoted) or URL."""
    setting: str = ""
    """What else it sets: its environment's names (values are not shown), its directory, header names."""


@dataclass(frozen=True, kw_only=True)
class ProjectChanges:
    """What the project's own configuration would change once trusted."""

    root: Path
    settings: tuple[SettingChange, ...] = ()
    servers: tuple[ServerChange, ...] = ()
    problems: tuple[str, ...] = ()
    """Entries of ``.mcp.json`` that could not be used even if trusted."""

    @property
    def empty(self) -> bool:
        """True when trusting would change nothing (nothing to ask)."""
        return not (self.settings or self.servers or self.problems)


def project_changes(project_root: Path) -> ProjectChanges:
    """What the project's ``.env`` (keys beyond the allowlist) and ``.mcp.json`` would change if trusted."""
    from core.config import SECRET_VARIABLES, ignored_variables, read_project_env
    from core.mcp.config import read_project_servers

    root = Path(project_root).resolve()
    values = read_project_env(root)
    settings = tuple(
        SettingChange(variable=name, shown=_mask(values[name]) if name in SECRET_VARIABLES else _cut(values[name]))
        for name in ignored_variables(values)
    )
    config = read_project_servers(root)
    servers = tuple(_server_change(name, server) for name, server in sorted(config.servers.items()))
    return ProjectChanges(root=root, settings=settings, servers=servers, problems=tuple(config.errors))


def pending_trust(project_root: Path) -> ProjectChanges | None:
    """What to ask the user about at start: the changes of an untrusted project that has some; else None."""
    if is_trusted(project_root):
        return None
    changes = project_changes(project_root)
    return None if changes.empty else changes


def _server_change(name: str, server: Any) -> ServerChange:
    runs = server.url or shlex.join([server.command, *server.args])
    setting = [f"env: {', '.join(sorted(server.env))}" if server.env else "", f"cwd: {server.cwd}" if server.cwd else "",
               f"headers: {', '.join(sorted(server.headers))}" if server.headers else ""]
    return ServerChange(name=name, runs=_cut(runs), setting=_cut(" · ".join(part for part in setting if part)))


def _mask(value: str) -> str:
    return f"(hidden, {len(value)} characters)" if value else "(empty)"


def _cut(value: str) -> str:
    return value if len(value) <= SHOWN_CHARS else f"{value[:SHOWN_CHARS]}… ({len(value):,} characters)"
