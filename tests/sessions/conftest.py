"""Fixtures for the session tests: a store in tmp, a project, and real tmpfs mounts when root."""

from __future__ import annotations

import contextlib
import os
import subprocess
import uuid
from pathlib import Path
from typing import Callable, Iterator

import pytest

from core.sessions import StoredSession, SessionStore


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An empty project directory."""
    path = tmp_path / "project"
    path.mkdir()
    return path


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    """A session store rooted in a temporary directory."""
    return SessionStore(tmp_path / "data" / "sessions")


@pytest.fixture
def session(store: SessionStore, project: Path) -> StoredSession:
    """A new session of ``project``."""
    return store.create(project)


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, timeout=10, check=False)


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Callable[[int], Path]]:
    """Mount a small real tmpfs (needs root and a kernel that lets us); skip otherwise.

    Yields a function ``mount(size_bytes) -> directory``; every mount is removed afterwards.
    """
    mounted: list[Path] = []

    def mount(size: int) -> Path:
        if os.geteuid() != 0:
            pytest.skip("mounting a tmpfs needs root")
        target = tmp_path / f"tmpfs-{uuid.uuid4().hex[:6]}"
        target.mkdir()
        done = _run("mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(target))
        if done.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
        mounted.append(target)
        return target

    yield mount
    for target in reversed(mounted):
        with contextlib.suppress(Exception):
            _run("mount", "-o", "remount,rw", str(target))
        _run("umount", "-l", str(target))


def remount(target: Path, mode: str) -> None:
    """Remount a tmpfs from the ``tmpfs`` fixture ``ro`` or ``rw``."""
    done = _run("mount", "-o", f"remount,{mode}", str(target))
    if done.returncode != 0:
        pytest.skip(f"cannot remount {target} {mode}: {done.stderr.strip()}")
