"""Texts the app shows: ``/help`` (generated from the real bindings) and the onboarding panel."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.table import Table
from rich.text import Text
from textual.binding import Binding
from textual.widget import Widget
from textual.widgets import Static

from core import paths

if TYPE_CHECKING:  # pydantic: loaded after the first frame
    from core.config import Settings


KEY_NAMES = {"escape": "Esc", "enter": "Enter", "space": "Space", "tab": "Tab", "backspace": "Backspace", "delete": "Del",
             "pageup": "PgUp", "pagedown": "PgDn", "home": "Home", "end": "End", "up": "↑", "down": "↓", "left": "←", "right": "→"}
"""Textual's key names as a keyboard labels them (``escape`` read as a word, not a key)."""


def _key_label(keys: str) -> str:
    return " / ".join(KEY_NAMES.get(key.strip(), key.strip()) for key in keys.split(","))


def _merged(rows: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    """One row per key and place: a key whose action depends on what is asked (approval's ``a``) lists both."""
    out: list[tuple[str, str, str]] = []
    for key, action, where in rows:
        if out and out[-1][0] == key and out[-1][2] == where:
            out[-1] = (key, f"{out[-1][1]} / {action}", where)
        else:
            out.append((key, action, where))
    return out


def key_sections(app_bindings: Iterable[Any]) -> list[tuple[str, list[Binding]]]:
    """The real bindings, by where they work (for ``/help``): the app's (``anywhere``), then each widget's and screen's."""
    from tui.screens.approval import ApprovalScreen  # imported when /help is built, not before the first frame
    from tui.widgets.chat import ChatView
    from tui.widgets.context import ContextPane
    from tui.widgets.pasted import PastedMessage
    from tui.widgets.prompt import PromptInput
    from tui.widgets.trace import ToolCallView

    owners: list[tuple[str, Iterable[Any]]] = [("anywhere", app_bindings), ("prompt", PromptInput.BINDINGS), ("chat", ChatView.BINDINGS), ("paste", PastedMessage.BINDINGS),
                                               ("trace", ToolCallView.BINDINGS), ("context", ContextPane.BINDINGS), ("approval", ApprovalScreen.BINDINGS)]
    return [(where, [b for b in bindings if isinstance(b, Binding)]) for where, bindings in owners]


class KeysTable:
    """The keys: a Key · Action · Where table when the actions get room beside the other two columns,
    else (the chat is 42 columns wide at 80x24) each "where" as a heading over a Key · Action table,
    so the action takes all the width the key leaves (it was squeezed to 15 columns between them).
    """

    KEY_CELLS = 20
    """The key column's widest (longer key lists wrap at their " / ")."""
    NARROW_KEY_CELLS = 11
    """The key column when narrow: ``shift+enter`` whole; a longer list of keys wraps at its " / "."""
    ACTION_CELLS = 36
    """The room an action needs beside the key and the place for the three-column table."""

    def __init__(self, rows: list[tuple[str, str, str]]) -> None:
        self.rows = rows
        """(key, action, where) in the order shown."""

    def _key_width(self) -> int:
        return min(self.KEY_CELLS, max((cell_len(key) for key, _, _ in self.rows), default=3))

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        key_width = self._key_width()
        where_width = max((cell_len(where) for _, _, where in self.rows), default=5)
        if options.max_width >= key_width + self.ACTION_CELLS + where_width + 4:
            table = Table(box=None, padding=(0, 2, 0, 0), show_edge=False, expand=False)
            table.add_column("Key", style="bold", max_width=self.KEY_CELLS)
            table.add_column("Action")
            table.add_column("Where", style="dim", no_wrap=True)
            for row in self.rows:
                table.add_row(*row)
            yield table
            return
        key_width = min(key_width, self.NARROW_KEY_CELLS)
        places = list(dict.fromkeys(where for _, _, where in self.rows))
        for index, place in enumerate(places):
            heading = Text(("" if index == 0 else "\n") + f"Keys: {place}", style="bold")
            table = Table(box=None, padding=(0, 1, 0, 0), show_edge=False, show_header=False, expand=False)
            table.add_column("Key", style="bold", width=key_width)
            table.add_column("Action")
            for key, action, where in self.rows:
                if where == place:
                    table.add_row(key, action)
            yield heading
            yield table


def help_renderable(sections: Iterable[tuple[str, list[Binding]]], commands: Iterable[Any]) -> Group:
    """Keys (by where they work) and slash commands, as compact tables.

    Args:
        sections: (where, bindings) pairs.
        commands: the command registry (``tui.commands.COMMANDS``); its slash commands are listed.
    """
    rows = _merged([(_key_label(binding.key), binding.tooltip or binding.description, where)
                    for where, bindings in sections for binding in bindings if binding.description])
    keys = KeysTable(rows)
    table = Table(box=None, padding=(0, 2, 0, 0), show_edge=False, expand=False)
    table.add_column("Command", style="bold")
    table.add_column("What it does")
    for command in commands:
        if command.name.startswith("/"):
            table.add_row(command.usage, command.help)
    footer = Text("ctrl+p opens the command palette with the same actions.", style="italic")
    return Group(keys, Text(""), table, Text(""), footer)


def show_top_when_taller(widget: Widget) -> None:
    """Scroll to ``widget``'s first line when it is taller than its container's view (long texts are read from the top)."""
    parent = widget.parent
    if isinstance(parent, Widget) and widget.outer_size.height > parent.scrollable_content_region.height:
        widget.scroll_visible(top=True, animate=False)


class LongNote(Static):
    """``/help`` or ``/cost`` in the chat; opens at its first line when taller than the chat (at 80x24)."""

    _placed = False

    def on_resize(self) -> None:
        if not self._placed and self.outer_size.height:  # its first layout: the height is known now
            self._placed = True
            self.call_after_refresh(show_top_when_taller, self)


def onboarding_markdown(settings: Settings) -> str:
    """One screen on how to configure a provider."""
    config = _home_relative(paths.config_file())
    return f"""\
**No model provider is configured yet.** Chat needs one; file context, `/task` and the trace work without.

Pick one of these, then restart `assistant-tui`:

- **Environment**: `export ANTHROPIC_API_KEY=sk-ant-...` (Claude, the default), or `OPENAI_API_KEY` with `--provider openai`.
- **Local or compatible server** (Ollama, vLLM, LM Studio, a gateway): `OPENAI_BASE_URL=http://localhost:11434/v1 assistant-tui --provider openai --model llama3.1` (no key needed).
- **Project `.env`** in the project directory: the same variables, one per line.
- **User config** `{config}`: `provider = "anthropic"`, `model = "claude-sonnet-4-5"`, `anthropic_api_key = "..."`.
- **Flags**: `--provider anthropic|openai`, `--model NAME`.

Type `/help` for keys and commands.
"""


def _home_relative(path: Path) -> str:
    try:
        return "~/" + str(path.relative_to(Path.home()))
    except ValueError:
        return str(path)
