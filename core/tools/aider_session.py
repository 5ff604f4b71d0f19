"""Interactive aider sessions in the user's terminal: aider's own CLI in a child process.

The child (:mod:`core.tools.aider_child`) runs ``aider.main.main`` with the project's
configuration neutralised, answers aider's first prompt with the query, and puts itself
in the terminal's foreground process group so Ctrl-C reaches aider rather than the app
that started it; :func:`run_in_terminal` takes the foreground back when aider exits.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
from pathlib import Path
from typing import Any, Sequence

from core.gitutil import GitRefused, run_git
from core.secrets import scrubbed_env

log = logging.getLogger(__name__)


def run_in_terminal(
    command: Sequence[str], cwd: Path, env: dict[str, str], *, stdin: Any = None, stdout: Any = None, stderr: Any = None
) -> int:
    """Run ``command`` on the terminal (inherited unless streams are given); its exit status.

    Raises:
        OSError: the command could not be started.
    """
    terminal = stdin if isinstance(stdin, int) and stdin >= 0 else 0
    foreground = _foreground(terminal)
    try:
        return subprocess.run(command, cwd=cwd, env=env, stdin=stdin, stdout=stdout, stderr=stderr, check=False).returncode
    except KeyboardInterrupt:
        return 130
    finally:
        if foreground:
            _take_foreground(terminal)


def is_terminal(fd: int) -> bool:
    """True when ``fd`` is a terminal."""
    try:
        return os.isatty(fd)
    except OSError:
        return False


def _foreground(fd: int) -> bool:
    """True when this process's group owns the terminal on ``fd`` (aider will take it over)."""
    try:
        return os.isatty(fd) and os.tcgetpgrp(fd) == os.getpgrp()
    except OSError:
        return False


def _take_foreground(fd: int) -> None:
    """Make this process group the terminal's foreground again once aider has exited.

    SIGTTOU is blocked in this thread meanwhile: a background group may then set the foreground.
    """
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTTOU})
    try:
        os.tcsetpgrp(fd, os.getpgrp())
    except OSError as exc:
        log.warning("could not take the terminal back from aider: %s", exc)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def git_status(root: Path) -> list[str]:
    """Paths ``git status`` reports as changed or untracked (porcelain form), or [] outside git."""
    try:
        out = run_git(["status", "--porcelain", "--untracked-files=all", "--ignore-submodules=all"], root,
                      base=scrubbed_env(), text=True)
    except (OSError, subprocess.TimeoutExpired, GitRefused):
        return []
    return [line[3:] for line in out.stdout.splitlines() if len(line) > 3] if out.returncode == 0 else []

