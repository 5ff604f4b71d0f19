"""The command palette's entries: the app's actions and slash commands, from one Provider."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any, Callable

from textual.command import DiscoveryHit, Hit, Hits, Matcher, Provider
from textual.content import Content

from tui.commands import SLASH_COMMANDS

if TYPE_CHECKING:
    from tui.app import AssistantApp


SYNONYMS: dict[str, tuple[str, ...]] = {
    "Cancel the running reply": ("stop", "abort", "interrupt"),
    "Pick files into the context": ("files", "open file", "attach", "add files", "context"),
    "Focus the context pane": ("files", "context", "pinned files"),
    "Focus the tool trace": ("tools", "tool calls", "log", "activity"),
    "Focus the prompt": ("input", "type"),
    "Quit": ("exit", "close"),
    "Show the whole conversation": ("transcript", "history", "conversation", "messages", "scrollback", "log"),
    "Show or hide the model's thinking": ("reasoning", "thoughts"),
    "/plan": ("steps", "checklist", "todo"),
    "/aider": ("edit code", "change code", "refactor", "fix"),
    "/continue": ("go on", "more", "cut off", "truncated"),
    "/task": ("tasks", "template", "structured"),
    "/test": ("tests", "pytest", "check"),
    "/run": ("shell", "command", "execute", "terminal"),
    "/add": ("files", "context", "attach", "include", "pin"),
    "/drop": ("remove file", "unpin", "exclude", "context"),
    "/files": ("context", "pinned", "list files"),
    "/reset": ("clear", "forget", "wipe", "conversation"),
    "/sessions": ("history", "conversations", "resume", "switch session", "open session"),
    "/new": ("new conversation", "fresh", "start over"),
    "/export": ("save", "transcript", "markdown", "download", "conversation"),
    "/cost": ("tokens", "usage", "price", "spend", "money"),
    "/budget": ("limit", "allowance", "spend"),
    "/mcp": ("servers", "tools", "plugins"),
    "/help": ("keys", "shortcuts", "keyboard", "commands"),
    "/quit": ("exit", "close"),
}
"""Words people use for an entry (keyed by its name, or a slash command's name): the palette matches them too."""


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


def _highlight(matcher: Matcher, text: str) -> Content:
    """``text`` as plain content (``[path]`` is not markup) with the matched characters styled."""
    content = Content(text)
    for offset in matcher.fuzzy_search.match(matcher.query, text)[1]:
        if not text[offset].isspace():
            content = content.stylize(matcher.match_style, offset, offset + 1)
    return content


def match_entry(matcher: Matcher, name: str) -> tuple[float, Content]:
    """How well ``name`` or one of its synonyms matches, and what to show: the name, and the synonym that matched."""
    score = matcher.match(name)
    synonyms = SYNONYMS.get(name.partition(" ")[0] if name.startswith("/") else name, ())
    best = max(synonyms, key=matcher.match, default="")
    synonym_score = matcher.match(best) if best else 0.0
    if synonym_score > score:
        return synonym_score, Content.assemble(Content(name), ("  · ", "dim"), _highlight(matcher, best).stylize("dim"))
    return score, _highlight(matcher, name)


class AssistantCommands(Provider):
    """assistant-tui actions for the command palette."""

    async def discover(self) -> Hits:
        for name, callback, help_text in palette_entries(self.app):  # type: ignore[arg-type]
            yield DiscoveryHit(Content(name), callback, text=name, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, callback, help_text in palette_entries(self.app):  # type: ignore[arg-type]
            score, shown = match_entry(matcher, name)
            if score > 0:
                yield Hit(score, shown, callback, text=name, help=help_text)
