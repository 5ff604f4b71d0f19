"""What aider may write, and where its own state goes: the same rules in-process and in its CLI.

Aider never writes a file that configures git, the app or aider, or that a program
loads later as settings (:func:`protected_reason`): the project's configuration files
as :mod:`core.protected` defines them, the list the sandbox protects too (anything in a
``.git`` directory, submodules' too, ``.gitmodules``, ``.gitattributes``, ``.env*``,
``.envrc``, ``.aider*``, the project's ``.mcp.json`` and ``AGENTS.md``, a git-directory-shaped
directory's ``config`` and ``hooks``, the hooks directory and included files the project's
git config points to); besides, the app's configuration, state and data directories, the
Python installation the app runs from, and anything outside the project (symbolic links are followed first; a file
with other hard links is refused, since writing it writes them too). An automatic task
also writes only the files its approval named (:class:`WritePolicy`).

Aider's chat and input history and its repository-map cache live in a per-project
directory under the app's state directory (:func:`aider_state_dir`), never in the project.
"""

from __future__ import annotations

import hashlib
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from core import paths
from core.protected import (GIT_DIR_MARKS, GIT_DIR_PART_REASON, GIT_DIR_PARTS, GIT_REFERENCED_REASON,
                            config_name_reason, git_config_files, git_dir_parts, git_referenced_paths)


def _git_dir_part_reason(root: Path, parts: tuple[str, ...]) -> str | None:
    """A git-directory-shaped directory's ``config`` or ``hooks`` (or what is in them) on the way to a file,
    also when this write would complete the shape (``config`` first, ``HEAD``, ``objects``, ``refs`` after)."""
    for index, part in enumerate(parts):
        if part in GIT_DIR_PARTS or part in GIT_DIR_MARKS:
            directory = root.joinpath(*parts[:index])
            names = {name for name in (*GIT_DIR_MARKS, *GIT_DIR_PARTS) if os.path.lexists(directory / name)} | {part}
            if git_dir_parts(names):
                return GIT_DIR_PART_REASON
    return None


def _git_referenced(root: Path) -> list[Path]:
    """What the project's git configs (``.git``'s, its submodules' and worktrees') point to in the tree."""
    git_dir = root / ".git"
    if not git_dir.is_dir():
        return []
    git_dir = git_dir.resolve()
    return [Path(found) for config in git_config_files(str(git_dir))
            for found in git_referenced_paths(config, os.path.dirname(git_dir), str(git_dir))]


def _app_dirs() -> list[tuple[Path, str]]:
    dirs = [(paths.config_dir(), "assistant-tui's configuration"), (paths.state_dir(), "assistant-tui's state"),
            (paths.data_dir(), "assistant-tui's saved sessions")]
    dirs += [(Path(prefix), "the Python installation assistant-tui runs from") for prefix in {sys.prefix, sys.base_prefix}]
    return [(path.resolve(), reason) for path, reason in dirs]


def protected_reason(path: str | os.PathLike[str], project_root: Path) -> str | None:
    """Why aider may not write ``path`` (absolute, or relative to ``project_root``), or None.

    Both the path as written and where it leads (symbolic links followed) are judged.
    """
    roots = (project_root.resolve(), Path(os.path.abspath(project_root)))
    lexical = Path(os.path.normpath(roots[0] / path))
    resolved = lexical.resolve()
    for candidate in (lexical, resolved):
        root = next((root for root in roots if candidate.is_relative_to(root)), None)
        if root is None:
            return "it is outside the project"
        parts = candidate.relative_to(root).parts
        for index, part in enumerate(parts):
            if reason := config_name_reason(part, top=index == 0):
                return reason
        if reason := _git_dir_part_reason(root, parts):
            return reason
    if any(resolved.is_relative_to(found) for found in _git_referenced(roots[0])):
        return GIT_REFERENCED_REASON
    for directory, reason in _app_dirs():
        if resolved.is_relative_to(directory):
            return reason
    try:
        if resolved.is_file() and resolved.stat().st_nlink > 1:
            return "it has other hard links (writing it would change them too)"
    except OSError:
        pass
    return None


@dataclass(frozen=True)
class WritePolicy:
    """The files aider may write in one run.

    Args:
        project_root: the project; nothing outside it is written.
        allowed: the resolved files the approval named; None allows any unprotected file
            in the project (an interactive session, where aider asks the user about each new one).
    """

    project_root: Path
    allowed: frozenset[Path] | None = None

    def refusal(self, path: str | os.PathLike[str]) -> str | None:
        """Why aider may not write ``path``, or None when it may."""
        if reason := protected_reason(path, self.project_root):
            return reason
        if self.allowed is not None and (self.project_root / path).resolve() not in self.allowed:
            return "it is not among the files the approval named"
        return None


def aider_state_dir(project_root: Path) -> Path:
    """The private directory (0700, no symbolic link on the way) of aider's history files and tag cache here.

    Raises:
        OSError: a component is a symbolic link or cannot be created.
    """
    root = project_root.resolve()
    digest = hashlib.sha256(os.fsencode(root)).hexdigest()[:16]
    return paths.private_dir(paths.state_dir() / "aider" / f"{root.name or 'root'}-{digest}")
