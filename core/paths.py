"""XDG locations of assistant-tui's files, in one place.

Honours ``XDG_CONFIG_HOME``, ``XDG_STATE_HOME`` and ``XDG_DATA_HOME`` (through
platformdirs), so tests point everything at a temporary directory.
"""

from __future__ import annotations

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
