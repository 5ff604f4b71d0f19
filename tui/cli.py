"""The ``assistant-tui`` console script: core's CLI with the Textual app as its user interface.

Headless runs (``-p``) never import Textual; the app is imported only to launch it.
"""

from __future__ import annotations

from typing import Any, Sequence


def launch(settings: Any, *, continue_session: bool = False, resume: str | None = None) -> None:
    """Run the full-screen app until the user quits."""
    from tui import runtime

    runtime.apply()  # before Textual is imported: it reads the frame rate then
    from tui.app import run_app

    run_app(settings, continue_session=continue_session, resume=resume)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``assistant-tui``; returns the exit status."""
    from core.cli import main as core_main

    return core_main(argv, launch_tui=launch)


if __name__ == "__main__":
    raise SystemExit(main())
