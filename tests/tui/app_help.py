"""``/help``'s keys and commands as the app shows them, for tests that read the help text."""

from __future__ import annotations

from typing import Any


def app_help() -> Any:
    """The renderable ``/help`` shows: the app's keys and the registry's commands."""
    from tui.app import AssistantApp
    from tui.commands import COMMANDS
    from tui.help import help_renderable, key_sections

    return help_renderable(key_sections(AssistantApp.BINDINGS), COMMANDS)
