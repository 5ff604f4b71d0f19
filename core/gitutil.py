"""Running git safely in a repository we do not trust yet.

A repository's own ``.git/config`` can name programs git runs on read-only
commands (``core.fsmonitor`` on ``ls-files``/``status``; a pager). Every git the
app runs itself goes through :func:`git_argv` with the scrubbed environment, and
:func:`harden_git_environment` makes git run by libraries (aider's GitPython) and
child processes ignore those settings too, through git's ``GIT_CONFIG_*`` variables.
"""

from __future__ import annotations

import os
from typing import MutableMapping, Sequence

GIT_HARDENING: tuple[str, ...] = ("--no-pager", "-c", "core.fsmonitor=false", "-c", "core.quotepath=false")
FORCED_CONFIG: tuple[tuple[str, str], ...] = (("core.fsmonitor", "false"), ("core.pager", "cat"))


def git_argv(*args: str) -> list[str]:
    """``git`` with the hardening options, then ``args``."""
    return ["git", *GIT_HARDENING, *args]


def harden_git_environment(environ: MutableMapping[str, str] | None = None, forced: Sequence[tuple[str, str]] = FORCED_CONFIG) -> None:
    """Add ``GIT_CONFIG_KEY_n``/``GIT_CONFIG_VALUE_n`` entries that override repository config.

    Existing entries (the user's own) are kept; ours are appended once.
    """
    env = os.environ if environ is None else environ
    try:
        count = int(env.get("GIT_CONFIG_COUNT", "0") or 0)
    except ValueError:
        count = 0
    present = {(env.get(f"GIT_CONFIG_KEY_{i}"), env.get(f"GIT_CONFIG_VALUE_{i}")) for i in range(count)}
    for key, value in forced:
        if (key, value) in present:
            continue
        env[f"GIT_CONFIG_KEY_{count}"] = key
        env[f"GIT_CONFIG_VALUE_{count}"] = value
        count += 1
    env["GIT_CONFIG_COUNT"] = str(count)
