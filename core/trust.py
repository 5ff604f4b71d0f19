"""The trust boundary: a project's own configuration applies only once the user trusts the project.

A repository's ``.env`` and ``.mcp.json`` are content a stranger may have written. Until
the user trusts the project (``assistant-tui --trust``, or "Trust this project" when the
app asks at start), its ``.env`` may set only :data:`core.config.UNTRUSTED_KEYS` (none)
and its ``.mcp.json`` is not read. ``-p`` and ACP never trust on their own.

The decision is kept in the trusted-projects list: one resolved project path a line,
in the user's config directory (made 0700; the list 0600), read and written without
following a symbolic link. :func:`project_changes` says what trusting would change
(what the TUI's trust question shows) is :mod:`core.trust_changes`, above the settings
and MCP's configuration, which it reads. :func:`root_problem` names a project root that
would hand the whole home directory to the sandbox.
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

from core import paths

log = logging.getLogger(__name__)

LIST_NAME = "trusted-projects"


class TrustError(Exception):
    """The trust decision could not be recorded; the message says why and what to do."""


def trusted_projects_file() -> Path:
    """Where the trusted project directories are listed, one a line."""
    return paths.config_dir() / LIST_NAME


def _open_config_dir(create: bool) -> int:
    """A descriptor of the config directory, never through a symlink (made 0700 when ``create``)."""
    directory = paths.private_dir(paths.config_dir()) if create else paths.config_dir()
    return os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)


def _trusted_lines() -> set[str]:
    """The listed paths; empty when the list is missing, a symlink, not ours or writable by others."""
    try:
        dir_fd = _open_config_dir(create=False)
    except OSError:
        return set()
    try:
        fd = os.open(LIST_NAME, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError as exc:
        if os.path.lexists(trusted_projects_file()):
            log.warning("not reading %s: %s", trusted_projects_file(), exc)
        return set()
    finally:
        os.close(dir_fd)
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fh.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid() or stat.S_IMODE(info.st_mode) & 0o022:
            log.warning("not reading %s: not a regular file of yours writable only by you", trusted_projects_file())
            return set()
        text = fh.read(4_000_000).decode("utf-8", "replace")
    return {line for line in text.split("\n") if line}


def _key(project_root: Path) -> str:
    return str(Path(project_root).resolve())


def is_trusted(project_root: Path) -> bool:
    """True when the user has trusted this project (its resolved path is on the list)."""
    return _key(project_root) in _trusted_lines()


def trust_project(project_root: Path) -> None:
    """Record that the user trusts this project's configuration (its resolved path).

    Raises:
        TrustError: the path cannot be listed (a line break in it) or the list cannot be written
            (a symbolic link or something else in its place).
    """
    key = _key(project_root)
    if "\n" in key or "\r" in key:
        raise TrustError(f"cannot trust {key!r}: its path holds a line break; rename the directory")
    if key in _trusted_lines():
        return
    target = trusted_projects_file()
    try:
        dir_fd = _open_config_dir(create=True)
        try:
            fd = os.open(LIST_NAME, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                         paths.PRIVATE_FILE_MODE, dir_fd=dir_fd)
        finally:
            os.close(dir_fd)
    except OSError as exc:
        raise TrustError(f"cannot record the trust in {target}: {exc.strerror or exc}; "
                         "remove what is in its place (it must be a plain file, not a link)") from None
    with os.fdopen(fd, "ab") as fh:
        info = os.fstat(fh.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid():
            raise TrustError(f"cannot record the trust in {target}: it is not a plain file of yours; remove it")
        os.fchmod(fh.fileno(), paths.PRIVATE_FILE_MODE)
        fh.write(key.encode("utf-8") + b"\n")
    log.info("trusted the project %s", key)


# -- a root that holds HOME -------------------------------------------------------------


def root_problem(project_root: Path) -> str | None:
    """Why ``project_root`` may not be a sandboxed project: it is ``/``, HOME, or contains HOME; else None."""
    root = Path(project_root).resolve()
    home = Path(os.path.expanduser("~")).resolve()
    if root == Path(root.anchor) or root == home or home.is_relative_to(root):
        return (f"the project root {root} is your home directory (or contains it); sandboxed commands would see "
                "all of it; start assistant-tui in a project directory")
    return None
