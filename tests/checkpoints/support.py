"""What the checkpoint tests compare: a project's files byte for byte, and a hash of its .git."""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path


def tree_state(root: Path) -> dict[str, tuple[str, bytes]]:
    """Every entry under ``root`` except ``.git``: kind (file with mode, link, dir) and content."""
    state: dict[str, tuple[str, bytes]] = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not (folder == str(root) and d == ".git")]
        for name in dirs + files:
            path = Path(folder) / name
            rel = str(path.relative_to(root))
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode):
                state[rel] = ("link", os.fsencode(os.readlink(path)))
            elif stat.S_ISDIR(info.st_mode):
                state[rel] = ("dir", b"")
            else:
                state[rel] = (f"file {stat.S_IMODE(info.st_mode):o}", path.read_bytes())
    return state


def git_dir_hash(root: Path) -> str:
    """A hash of every file name, mode and content under ``root/.git``."""
    digest = hashlib.sha256()
    for folder, dirs, files in sorted(os.walk(root / ".git")):
        dirs.sort()
        for name in sorted(files):
            path = Path(folder) / name
            digest.update(str(path.relative_to(root)).encode() + b"\0")
            digest.update(f"{os.lstat(path).st_mode:o}".encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()
