"""The project's Python, found the way the user's shell would find it, and what the sandbox must show of it.

Candidates, in order: the project's own environment (``UV_PROJECT_ENVIRONMENT``,
``.venv``, ``venv``: uv and ``python -m venv`` put it there; ``uv run`` would use it),
the active virtualenv (``VIRTUAL_ENV``), poetry's environment for this directory (named as poetry names it, under
``POETRY_VIRTUALENVS_PATH`` or ``~/.cache/pypoetry/virtualenvs``; poetry itself is never
run: it would read the project's configuration), pyenv's version for this directory
(``PYENV_VERSION``, ``.python-version``, then pyenv's global version), and the system's
``python3``. The tests run with the first virtual environment that has pytest, and
only in a project without any environment with pyenv's or the system's Python.

What the sandbox must show is an install prefix or an environment directory, read-only,
never the rest of the home directory: a venv outside the project, and the base
interpreter a venv was made from when it lives outside the system directories (a
pyenv, uv or poetry-managed Python under the home directory).
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

SYSTEM_PREFIXES: tuple[str, ...] = ("/usr", "/bin", "/lib", "/lib64", "/sbin")
SYSTEM_PYTHONS: tuple[str, ...] = ("/usr/local/bin/python3", "/usr/bin/python3")
_VERSION_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*")
_SECRET_DIRS = frozenset({".ssh", ".gnupg", ".aws", ".docker", ".kube", ".config"})


@dataclass(frozen=True)
class PythonEnv:
    """One interpreter the user's shell could run."""

    python: str
    """Absolute path of the interpreter."""
    source: str
    """Where it was found, for the user: "the active virtualenv", ".venv", "poetry", "pyenv 3.12.1", "the system"."""
    mounts: tuple[str, ...] = field(default=())
    """Host directories the sandbox shows read-only so that it runs (outside the project and the system)."""
    has_pytest: bool = False
    environment: bool = True
    """A virtual environment (the project's, the active one, poetry's), not a bare interpreter."""


def _under(path: str, prefixes: tuple[str, ...]) -> bool:
    return any(path == p or path.startswith(p.rstrip("/") + "/") for p in prefixes)


def safe_mount(path: str, home: str) -> bool:
    """Whether ``path`` may be shown in the sandbox: a directory, never ``/``, the home directory or above it,
    and nothing inside a credentials directory."""
    real = os.path.realpath(path)
    if real in ("/", "") or not os.path.isdir(real):
        return False
    home_real = os.path.realpath(home) if home else ""
    if home_real and (real == home_real or home_real.startswith(real.rstrip("/") + "/")):
        return False
    return not any(part in _SECRET_DIRS for part in Path(real).parts)


def _site_packages(prefix: Path) -> list[Path]:
    found = list(prefix.glob("lib/python3*/site-packages")) + list(prefix.glob("lib/python3*/dist-packages"))
    if str(prefix) in ("/usr", "/usr/local"):
        found.append(prefix / "lib" / "python3" / "dist-packages")
    return found


def _has_pytest(prefixes: list[Path]) -> bool:
    return any((site / name / "__init__.py").is_file() for prefix in prefixes for site in _site_packages(prefix)
               for name in ("pytest", "_pytest"))


def _venv_env(venv: Path, source: str, root: Path, home: str) -> PythonEnv | None:
    python = venv / "bin" / "python"
    if not python.exists():
        return None
    prefixes = [venv]
    mounts: list[str] = []
    if not _under(str(venv.resolve()), (str(root),)):
        mounts.append(str(venv))
    try:
        lines = (venv / "pyvenv.cfg").read_text(encoding="utf-8").splitlines()
    except OSError:
        lines = []
    config = {key.strip(): value.strip() for key, _, value in (line.partition("=") for line in lines)}
    base_bin = config.get("home", "")
    if base_bin:
        base = Path(base_bin).parent
        if not _under(str(base), SYSTEM_PREFIXES):
            mounts.append(str(base))
        if config.get("include-system-site-packages", "false").lower() == "true":
            prefixes.append(base)
    mounts = [m for m in mounts if safe_mount(m, home)]
    return PythonEnv(str(python), source, tuple(dict.fromkeys(mounts)), _has_pytest(prefixes))


def poetry_env_name(name: str, project_root: Path) -> str:
    """The directory-name prefix poetry gives this project's environments (``name-XXXXXXXX``)."""
    sanitized = re.sub(r'[ $`!*@"\\\r\n\t]', "_", name.lower())[:42]
    digest = hashlib.sha256(os.path.normcase(os.path.realpath(project_root)).encode()).digest()
    return f"{sanitized}-{base64.urlsafe_b64encode(digest).decode()[:8]}"


