"""The bubblewrap command line of a sandboxed run: what is mounted, masked and set.

Inside the sandbox: the system directories read-only, a minimal ``/etc``, the
project root writable (its ``.git`` read-only, so a command cannot plant hooks
that git would later run outside), secret files inside the project masked
(the one definition in :mod:`core.tools.secrets`), a private ``/tmp`` and a
fresh ``HOME`` in it, new user, PID, IPC, UTS, cgroup and network namespaces,
every capability dropped, and a fixed environment. Nothing else of the host
exists there: not the user's home, not ``/root``, not ``/var``.
"""

from __future__ import annotations

import atexit
import os
import tempfile
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from core.tools.secrets import is_secret_path

SANDBOX_HOME = "/tmp/home"
SYSTEM_DIRS: tuple[str, ...] = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# What of /etc programs need: the dynamic loader, users and groups, time zone, name
# resolution (used only when a command may reach the network), TLS roots, Debian's
# alternatives links and the Python configuration. No shadow, no ssh, no sudoers.
ETC_ENTRIES: tuple[str, ...] = (
    "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "passwd", "group", "nsswitch.conf",
    "localtime", "timezone", "hosts", "resolv.conf", "ssl", "ca-certificates", "ca-certificates.conf",
    "mime.types", "os-release", "gitconfig", "locale.alias", "manpath.config",
)
ETC_PREFIXES: tuple[str, ...] = ("python3",)
SYSTEM_PATH: tuple[str, ...] = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")
# Directories not searched for secret files (dependencies and caches, not the user's).
_SKIP_DIRS = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__", ".tox", ".nox", ".mypy_cache",
                        ".pytest_cache", ".ruff_cache", "target"})
_MAX_WALKED = 100_000
_MASK_FILE: str | None = None


def _mask_file() -> str:
    """An empty host file nobody may read (mode 000), bound over secret files."""
    global _MASK_FILE
    if _MASK_FILE is None:
        fd, path = tempfile.mkstemp(prefix="assistant-tui-mask-")
        os.close(fd)
        os.chmod(path, 0)
        atexit.register(lambda: os.path.exists(path) and os.unlink(path))
        _MASK_FILE = path
    return _MASK_FILE


def secret_entries(project_root: Path) -> tuple[list[str], list[str]]:
    """Secret files and secret directories inside the project, as absolute paths.

    Dependency and cache directories (``node_modules``, ``.venv``...) are not searched;
    symbolic links are left alone (their targets outside the project do not exist in the
    sandbox, and targets inside are judged by their own names).
    """
    files: list[str] = []
    dirs: list[str] = []
    walked = 0
    stack = [str(project_root)]
    while stack and walked < _MAX_WALKED:
        current = stack.pop()
        try:
            entries = list(os.scandir(current))
        except OSError:
            continue
        for entry in entries:
            walked += 1
            try:
                if entry.is_symlink():
                    continue
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_secret_path(entry.name):
                (dirs if is_dir else files).append(entry.path)
            elif is_dir and entry.name not in _SKIP_DIRS:
                stack.append(entry.path)
    return sorted(files), sorted(dirs)


def venv_prefixes(project_root: Path) -> list[str]:
    """The base interpreters of the project's ``.venv`` / ``venv`` outside the system directories."""
    found: list[str] = []
    for name in (".venv", "venv"):
        try:
            lines = (project_root / name / "pyvenv.cfg").read_text(encoding="utf-8").splitlines()
        except OSError:
            continue
        for line in lines:
            key, _, value = line.partition("=")
            if key.strip() == "home" and value.strip():
                prefix = Path(value.strip()).parent
                if not any(str(prefix).startswith(d + "/") or str(prefix) == d for d in SYSTEM_DIRS):
                    found.append(str(prefix))
    return found


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
    return args + etc


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
    """
    root = str(project_root)
    args = [bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL", "--hostname", "sandbox"]
    if network:
        args.append("--share-net")
    if info_fd is not None:
        args += ["--info-fd", str(info_fd)]
    args += _system_mounts()
    args += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--dir", SANDBOX_HOME]
    for path in dict.fromkeys(read_only):
        if os.path.exists(path):
            args += ["--ro-bind", path, path]
    args += ["--ro-bind" if project_read_only else "--bind", root, root]
    git = project_root / ".git"
    if git.exists() and not git.is_symlink():
        args += ["--ro-bind", str(git), str(git)]
    files, dirs = secret_entries(project_root)
    for directory in dirs:
        args += ["--tmpfs", directory, "--remount-ro", directory]
    if files:
        mask = _mask_file()
        for path in files:
            args += ["--ro-bind", mask, path]
    args += ["--chdir", str(cwd or project_root)]
    inner = list(argv)
    if nproc is not None:
        inner = ["prlimit", f"--nproc={nproc}:{nproc}", "--", *inner]
    return args + ["--", *inner]
