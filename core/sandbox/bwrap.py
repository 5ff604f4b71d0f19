"""The bubblewrap command line of a sandboxed run: what is mounted, masked and set.

Inside the sandbox: the system directories read-only, a minimal ``/etc`` (no
``ssl/private``), the project root writable except what git, aider and the app read
as configuration (:mod:`core.sandbox.protect`: read-only, and not creatable at the top),
secret files inside the project masked (by name and by content, also where a symbolic
link leads: :mod:`core.sandbox.walk`, with the one definition in
:mod:`core.secrets`), git's configuration files replaced by copies without
credentials, git's object store hidden where the history holds a secret file
(:mod:`core.sandbox.history`), ``/proc/sys`` and ``/proc/sysrq-trigger`` read-only (bubblewrap leaves
them writable, and a root sandbox's user namespace maps to the host's root), a
private ``/tmp`` and a fresh ``HOME`` in it, new user, PID, IPC, UTS, cgroup and
network namespaces, every capability dropped, no new Unix sockets
(:mod:`core.sandbox.seccomp`), and a fixed environment. Nothing else of the host
exists there: not the user's home (so not the app's configuration or its
trusted-projects list), not ``/root``, not ``/var``.
"""

from __future__ import annotations

import hashlib
import os
import stat
import tempfile
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from core.sandbox.history import hide_args as _hide_history
from core.sandbox.protect import MountPoints
from core.sandbox.scratch import scratch_dir
from core.sandbox.walk import MAX_WALKED, SKIP_DIRS, ProjectScan, scan_project
from core.secrets import mask_git_config

SANDBOX_HOME = "/tmp/home"
SYSTEM_DIRS: tuple[str, ...] = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# What of /etc programs need: the dynamic loader, users and groups, time zone, name
# resolution (used only when a command may reach the network), TLS roots, Debian's
# alternatives links and the Python configuration. No shadow, no ssh, no sudoers.
ETC_ENTRIES: tuple[str, ...] = (
    "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "passwd", "group", "nsswitch.conf",
    "localtime", "timezone", "hosts", "resolv.conf", "ssl/certs", "ssl/openssl.cnf", "ca-certificates",
    "ca-certificates.conf",
    "mime.types", "os-release", "gitconfig", "locale.alias", "manpath.config",
)
ETC_PREFIXES: tuple[str, ...] = ("python3",)
SYSTEM_PATH: tuple[str, ...] = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")
# Parts of /proc a root sandbox could write to the host through (moby's default ReadonlyPaths
# less what bubblewrap already covers): sysctls (kernel.core_pattern runs a program as root),
# and the SysRq trigger (a reboot).
PROC_READ_ONLY: tuple[str, ...] = ("/proc/sys", "/proc/sysrq-trigger", "/proc/fs", "/proc/irq", "/proc/bus")
# Directories not searched for secret files (kept for callers that walk the same tree).
_SKIP_DIRS = SKIP_DIRS | {".git"}
_MAX_WALKED = MAX_WALKED
_MASK_FILE: str | None = None
_MASKED_CONFIGS: dict[str, str] = {}


_READABLE_EMPTY: dict[str, str] = {}


def _mask_file(*, readable: bool = False) -> str:
    """An empty host file, bound over secret files (mode 000: nobody may read it) or missing names (0444)."""
    global _MASK_FILE
    key = "file-readable" if readable else "file"
    path = _READABLE_EMPTY.get(key) if readable else _MASK_FILE
    if path is None or not os.path.exists(path):
        fd, path = tempfile.mkstemp(prefix="mask-", dir=scratch_dir())
        os.close(fd)
        os.chmod(path, 0o444 if readable else 0)
        if readable:
            _READABLE_EMPTY[key] = path
        else:
            _MASK_FILE = path
    return path


def _empty_dir() -> str:
    """An empty host directory, bound read-only where a protected directory must not be created."""
    path = _READABLE_EMPTY.get("dir")
    if path is None or not os.path.isdir(path):
        path = tempfile.mkdtemp(prefix="empty-", dir=scratch_dir())
        os.chmod(path, 0o555)
        _READABLE_EMPTY["dir"] = path
    return path


def _masked_config(path: str) -> str | None:
    """A private copy of a git configuration file without credentials; None when it holds none."""
    try:
        with open(os.open(path, os.O_RDONLY | os.O_NOFOLLOW), encoding="utf-8", errors="surrogateescape") as handle:
            text = handle.read()
    except OSError:
        return None
    masked = mask_git_config(text)
    return None if masked == text else _private_copy(masked)