def _poetry_envs(root: Path, env: Mapping[str, str], home: str) -> list[Path]:
    try:
        data = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return []
    poetry = data.get("tool", {}).get("poetry")
    if not isinstance(poetry, dict) and not (root / "poetry.lock").is_file():
        return []
    name = (poetry or {}).get("name") or data.get("project", {}).get("name")
    if not isinstance(name, str) or not name:
        return []
    base = env.get("POETRY_VIRTUALENVS_PATH") or os.path.join(
        env.get("XDG_CACHE_HOME") or os.path.join(home, ".cache"), "pypoetry", "virtualenvs")
    return sorted(Path(base).glob(f"{poetry_env_name(name, root)}-py*"), reverse=True)


def _pyenv_version(root: Path, env: Mapping[str, str], pyenv_root: Path) -> str:
    if env.get("PYENV_VERSION"):
        return env["PYENV_VERSION"].split(":")[0]
    for directory in (root, *root.parents):
        try:
            text = (directory / ".python-version").read_text(encoding="utf-8")
        except OSError:
            continue
        return next((w for w in text.split() if not w.startswith("#")), "")
    try:
        return (pyenv_root / "version").read_text(encoding="utf-8").split()[0]
    except (OSError, IndexError):
        return ""


def _pyenv_env(root: Path, env: Mapping[str, str], home: str) -> PythonEnv | None:
    pyenv_root = Path(env.get("PYENV_ROOT") or os.path.join(home, ".pyenv"))
    if not (pyenv_root / "versions").is_dir():
        return None
    version = _pyenv_version(root, env, pyenv_root)
    if not version or version == "system" or not _VERSION_NAME.fullmatch(version):
        return None  # ".python-version" is the project's text: a name, never a path
    prefix = pyenv_root / "versions" / version
    python = prefix / "bin" / "python3"
    if not python.exists() or not prefix.resolve().is_relative_to((pyenv_root / "versions").resolve()):
        return None
    mounts = (str(prefix),) if safe_mount(str(prefix), home) else ()
    return PythonEnv(str(python), f"pyenv {version}", mounts, _has_pytest([prefix]), environment=False)


def python_candidates(project_root: Path, environ: Mapping[str, str] | None = None) -> list[PythonEnv]:
    """Every interpreter the user's shell could run for this project, in the order it would pick them."""
    env = os.environ if environ is None else environ
    root = project_root.resolve()
    home = env.get("HOME") or os.path.expanduser("~")
    found: list[PythonEnv | None] = []
    names = [env["UV_PROJECT_ENVIRONMENT"]] if env.get("UV_PROJECT_ENVIRONMENT") else []
    for name in [*names, ".venv", "venv"]:
        found.append(_venv_env(root / name, name, root, home))
    if env.get("VIRTUAL_ENV"):
        found.append(_venv_env(Path(env["VIRTUAL_ENV"]), "the active virtualenv (VIRTUAL_ENV)", root, home))
    found += [_venv_env(venv, "poetry's environment", root, home) for venv in _poetry_envs(root, env, home)]
    found.append(_pyenv_env(root, env, home))
    for python in SYSTEM_PYTHONS:
        if os.path.exists(python):
            prefix = Path(python).parent.parent
            found.append(PythonEnv(python, "the system", (), _has_pytest([prefix]), environment=False))
    unique: dict[str, PythonEnv] = {}
    for candidate in found:
        if candidate is not None and candidate.python not in unique:
            unique[candidate.python] = candidate
    return list(unique.values())


def test_candidates(project_root: Path, environ: Mapping[str, str] | None = None) -> list[PythonEnv]:
    """The interpreters the tests may run with: the virtual environments when there is one, else every interpreter.

    A project with an environment runs its tests there (another Python would lack its
    dependencies); only without one does pyenv's or the system's Python count.
    """
    candidates = python_candidates(project_root, environ)
    return [c for c in candidates if c.environment] or candidates


def test_python(project_root: Path, environ: Mapping[str, str] | None = None) -> PythonEnv | None:
    """The first of :func:`test_candidates` with pytest installed; None when none has it."""
    return next((c for c in test_candidates(project_root, environ) if c.has_pytest), None)


test_python.__test__ = False  # type: ignore[attr-defined] - not pytest tests
test_candidates.__test__ = False  # type: ignore[attr-defined]
