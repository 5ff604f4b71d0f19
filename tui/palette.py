"""The command palette's entries: the app's actions and slash commands, from one Provider."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any, Callable

from textual.command import DiscoveryHit, Hit, Hits, Provider

from tui.commands import SLASH_COMMANDS

if TYPE_CHECKING:
    from tui.app import AssistantApp


def palette_entries(app: "AssistantApp") -> list[tuple[str, Callable[[], Any], str]]:
    """(name, callback, help) for every palette entry."""
    entries: list[tuple[str, Callable[[], Any], str]] = [
        ("Cancel the running reply", app.action_cancel_turn, "Esc: stop streaming and running tools"),
        ("Pick files into the context", app.action_pick_files, "ctrl+o: fuzzy file picker"),
        ("Focus the context pane", partial(app.action_toggle_focus, "context"), "ctrl+g (again: back to the prompt)"),
        ("Focus the tool trace", partial(app.action_toggle_focus, "trace"), "ctrl+t (again: back to the prompt)"),
        ("Focus the prompt", app.action_focus_prompt, ""),
        ("Quit", app.exit, "ctrl+q"),
        ("Show the whole conversation", app.action_transcript, "f2: every message, including pruned ones"),
        ("Show or hide the model's thinking", app.action_toggle_thinking, "f3: the newest thinking block"),
    ]
    for command in SLASH_COMMANDS:
        if command.args and not command.args.startswith("["):
            # needs an argument: put the command in the prompt for the user to finish
            callback: Callable[[], Any] = partial(_prefill, app, command.name + " ")
        elif command.to_model:
            callback = partial(app.submit, command.name)
        else:
            callback = partial(app.run_command, command.name, "")
        entries.append((command.usage, callback, command.help))
    return entries


def _prefill(app: "AssistantApp", text: str) -> None:
    app.prompt.load_text(text)
    app.prompt.move_cursor(app.prompt.document.end)
    app.prompt.focus()


class AssistantCommands(Provider):
    """assistant-tui actions for the command palette."""

    async def discover(self) -> Hits:
        for name, callback, help_text in palette_entries(self.app):  # type: ignore[arg-type]
            yield DiscoveryHit(name, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, callback, help_text in palette_entries(self.app):  # type: ignore[arg-type]
            if (score := matcher.match(name)) > 0:
                yield Hit(score, matcher.highlight(name), callback, help=help_text)
