"""The sandbox of the file-finding tool: bubblewrap with the project read-only, no network, no HOME.

Building the bubblewrap command line walks the project for secret files to mask
(by name and by content), which costs tens of milliseconds in a project of a
thousand files: more than the run itself. The command line is therefore kept per
project and reused while nothing that walk looks at has changed: every directory
and file it visits (and git's configuration files) is ``lstat``-ed again, and any
change of modification time, size, inode or kind rebuilds the line. As git does
with its index, entries modified within :data:`RACY_SECONDS` of the check are not
trusted (a coarse timestamp could hide a later change in the same tick): the line
is rebuilt until they settle.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from core.sandbox import bwrap as bwrap_module
from core.sandbox.bwrap import SANDBOX_HOME, bwrap_argv
from core.sandbox.preflight import INSTALL_COMMAND, SandboxStatus

log = logging.getLogger(__name__)

RACY_SECONDS = 2.0
ETC_KEPT = frozenset({"ld.so.cache", "ld.so.conf", "passwd", "group", "nsswitch.conf", "localtime"})
"""What of ``/etc`` the file-finding programs need: the loader's cache, user and group names, the time zone."""
_ENV_KEYS = ("PATH", "PAGER", "LANG", "LANGUAGE", "TZ")
_STATUS: SandboxStatus | None = None
_PROBE_SECONDS = 10.0
CHILD_PATH = os.pathsep.join(("/usr/local/bin", "/usr/bin", "/bin", "/usr/local/sbin", "/usr/sbin", "/sbin"))
"""The PATH every child gets (and where its programs and ``bwrap`` are looked up): system directories only,
so a program that runs others (``fd -l`` runs ``ls``) never finds one planted in the project or in a user
directory the repository can write."""
_PREFIXES: dict[tuple[str, Path], _Prefix] = {}
_LOCK = threading.Lock()


@dataclass(frozen=True)
class _Prefix:
    argv: list[str]
    signature: int
    """A hash of every entry the secret walk visits: path, kind, modification time, size, inode."""


