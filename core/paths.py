"""XDG locations of assistant-tui's files, in one place.

Honours ``XDG_CONFIG_HOME``, ``XDG_STATE_HOME`` and ``XDG_DATA_HOME`` (through
platformdirs), so tests point everything at a temporary directory.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import platformdirs

APP_NAME = "assistant-tui"


def config_dir() -> Path:
    """Directory of the user config file (``config.toml``) and the trusted-projects list."""
    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False))


def config_file() -> Path:
    """The user config file (TOML)."""
    return config_dir() / "config.toml"


def state_dir() -> Path:
    """Directory of logs and other state that may be deleted without losing work."""
    return Path(platformdirs.user_state_dir(APP_NAME, appauthor=False))


def log_file() -> Path:
    """The application log; the terminal belongs to the TUI, so logs go here."""
    return state_dir() / "assistant-tui.log"


def data_dir() -> Path:
    """Directory of data the user must not lose (session transcripts)."""
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600


def private_dir(directory: Path) -> Path:
    """Create ``directory`` (and the app's own parents) readable by the user alone, and return it.

    Every component from the app's directory (``.../assistant-tui``) down is made 0700,
    including ones that already existed with a wider mode; the XDG base directories
    above it are left as they are. A component that is a symbolic link is refused: the
    app's files are never written through a link someone planted.

    Raises:
        OSError: A component is a symbolic link, or cannot be created.
    """
    directory = Path(directory)
    parts = directory.parts
    # The last component named like the app is its own directory: one higher up (a clone of this
    # repository holding the XDG dirs, say) is the user's and keeps its mode.
    start = max((i for i, part in enumerate(parts) if part == APP_NAME), default=len(parts) - 1)
    current = Path(*parts[:start]) if start else Path(parts[0])
    if start:
        current.mkdir(parents=True, exist_ok=True)
    for part in parts[start:]:
        current = current / part
        try:
            os.mkdir(current, PRIVATE_DIR_MODE)
        except FileExistsError:
            pass
        info = os.lstat(current)
        if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
            raise OSError(errno.ELOOP, "not a plain directory (a symbolic link or a file is in the way)", str(current))
        if stat.S_IMODE(info.st_mode) != PRIVATE_DIR_MODE and info.st_uid == os.getuid():
            os.chmod(current, PRIVATE_DIR_MODE)
    return directory


def open_private(path: Path, flags: int) -> int:
    """``os.open`` for the app's own files: created 0600, never through a symbolic link."""
    return os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC, PRIVATE_FILE_MODE)
