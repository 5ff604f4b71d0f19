"""Texts the app shows: ``/help`` (generated from the real bindings) and the onboarding panel."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.binding import Binding
from textual.widget import Widget
from textual.widgets import Static

from core import paths

if TYPE_CHECKING:  # pydantic: loaded after the first frame
    from core.config import Settings


def _key_label(keys: str) -> str:
    return " / ".join(key.strip() for key in keys.split(","))


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


def help_renderable(sections: Iterable[tuple[str, list[Binding]]], commands: Iterable[Any]) -> Group:
    """Keys (by where they work) and slash commands, as compact tables.

    Args:
        sections: (where, bindings) pairs.
        commands: the command registry (``tui.commands.COMMANDS``); its slash commands are listed.
    """
    keys = Table(box=None, padding=(0, 2, 0, 0), show_edge=False, expand=False)
    keys.add_column("Key", style="bold", max_width=20)
    keys.add_column("Action")
    keys.add_column("Where", style="dim", no_wrap=True)
    for where, bindings in sections:
        for binding in bindings:
            if binding.description:
                keys.add_row(_key_label(binding.key), binding.tooltip or binding.description, where)
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
