"""Searches leave out environment directories (``.venv``, ``node_modules``...) unless asked for them.

``grep -rl login .`` in a project with a virtualenv used to answer mostly with
``.venv`` paths. ``find`` and ``grep -r`` know nothing of ``.gitignore``, so the
command policy rewrites them: ``grep -r`` gets ``--exclude-dir`` for each name in
:data:`ENV_DIRS`, and ``find`` prunes those directories and reports each one it
pruned on its standard error (a marker line taken out here), so the result can
say what was left out and how to include it. A command that names such a
directory (a starting point, an operand, a ``-path`` pattern) is left alone.
``rg``, ``fd`` and ``git ls-files``/``git grep`` already honour ``.gitignore``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

ENV_DIRS: tuple[str, ...] = (".venv", "venv", "node_modules", "__pycache__", ".tox", ".nox", ".mypy_cache",
                             ".pytest_cache", ".ruff_cache", ".eggs")
"""Directories of installed dependencies and caches: searched only when the command names them."""
SKIP_MARKER = "assistant-tui-skipped-directory:"
_CACHES = frozenset({"__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache"})
_FIND_GLOBAL = {"-maxdepth": 1, "-mindepth": 1, "-depth": 0, "-d": 0, "-mount": 0, "-xdev": 0, "-noleaf": 0,
                "-regextype": 1, "-daystart": 0, "-warn": 0, "-nowarn": 0, "-ignore_readdir_race": 0,
                "-noignore_readdir_race": 0}
_FIND_ACTIONS = frozenset({"-print", "-print0", "-printf", "-ls", "-prune", "-quit", "-fls", "-fprint", "-fprint0",
                           "-fprintf", "-exec", "-execdir", "-ok", "-okdir", "-delete"})


def names_env_dir(words: Sequence[str]) -> bool:
    """Whether any word mentions an environment directory (then the model asked for it)."""
    return any(name in word for word in words for name in ENV_DIRS)


def grep_excludes(words: Sequence[str]) -> list[str]:
    """``--exclude-dir`` options for ``grep -r``, or none when the command names such a directory."""
    return [] if names_env_dir(words) else [f"--exclude-dir={name}" for name in ENV_DIRS]


def find_pruning(starts: list[str], expression: list[str]) -> list[str] | None:
    """``find``'s arguments after the options, with environment directories pruned (and reported on stderr).

    None when the command names such a directory or uses ``-depth`` (which turns
    ``-prune`` off). Global options move in front of the pruning, where find wants them.
    """
    if names_env_dir([*starts, *expression]) or "-depth" in expression or "-d" in expression:
        return None
    front: list[str] = []
    rest: list[str] = []
    i = 0
    while i < len(expression):
        width = _FIND_GLOBAL.get(expression[i])
        if width is None:
            rest.append(expression[i])
            i += 1
        else:
            front += expression[i : i + 1 + width]
            i += 1 + width
    names: list[str] = []
    for name in ENV_DIRS:
        names += ["-o", "-name", name] if names else ["-name", name]
    prune = ["(", "-type", "d", "(", *names, ")", ")", "-prune", "-fprintf", "/dev/stderr", f"{SKIP_MARKER}%p\\n"]
    tail = ["(", *rest, ")"] if rest else []
    if not any(word in _FIND_ACTIONS for word in rest):
        tail.append("-print")
    return [*starts, *front, *prune, "-o", *tail]


def take_skipped(stderr: str) -> tuple[str, list[str]]:
    """``stderr`` without ``find``'s marker lines, and the directories they name."""
    kept: list[str] = []
    skipped: list[str] = []
    for line in stderr.splitlines(keepends=True):
        if line.startswith(SKIP_MARKER):
            skipped.append(line[len(SKIP_MARKER) :].strip())
        else:
            kept.append(line)
    return "".join(kept), skipped


def present_env_dirs(root: Path, operands: Sequence[str]) -> list[str]:
    """Environment directories at the top of the searched directories (what ``grep -r`` left out, at least)."""
    found: list[str] = []
    for operand in operands or ["."]:
        base = root / operand
        for name in ENV_DIRS:
            if os.path.isdir(base / name) and not os.path.islink(base / name):
                found.append(os.path.normpath(os.path.join(operand, name)))
    return found


def skipped_note(skipped: Sequence[str]) -> str:
    """What the result tells the model about the directories left out."""
    if not skipped:
        return ""
    skipped = sorted(dict.fromkeys(skipped), key=lambda d: (Path(d).name in _CACHES, d.count("/"), d))
    shown = ", ".join(skipped[:8]) + (f" and {len(skipped) - 8} more" if len(skipped) > 8 else "")
    return (f"Left out {len(skipped)} environment or cache director{'y' if len(skipped) == 1 else 'ies'} "
            f"({shown}): installed dependencies, not the project's own files. To search one, name it as a path, "
            f"e.g. find {skipped[0]} -name '*.py' or grep -rl PATTERN {skipped[0]}.")
