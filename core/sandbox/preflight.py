"""Can this machine run commands in the sandbox? Checked once at start-up, off the event loop.

Never a silent fallback: when ``bwrap`` is missing or cannot create namespaces,
the status says so with the install command, and the command tools either refuse
or (only when the user allowed it in the configuration) run unsandboxed with an
approval every time.
"""

from __future__ import annotations

import logging
import os
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from core.sandbox import seccomp
from core.sandbox.bwrap import bwrap_argv
from core.sandbox.limits import ProcessLimit, process_limit_method, which_outside

log = logging.getLogger(__name__)

INSTALL_COMMAND = "sudo apt-get install bubblewrap"
_PROBE_SECONDS = 10.0


@dataclass(frozen=True)
class SandboxStatus:
    """The outcome of the preflight."""

    available: bool
    bwrap: str | None = None
    """Absolute path of ``bwrap`` (found on PATH outside the project)."""
    problem: str = ""
    """Why sandboxed running is unavailable, with what to do (empty when available)."""
    process_limit: ProcessLimit = "none"
    """How the process-count limit is enforced: a pids cgroup, RLIMIT_NPROC, or not at all."""
    seccomp_problem: str = ""
    """Why commands run without the seccomp filter that refuses new Unix sockets (empty: they do not)."""

    def describe(self) -> str:
        """One line for the user."""
        if not self.available:
            return self.problem
        limit = {
            "cgroup": "process limit by a pids cgroup",
            "rlimit": "process limit by RLIMIT_NPROC in the sandbox's user namespace",
            "none": "no process-count limit (running as root without a writable pids cgroup)",
        }[self.process_limit]
        unix = f"; {self.seccomp_problem}" if self.seccomp_problem else "; no new Unix sockets (seccomp)"
        return f"Sandbox: bubblewrap at {self.bwrap}; {limit}{unix}."


def check_sandbox(project_root: Path) -> SandboxStatus:
    """Find ``bwrap`` and run ``true`` in a sandbox like the real one (blocking: call from a thread)."""
    bwrap = which_outside("bwrap", project_root)
    if bwrap is None:
        return SandboxStatus(
            available=False,
            problem=f"bubblewrap (bwrap) is not installed, so commands cannot run in the sandbox. "
            f"Install it with: {INSTALL_COMMAND}",
        )
    try:
        done = _probe(bwrap, with_filter=True)
        if done.returncode != 0 and seccomp.filter_fd_available():
            plain = _probe(bwrap, with_filter=False)
            if plain.returncode == 0:
                seccomp.disable(f"bubblewrap could not load the seccomp filter ({_last_line(done)})")
            done = plain
    except (OSError, subprocess.TimeoutExpired) as exc:
        return SandboxStatus(available=False, bwrap=bwrap, problem=f"bubblewrap at {bwrap} could not be run ({exc}).")
    if done.returncode != 0:
        return SandboxStatus(
            available=False,
            bwrap=bwrap,
            problem=f"bubblewrap cannot create namespaces on this machine ({_last_line(done)}), so commands cannot run "
            "in the sandbox. Enable unprivileged user namespaces (kernel.unprivileged_userns_clone=1, or the "
            f"AppArmor rule for bwrap on Ubuntu 24.04+), or install bubblewrap with: {INSTALL_COMMAND}",
        )
    return SandboxStatus(available=True, bwrap=bwrap, process_limit=process_limit_method(),
                         seccomp_problem=seccomp.filter_problem())


def _probe(bwrap: str, *, with_filter: bool) -> subprocess.CompletedProcess[str]:
    """``true`` in a sandbox like the real one, with or without the seccomp filter."""
    fd = seccomp.filter_fd() if with_filter else None
    try:
        with tempfile.TemporaryDirectory(prefix="assistant-tui-probe-") as probe_root:
            argv = bwrap_argv(bwrap, ["true"], project_root=Path(probe_root), seccomp_fd=fd)
            return subprocess.run(argv, capture_output=True, text=True, timeout=_PROBE_SECONDS,
                                  env={"PATH": "/usr/bin:/bin"}, pass_fds=(fd,) if fd is not None else ())
    finally:
        if fd is not None:
            os.close(fd)


def _last_line(done: subprocess.CompletedProcess[str]) -> str:
    return ((done.stderr or "").strip().splitlines()[-1:] or [f"exit status {done.returncode}"])[0]


class Preflight:
    """Runs :func:`check_sandbox` once, in a thread; ``status()`` waits for it."""

    def __init__(self, project_root: Path) -> None:
        self._root = project_root
        self._status: SandboxStatus | None = None
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name="sandbox-preflight", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._status = check_sandbox(self._root)
        except Exception as exc:  # noqa: BLE001 - reported as unavailable, never raised
            log.exception("sandbox preflight failed")
            self._status = SandboxStatus(available=False, problem=f"The sandbox check failed: {exc}")
        log.info("sandbox preflight: %s", self._status.describe())
        self._done.set()

    def status(self, timeout: float | None = None) -> SandboxStatus:
        """The preflight's result (blocks until it is known)."""
        self._done.wait(timeout)
        return self._status or SandboxStatus(available=False, problem="The sandbox check has not finished.")

    async def wait(self) -> SandboxStatus:
        """The result, awaited without blocking the event loop."""
        import asyncio

        if not self._done.is_set():
            await asyncio.to_thread(self._done.wait)
        return self.status()
