"""Resource limits of a sandboxed run: CPU time, process count, core dumps.

The process-count limit needs care. ``RLIMIT_NPROC`` works for an ordinary user
(inside bubblewrap's user namespace the count is the sandbox's own), but the
kernel never applies it to root (``copy_process`` lets the global root user and
CAP_SYS_ADMIN through), and a user namespace entered by root still maps to root.
So, as root, a ``pids`` cgroup is used when one can be created (cgroup v1's pids
hierarchy, or a cgroup v2 directory we may write to with the pids controller
enabled); otherwise the run has no process limit, and the preflight says so.
"""

from __future__ import annotations

import itertools
import logging
import os
import shutil
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

log = logging.getLogger(__name__)

ProcessLimit = Literal["cgroup", "rlimit", "none"]

_CGROUP_ROOT = Path("/sys/fs/cgroup")
_counter = itertools.count()


@dataclass(frozen=True)
class Limits:
    """What one sandboxed run may use."""

    timeout: float = 120.0
    """Wall-clock seconds before the whole process tree is killed."""
    cpu_seconds: int = 0
    """CPU seconds per process (``RLIMIT_CPU``); 0 means the wall-clock timeout, rounded up."""
    max_processes: int = 256
    """Most processes (and threads) alive at once in the sandbox."""
    max_output: int = 4_000_000
    """Bytes of output (stdout and stderr together) before the run is stopped."""


def _v1_pids_parent() -> Path | None:
    path = _CGROUP_ROOT / "pids"
    return path if (path / "cgroup.procs").exists() and os.access(path, os.W_OK) else None


def _v2_pids_parent() -> Path | None:
    """Our own cgroup v2 directory, when we may create children there with a pids controller."""
    if not (_CGROUP_ROOT / "cgroup.controllers").exists():
        return None
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        if line.startswith("0::"):
            here = _CGROUP_ROOT / line[3:].lstrip("/")
            try:
                enabled = (here / "cgroup.subtree_control").read_text().split()
            except OSError:
                return None
            return here if "pids" in enabled and os.access(here, os.W_OK) else None
    return None


def pids_cgroup_parent() -> Path | None:
    """Where a per-run pids cgroup can be created, or None."""
    return _v1_pids_parent() or _v2_pids_parent()


def process_limit_method() -> ProcessLimit:
    """How the process-count limit is enforced on this machine."""
    if pids_cgroup_parent() is not None:
        return "cgroup"
    if os.geteuid() != 0:
        return "rlimit"
    return "none"


class PidsCgroup:
    """A pids cgroup for one run: created with ``pids.max``, killed and removed after."""

    def __init__(self, parent: Path, max_processes: int) -> None:
        self.path = parent / f"assistant-tui-{os.getpid()}-{next(_counter)}"
        self.path.mkdir()
        (self.path / "pids.max").write_text(str(max_processes))
        self.procs = str(self.path / "cgroup.procs")

    def kill(self) -> None:
        """SIGKILL every process still in the cgroup."""
        try:
            pids = Path(self.procs).read_text().split()
        except OSError:
            return
        for pid in pids:
            try:
                os.kill(int(pid), signal.SIGKILL)
            except (ProcessLookupError, PermissionError, ValueError):
                pass

    def limit_hit(self) -> bool:
        """True when a fork was refused because the cgroup was full."""
        try:
            for line in (self.path / "pids.events").read_text().splitlines():
                name, _, value = line.partition(" ")
                if name == "max" and int(value) > 0:
                    return True
        except (OSError, ValueError):
            pass
        return False

    def empty(self) -> bool:
        """True when no process is left in the cgroup."""
        try:
            return not Path(self.procs).read_text().split()
        except OSError:
            return True

    def remove(self) -> None:
        try:
            self.path.rmdir()
        except OSError:
            self.kill()
            try:
                self.path.rmdir()
            except OSError:
                log.warning("could not remove cgroup %s", self.path)


def make_cgroup(max_processes: int) -> PidsCgroup | None:
    """A pids cgroup for one run when the machine offers one, else None."""
    parent = pids_cgroup_parent()
    if parent is None:
        return None
    try:
        return PidsCgroup(parent, max_processes)
    except OSError as exc:
        log.info("no pids cgroup (%s); falling back to RLIMIT_NPROC", exc)
        return None


# Joins the cgroup, then becomes the next program: a fixed script whose arguments are never
# parsed by the shell ("$0" is the cgroup's procs file, "$@" the command as given).
_JOIN_CGROUP = 'echo $$ > "$0" && exec "$@"'


def limit_wrapper(limits: Limits, cgroup: PidsCgroup | None) -> list[str]:
    """The argv prefix that applies CPU and core limits (``prlimit``) and joins the cgroup, if any.

    A prefix, not a ``preexec_fn``: with one, Python forks instead of using vfork, which
    costs tens of milliseconds per run in a large process. ``RLIMIT_NPROC`` is not set
    here: outside the sandbox's user namespace it would count all of the user's
    processes, so the sandbox applies it inside (see :mod:`core.sandbox.bwrap`).
    """
    cpu = limits.cpu_seconds or int(limits.timeout) + 1
    prefix = [shutil.which("prlimit", path="/usr/bin:/bin") or "prlimit", f"--cpu={cpu}:{cpu + 1}", "--core=0", "--"]
    if cgroup is not None:
        prefix = ["/bin/sh", "-c", _JOIN_CGROUP, cgroup.procs, *prefix]
    return prefix


def which_outside(program: str, project_root: Path) -> str | None:
    """``program`` on PATH, ignoring relative entries and entries inside the project."""
    root = project_root.resolve()
    keep = []
    for entry in os.environ.get("PATH", os.defpath).split(os.pathsep):
        if not entry or not os.path.isabs(entry):
            continue
        try:
            Path(entry).resolve().relative_to(root)
            continue
        except ValueError:
            keep.append(entry)
        except OSError:
            continue
    return shutil.which(program, path=os.pathsep.join(keep))