def _private_copy(text: str) -> str:
    """A read-only temporary file holding ``text`` (one per distinct text, removed at exit)."""
    digest = hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()
    copy = _MASKED_CONFIGS.get(digest)
    if copy is None or not os.path.exists(copy):
        fd, copy = tempfile.mkstemp(prefix="copy-", dir=scratch_dir())
        with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape") as handle:
            handle.write(text)
        os.chmod(copy, 0o444)
        _MASKED_CONFIGS[digest] = copy
    return copy


def _inside_git_dir(path: Path) -> bool:
    """``path`` is a regular file of the project's own ``.git`` directory, reached through no link.

    A planted repository may make ``.git/info/exclude`` (or ``.git/info``) a link to a host
    file such as a private key: its copy would then be readable inside the sandbox.
    """
    git_dir = path.parent.parent
    try:
        if git_dir.is_symlink() or path.parent.is_symlink() or not stat.S_ISREG(os.lstat(path).st_mode):
            return False
    except OSError:
        return False
    real = os.path.realpath(path)
    return real.startswith(os.path.realpath(git_dir) + os.sep)


def _with_lines(path: str, lines: list[str]) -> str:
    """A private copy of a text file with ``lines`` appended."""
    try:
        with open(os.open(path, os.O_RDONLY | os.O_NOFOLLOW), encoding="utf-8", errors="surrogateescape") as handle:
            text = handle.read()
    except OSError:
        text = ""
    return _private_copy(text.rstrip("\n") + "\n" + "\n".join(f"/{line}" for line in lines) + "\n")


def venv_prefixes(project_root: Path) -> list[str]:
    """What the sandbox must show, read-only, for the project's Python to run (:mod:`core.sandbox.python_env`).

    The base interpreters of the project's own environments (``.venv``, ``venv``) when
    they live outside the system directories, and everything the interpreter the tests
    run with needs (an active virtualenv or poetry's environment outside the project, a
    pyenv or uv-managed install prefix): install prefixes only, never the home directory.
    """
    from core.sandbox.python_env import python_candidates, test_python

    found = [m for c in python_candidates(project_root) if c.source in (".venv", "venv") for m in c.mounts]
    chosen = test_python(project_root)
    return list(dict.fromkeys(found + list(chosen.mounts if chosen else ())))


def sandbox_path(project_root: Path, extra: Sequence[str] = ()) -> str:
    """The fixed PATH inside: the project's own tools first, then extra toolchains, then the system."""
    entries = [project_root / ".venv" / "bin", project_root / "venv" / "bin", project_root / "node_modules" / ".bin"]
    entries += [Path(p) / "bin" for p in extra]
    local = [str(p) for p in entries if p.is_dir()]
    return os.pathsep.join(dict.fromkeys(local + list(SYSTEM_PATH)))


def sandbox_env(project_root: Path, extra: Sequence[str] = (), host: Mapping[str, str] | None = None) -> dict[str, str]:
    """The whole environment of a sandboxed command (nothing else of the host's is passed)."""
    host = os.environ if host is None else host
    env = {
        "PATH": sandbox_path(project_root, extra),
        "HOME": SANDBOX_HOME,
        "TMPDIR": "/tmp",
        "LANG": host.get("LANG") or "C.UTF-8",
        "TERM": "dumb",
        "USER": "sandbox",
        "PYTHONUNBUFFERED": "1",
        "GIT_TERMINAL_PROMPT": "0",
        "PAGER": "cat",
        "GIT_PAGER": "cat",
    }
    for venv in (".venv", "venv"):
        if (project_root / venv / "bin").is_dir():
            env["VIRTUAL_ENV"] = str(project_root / venv)
            break
    return env


def _system_mounts() -> list[str]:
    args: list[str] = []
    for directory in SYSTEM_DIRS:
        if os.path.islink(directory):
            args += ["--symlink", os.readlink(directory), directory]
        elif os.path.isdir(directory):
            args += ["--ro-bind", directory, directory]
    etc = ["--dir", "/etc"]
    try:
        names = sorted(os.listdir("/etc"))
    except OSError:
        names = []
    for name in names:
        if name in ETC_ENTRIES or name.startswith(ETC_PREFIXES):
            etc += ["--ro-bind", f"/etc/{name}", f"/etc/{name}"]
    for entry in ETC_ENTRIES:  # parts of a directory (/etc/ssl without its private keys)
        if "/" in entry and os.path.exists(f"/etc/{entry}"):
            etc += ["--ro-bind", f"/etc/{entry}", f"/etc/{entry}"]
    return args + etc


def app_dirs_inside(project_root: Path) -> list[str]:
    """The app's own configuration, state and data directories where they lie inside the project.

    Normally they are under the home directory, which the sandbox never shows; a dotfiles
    repository (``~/.config`` a link into it) or an ``XDG_*`` variable pointing into the
    project would put the trusted-projects list within a command's reach.
    """
    from core import paths

    root = os.path.realpath(project_root)
    found = []
    for directory in (paths.config_dir(), paths.state_dir(), paths.data_dir()):
        real = os.path.realpath(directory)
        if real == root or real.startswith(root.rstrip("/") + "/"):
            found.append(real)
    return found


