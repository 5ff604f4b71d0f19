"""The project's configuration files: what git, aider or the app read as settings, in one list.

Whatever runs on the model's behalf never writes these, since a program would read (or run)
what it left there later, outside any sandbox. This module only says *which* entries they
are; each boundary keeps its own mechanism:

- :mod:`core.sandbox.protect` (with :mod:`core.sandbox.walk`): read-only mounts inside
  bubblewrap, empty mount points where a top-level name is missing, a sweep afterwards;
- :mod:`core.tools.aider_guard`: aider's writes refused.

Adding a name to :data:`CONFIG_NAMES` protects it in both (``tests/sandbox/test_protected_parity.py``
checks that neither side protects a name the other lets through).

Besides names, two shapes of git configuration are protected wherever they are:

- a directory shaped like a git directory (``HEAD``, ``objects/``, ``refs/``; git run
  inside it uses it as a bare repository): its ``config`` and ``hooks``
  (:func:`git_dir_parts`);
- what a git config makes git run or read from the working tree: ``core.hooksPath``
  (husky's ``.husky``) and ``include.path`` / ``includeIf.*.path`` files
  (:func:`git_referenced_paths`).

Not protected, on purpose: ``.gitignore`` and ``.editorconfig`` (read, never run),
``.pre-commit-config.yaml``, ``Makefile``, ``package.json`` scripts and the like (they
run only when the user runs that tool, and are the project's code like any source file).
Secret files (read, not written) are another list: :mod:`core.secrets`.
"""

from __future__ import annotations

import fnmatch
import os
import re
import unicodedata
from dataclasses import dataclass


@dataclass(frozen=True)
class ConfigName:
    """One protected name.

    Args:
        glob: the name, a case-folded glob matched against one path component.
        source: who reads it as configuration, and where that is documented.
        reason: what it is, said when a write is refused.
        top_only: protected only directly in the project (where the app reads it).
        mount_files: top-level files the sandbox makes uncreatable while they are missing.
        mount_dirs: top-level directories the sandbox makes uncreatable while they are missing.
    """

    glob: str
    source: str
    reason: str
    top_only: bool = False
    mount_files: tuple[str, ...] = ()
    mount_dirs: tuple[str, ...] = ()


CONFIG_NAMES: tuple[ConfigName, ...] = (
    ConfigName(".git", "git (gitrepository-layout: a directory, a 'gitdir:' file or a symbolic link; its config, "
               "hooks, info/attributes)", "git's own files (.git)", mount_dirs=(".git",)),
    ConfigName(".gitmodules", "git (gitmodules: submodule URLs and update modes)", "git's submodule configuration",
               mount_files=(".gitmodules",)),
    ConfigName(".gitattributes", "git (gitattributes: selects filter, diff and merge drivers)",
               "git's attributes, which choose the filter and diff programs git runs", mount_files=(".gitattributes",)),
    ConfigName(".envrc", "direnv (runs it on cd)", "direnv's configuration, run by the shell",
               mount_files=(".envrc",)),
    ConfigName(".env*", "the app (core/config.py), aider, python-dotenv, litellm",
               "an environment file (.env*) that programs load", mount_files=(".env",)),
    ConfigName(".aider*", "aider (aider/args.py, main.py, repomap.py: .aider.conf.yml, model settings and "
               "metadata, .aiderignore, histories, .aider.tags.cache.v*, a pickled diskcache)",
               "aider's own configuration and state (.aider*)",
               mount_files=(".aider.conf.yml", ".aider.model.settings.yml", ".aider.model.metadata.json",
                            ".aiderignore")),
    ConfigName(".mcp.json", "the app (core/mcp/config.py: servers it starts)",
               "the project's MCP server list, whose commands the app runs", top_only=True,
               mount_files=(".mcp.json",)),
    ConfigName("agents.md", "the app (core/handlers/requests.py: the project's instructions to the model)",
               "the project's instructions to the model", top_only=True),
)
"""Every protected name; the first that matches gives the reason."""

MOUNT_FILES: tuple[str, ...] = tuple(name for entry in CONFIG_NAMES for name in entry.mount_files)
MOUNT_DIRS: tuple[str, ...] = tuple(name for entry in CONFIG_NAMES for name in entry.mount_dirs)