def _probe() -> SandboxStatus:
    """Find ``bwrap`` in the system directories and run ``true`` in this tool's sandbox (blocking)."""
    bwrap = shutil.which("bwrap", path=CHILD_PATH)
    if bwrap is None:
        return SandboxStatus(available=False, problem="bubblewrap (bwrap) is not installed in the system "
                             f"directories, so file-finding commands run without a sandbox. Install it with: "
                             f"{INSTALL_COMMAND}")
    try:
        with tempfile.TemporaryDirectory(prefix="assistant-tui-probe-") as probe:
            argv = bwrap_argv(bwrap, ["true"], project_root=Path(probe), project_read_only=True)
            done = subprocess.run(argv, capture_output=True, text=True, timeout=_PROBE_SECONDS,
                                  env={"PATH": CHILD_PATH}, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return SandboxStatus(available=False, bwrap=bwrap, problem=f"bubblewrap at {bwrap} could not be run ({exc}).")
    if done.returncode != 0:
        detail = (done.stderr or "").strip().splitlines()[-1:] or [f"exit status {done.returncode}"]
        return SandboxStatus(available=False, bwrap=bwrap, problem=f"bubblewrap cannot create namespaces here "
                             f"({detail[0]}), so file-finding commands run without a sandbox.")
    return SandboxStatus(available=True, bwrap=bwrap)


def sandbox_status(project_root: Path | None = None) -> SandboxStatus:
    """Whether bubblewrap works, probed once per process (blocking: call it from a thread).

    ``bwrap`` is looked up in the system directories only, as the tool's programs are:
    nothing on the user's PATH (or planted in the project) stands in for it.
    """
    global _STATUS
    with _LOCK:
        if _STATUS is None:
            _STATUS = _probe()
            log.info("file-finding commands: %s", f"sandboxed by {_STATUS.bwrap}" if _STATUS.available
                     else f"run WITHOUT a sandbox ({_STATUS.problem})")
        return _STATUS


def known_status() -> SandboxStatus | None:
    """The probed status when there is one (no probe, no blocking)."""
    return _STATUS


def _signature(root: Path) -> int | None:
    """What the secret walk would see, hashed; None when something changed just now (or the walk is too big)."""
    skip = getattr(bwrap_module, "_SKIP_DIRS", frozenset()) - {".git"}
    limit = getattr(bwrap_module, "_MAX_WALKED", 100_000)
    settled = time.time_ns() - int(RACY_SECONDS * 1e9)
    seen: list[tuple[str, int, int, int, int]] = []
    stack = [str(root)]
    top_git = os.path.join(str(root), ".git")
    while stack:
        current = stack.pop()
        try:
            info = os.lstat(current)
            entries = list(os.scandir(current))
        except OSError:
            seen.append((current, -1, 0, 0, 0))
            continue
        seen.append((current, info.st_mode, info.st_mtime_ns, 0, info.st_ino))
        if info.st_mtime_ns > settled or len(seen) + len(entries) > limit:
            return None
        for entry in entries:
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if st.st_mtime_ns > settled:
                return None
            seen.append((entry.path, st.st_mode, st.st_mtime_ns, st.st_size, st.st_ino))
            if entry.is_dir(follow_symlinks=False) and entry.name not in skip:
                if entry.path == top_git:
                    stack.extend(os.path.join(entry.path, name) for name in ("config", "config.worktree")
                                 if os.path.isfile(os.path.join(entry.path, name)))
                    continue
                stack.append(entry.path)
    return hash(tuple(seen))


def sandbox_prefix(bwrap: str, project_root: Path) -> list[str]:
    """The bubblewrap command line up to ``--`` (blocking: call it from a thread).

    The project read-only (secret files masked, ``.git`` read-only), no network,
    a private ``/tmp`` and ``HOME``, every namespace new, every capability dropped.
    """
    root = project_root.resolve()
    key = (bwrap, root)
    signature = _signature(root)  # before the build: a change during it shows as a different signature next time
    cached = _PREFIXES.get(key)
    if cached is not None and signature is not None and cached.signature == signature:
        return cached.argv
    argv = _narrower_etc(bwrap_argv(bwrap, [], project_root=root, project_read_only=True))
    if signature is not None:
        _PREFIXES[key] = _Prefix(argv, signature)
    else:
        _PREFIXES.pop(key, None)
    return argv


def _narrower_etc(argv: list[str]) -> list[str]:
    """``argv`` without the ``/etc`` entries the file-finding programs do not read.

    Each bind mount costs bubblewrap a fraction of a millisecond; the runCommand sandbox
    binds about twenty ``/etc`` entries (TLS roots, Python's configuration...) that find,
    grep, ls, git and the viewers never open. Only ever removes mounts: what is left is
    narrower than what :func:`bwrap_argv` built.
    """
    out: list[str] = []
    i = 0
    while i < len(argv):
        if (argv[i] == "--ro-bind" and i + 2 < len(argv) and argv[i + 1] == argv[i + 2]
                and argv[i + 1].startswith("/etc/") and argv[i + 1][5:] not in ETC_KEPT):
            i += 3
            continue
        out.append(argv[i])
        i += 1
    return out


def sandboxed_stages(stages: Sequence[Sequence[str]], bwrap: str, project_root: Path) -> list[list[str]]:
    """Each stage wrapped in bubblewrap (blocking: call it from a thread)."""
    prefix = sandbox_prefix(bwrap, project_root)
    return [[*prefix, *argv] for argv in stages]


def hides_git_objects(bwrap: str, project_root: Path) -> bool:
    """True when the sandbox hides git's object store (the history holds a secret: :mod:`core.sandbox.history`)."""
    argv = sandbox_prefix(bwrap, project_root)
    return any(flag == "--ro-bind" and target.endswith("/objects") for flag, target in zip(argv, argv[2:]))


def sandboxed_env(env: Mapping[str, str]) -> dict[str, str]:
    """What a sandboxed stage's environment keeps of ``env``: git's hardening, the locale, the fixed PATH."""
    kept = {k: v for k, v in env.items() if k in _ENV_KEYS or k.startswith(("GIT_", "LC_"))}
    return {**kept, "HOME": SANDBOX_HOME, "TMPDIR": "/tmp", "USER": "sandbox", "TERM": "dumb"}
