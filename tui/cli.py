"""The ``assistant-tui`` console script: core's CLI with the Textual app as its user interface.

Headless runs (``-p``) never import Textual; the app is imported only to launch it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Sequence


def launch(load_settings: Callable[[], Any], *, project_root: Path, continue_session: bool = False, resume: str | None = None) -> int:
    """Run the full-screen app until the user quits; returns its exit status.

    Args:
        load_settings: loads the settings (``core.cli``'s loader); the app calls it after its first frame.
        project_root: the project directory (known before the settings are).
        continue_session: reopen the project's most recent session.
        resume: id of a session to reopen.
    """
    from tui import runtime

    runtime.apply()  # before Textual is imported: it reads the frame rate then
    runtime.pause_collector_until_first_frame()  # the app's first frame turns it back on (AssistantApp.on_mount)
    from tui import wrap

    wrap.install()  # long URLs and paths break after their separators, not mid-word (Rich's and Textual's wrapping)
    from tui.app import run_app

    return run_app(load_settings, project_root=project_root, continue_session=continue_session, resume=resume)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``assistant-tui``; returns the exit status."""
    from core.cli import main as core_main

    return core_main(argv, launch_tui=launch)


if __name__ == "__main__":
    raise SystemExit(main())