_ANYWHERE = re.compile("|".join(fnmatch.translate(e.glob) for e in CONFIG_NAMES if not e.top_only))
_AT_TOP = re.compile("|".join(fnmatch.translate(e.glob) for e in CONFIG_NAMES))
_DOTTED_BELOW_TOP = all(e.glob.startswith(".") for e in CONFIG_NAMES if not e.top_only)
"""Every name protected below the top starts with a dot (the walk's fast path relies on it)."""


def fold(name: str) -> str:
    """``name`` as it is compared: case-folded after NFKC (so ``.ＧＩＴ`` is ``.git``)."""
    return name.lower() if name.isascii() else unicodedata.normalize("NFKC", name).casefold()


def is_config_name(name: str, *, top: bool) -> bool:
    """True when an entry called ``name`` is read as configuration (``top``: directly in the project)."""
    if _DOTTED_BELOW_TOP and not top and name.isascii() and not name.startswith("."):
        return False
    return (_AT_TOP if top else _ANYWHERE).match(fold(name)) is not None


def config_name_reason(name: str, *, top: bool) -> str | None:
    """What an entry called ``name`` configures (``top``: directly in the project), or None."""
    if not is_config_name(name, top=top):
        return None
    folded = fold(name)
    return next(e.reason for e in CONFIG_NAMES if (top or not e.top_only) and fnmatch.fnmatchcase(folded, e.glob))


GIT_DIR_MARKS = frozenset({"HEAD", "objects", "refs"})
"""Entries that make a directory a git directory to git run inside it."""
GIT_DIR_PARTS = ("config", "hooks")
"""What git uses from such a directory that runs programs."""
GIT_DIR_PART_REASON = "the configuration or hooks of a directory shaped like a git repository (HEAD, objects, refs)"


def git_dir_parts(names: set[str] | frozenset[str]) -> tuple[str, ...]:
    """Of a directory's entry ``names``, the protected ones when it has a git directory's shape."""
    return tuple(name for name in GIT_DIR_PARTS if name in names) if GIT_DIR_MARKS <= names else ()


_GIT_CONFIG_NAMES = ("config", "config.worktree")
_MAX_MODULE_DEPTH = 4


def git_config_files(git_dir: str) -> list[str]:
    """The config files of a git directory and of its submodules' and worktrees' git directories."""
    found = [os.path.join(git_dir, name) for name in _GIT_CONFIG_NAMES if os.path.isfile(os.path.join(git_dir, name))]
    stack = [(os.path.join(git_dir, "modules"), 0), (os.path.join(git_dir, "worktrees"), 0)]
    while stack:
        current, depth = stack.pop()
        try:
            entries = list(os.scandir(current))
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False) and depth < _MAX_MODULE_DEPTH:
                for name in _GIT_CONFIG_NAMES:
                    if os.path.isfile(os.path.join(entry.path, name)):
                        found.append(os.path.join(entry.path, name))
                stack.append((os.path.join(entry.path, "modules"), depth + 1))
    return found


_SECTION = re.compile(r'^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"[^"]*")?\s*\]')
_PATH_KEY = re.compile(r"^\s*(hookspath|path)\s*=\s*(.*?)\s*$", re.I)
GIT_REFERENCED_REASON = "a hooks directory or included config that the project's git config points to"


def git_referenced_paths(config: str, worktree: str, git_dir: str) -> list[str]:
    """Paths (resolved) a git config makes git read or run from the working tree: ``core.hooksPath``
    (husky's ``.husky``), and ``include.path`` / ``includeIf.*.path`` files."""
    try:
        with open(config, encoding="utf-8", errors="replace") as handle:
            lines = handle.read(256 * 1024).splitlines()
    except OSError:
        return []
    found: list[str] = []
    section = ""
    for line in lines:
        header = _SECTION.match(line)
        if header:
            section = header.group(1).lower()
            continue
        match = _PATH_KEY.match(line)
        if not match:
            continue
        key, value = match.group(1).lower(), match.group(2).strip('"')
        if (key == "hookspath" and section == "core") or (key == "path" and section in ("include", "includeif")):
            if value.startswith("~"):
                continue  # the home directory is not in the sandbox
            base = worktree if key == "hookspath" else git_dir  # includes are relative to the config file
            found.append(os.path.realpath(os.path.join(base, value)))
    return found
