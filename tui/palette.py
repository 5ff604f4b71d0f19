"""The command palette's entries: the command registry's actions and slash commands, from one Provider.

Every entry is a Textual action string run on the app (``run_action``), so the palette needs
nothing from the app but its actions; it matches a command's synonyms as well as its name.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from textual.command import DiscoveryHit, Hit, Hits, Matcher, Provider
from textual.content import Content

if TYPE_CHECKING:
    from tui.commands import Command


def palette_action(command: Command) -> str:
    """The app action an entry runs: its own action, or the slash command sent (or put in the prompt when it needs an argument)."""
    if command.action:
        return command.action
    if command.args and not command.args.startswith("["):
        return f"prefill({command.name + ' '!r})"  # needs an argument: the user finishes it in the prompt
    return f"submit({command.name!r})"


def palette_entries() -> list[tuple[str, str, str, tuple[str, ...]]]:
    """(name, action, help, synonyms) for every palette entry, in registry order."""
    from tui.commands import COMMANDS  # the registry loads after the first frame: the palette is opened later

    return [(command.usage, palette_action(command), command.help, command.synonyms) for command in COMMANDS]


def _highlight(matcher: Matcher, text: str) -> Content:
    """``text`` as plain content (``[path]`` is not markup) with the matched characters styled."""
    content = Content(text)
    for offset in matcher.fuzzy_search.match(matcher.query, text)[1]:
        if not text[offset].isspace():
            content = content.stylize(matcher.match_style, offset, offset + 1)
    return content


def match_entry(matcher: Matcher, name: str, synonyms: tuple[str, ...]) -> tuple[float, Content]:
    """How well ``name`` or one of its synonyms matches, and what to show: the name, and the synonym that matched."""
    score = matcher.match(name)
    best = max(synonyms, key=matcher.match, default="")
    synonym_score = matcher.match(best) if best else 0.0
    if synonym_score > score:
        return synonym_score, Content.assemble(Content(name), ("  · ", "dim"), _highlight(matcher, best).stylize("dim"))
    return score, _highlight(matcher, name)


class AssistantCommands(Provider):
    """assistant-tui actions for the command palette."""

    async def discover(self) -> Hits:
        for name, action, help_text, _ in palette_entries():
            yield DiscoveryHit(Content(name), partial(self.app.run_action, action), text=name, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, action, help_text, synonyms in palette_entries():
            score, shown = match_entry(matcher, name, synonyms)
            if score > 0:
                yield Hit(score, shown, partial(self.app.run_action, action), text=name, help=help_text)