def _protection(scan: ProjectScan, mount_points: MountPoints | None) -> list[str]:
    """Read-only binds over protected entries, masks over secrets, credential-free git configs."""
    args: list[str] = []
    if mount_points is not None:
        empty_dir = _empty_dir()
        for directory in mount_points.dirs:
            args += ["--ro-bind", empty_dir, directory]
        for path in mount_points.files:
            args += ["--ro-bind", _mask_file(readable=True), path]
    for directory in sorted(set(scan.protected_dirs)):
        args += ["--ro-bind", directory, directory]
    for path in sorted(set(scan.protected_files)):
        args += ["--ro-bind", path, path]
    if mount_points is not None and mount_points.files:
        # git inside does not list the empty mount points as untracked files; bound after
        # .git's own read-only bind, which would otherwise cover it
        exclude = mount_points.root / ".git" / "info" / "exclude"
        if _inside_git_dir(exclude):
            names = [os.path.basename(p) for p in mount_points.files]
            args += ["--ro-bind", _with_lines(str(exclude), names), str(exclude)]
    for path in scan.git_configs:
        copy = _masked_config(path)
        if copy is not None:
            args += ["--ro-bind", copy, path]
    for directory in sorted(set(scan.secret_dirs)):
        args += ["--tmpfs", directory, "--remount-ro", directory]
    for path in sorted(set(scan.secret_files)):
        args += ["--ro-bind", _mask_file(), path]
    return args


def bwrap_argv(
    bwrap: str,
    argv: Sequence[str],
    *,
    project_root: Path,
    cwd: Path | None = None,
    network: bool = False,
    read_only: Iterable[str] = (),
    nproc: int | None = None,
    info_fd: int | None = None,
    project_read_only: bool = False,
    scan: ProjectScan | None = None,
    mount_points: MountPoints | None = None,
    seccomp_fd: int | None = None,
) -> list[str]:
    """The full command line: ``bwrap`` options, then ``argv`` to run inside.

    Args:
        bwrap: Absolute path of the bubblewrap binary.
        argv: The program and its arguments (no shell involved).
        project_root: Bound read-write at the same path; the working directory by default.
        cwd: Working directory inside the project.
        network: Share the host's network (else a new, empty network namespace).
        read_only: Extra host paths bound read-only at the same path (toolchains).
        nproc: When set, ``RLIMIT_NPROC`` applied inside the user namespace with ``prlimit``.
        info_fd: A descriptor bubblewrap writes ``{"child-pid": N}`` to: the sandbox's first
            process, whose end means every process of the sandbox is gone.
        project_read_only: Bind the project read-only (the file-finding tool changes nothing).
        scan: The project's walk (:func:`core.sandbox.walk.scan_project`); done here when not given.
        mount_points: Missing protected names to cover with empty read-only mounts
            (:func:`core.sandbox.protect.make_mount_points`); they are created on the host.
        seccomp_fd: A descriptor holding the compiled seccomp filter (:func:`core.sandbox.seccomp.filter_fd`).
    """
    root = str(project_root)
    args = [bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL", "--hostname", "sandbox"]
    if network:
        args.append("--share-net")
    if info_fd is not None:
        args += ["--info-fd", str(info_fd)]
    if seccomp_fd is not None:
        args += ["--seccomp", str(seccomp_fd)]
    args += _system_mounts()
    args += ["--proc", "/proc"]
    for path in PROC_READ_ONLY:
        if os.path.exists(path):
            args += ["--ro-bind", path, path]
    args += ["--dev", "/dev", "--tmpfs", "/tmp", "--dir", SANDBOX_HOME]
    for path in dict.fromkeys(read_only):
        if os.path.exists(path):
            args += ["--ro-bind", path, path]
    args += ["--ro-bind" if project_read_only else "--bind", root, root]
    if scan is None:
        scan = scan_project(project_root, tuple(p for p in read_only if os.path.exists(p)))
    args += _protection(scan, mount_points)
    args += _hide_history(project_root, scan.git_configs, _empty_dir(), scan.secret_files)  # a secret in git history
    for directory in app_dirs_inside(project_root):
        if os.path.isdir(directory):  # never shown, never written (an empty read-only directory over it)
            args += ["--tmpfs", directory, "--remount-ro", directory]
    args += ["--chdir", str(cwd or project_root)]
    inner = list(argv)
    if nproc is not None:
        inner = ["prlimit", f"--nproc={nproc}:{nproc}", "--", *inner]
    return args + ["--", *inner]
