"""The prompt: multi-line input with history, completion of slash commands and ``@`` files, and paste chips."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Callable, Literal, TypedDict, Unpack

from rich.table import Table
from rich.text import Text
from textual import events, on
from textual.actions import SkipAction
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import OptionList, TextArea
from textual.widgets.option_list import Option
from textual.widgets.text_area import Location

from tui.paste import PasteStore, is_large, normalize

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Completion:
    """One completion candidate."""

    value: str
    """Text that replaces the token being completed."""
    label: str
    help: str = ""
    kind: Literal["command", "file"] = "command"
    highlight: tuple[int, ...] = ()
    """Indices of ``label`` characters to highlight (matched characters)."""


# A completer takes the current line up to the cursor and returns the column where the
# token being completed starts, and the candidates; None when nothing is being completed.
Completer = Callable[[str], "tuple[int, list[Completion]] | None"]


@dataclass
class Completions:
    """What the completion menu offers: the candidates for the token at the cursor and the highlighted one.

    The prompt owns it and changes it as the user types and presses Up/Down; it posts
    :class:`PromptInput.CompletionsChanged` so that :class:`CompletionMenu` can draw it.
    """

    candidates: list[Completion] = field(default_factory=list)
    highlighted: int | None = None

    @property
    def display(self) -> bool:
        """True while there is something to choose from (the menu is shown)."""
        return bool(self.candidates)

    @property
    def current(self) -> Completion | None:
        """The highlighted candidate, if any."""
        index = self.highlighted
        if index is None or not (0 <= index < len(self.candidates)):
            return None
        return self.candidates[index]

    def moved(self, step: int) -> int | None:
        """The index ``step`` away from the highlighted one, wrapping around the ends (as ``OptionList`` does)."""
        if not self.candidates:
            return None
        if self.highlighted is None:
            return 0 if step > 0 else len(self.candidates) - 1
        return (self.highlighted + step) % len(self.candidates)


class CompletionMenu(OptionList, can_focus=False):
    """Candidates shown above the prompt while completing: a view of the prompt's :class:`Completions`."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.candidates: tuple[Completion, ...] = ()
        self.display = False

    def show(self, candidates: tuple[Completion, ...], highlighted: int | None) -> None:
        """Show ``candidates`` (none: hide) with ``highlighted`` highlighted."""
        if candidates != self.candidates:
            self.candidates = candidates
            self.clear_options()
            self.add_options([Option(_completion_row(c)) for c in candidates])
        self.highlighted = highlighted
        self.display = bool(candidates)


def _completion_row(completion: Completion) -> Table:
    grid = Table.grid(expand=True, padding=(0, 2))
    grid.add_column(no_wrap=True)
    grid.add_column(ratio=1, no_wrap=True, overflow="ellipsis", style="dim")
    label = Text(completion.label, style="bold" if completion.kind == "command" else "")
    for index in completion.highlight:
        label.stylize("bold underline", index, index + 1)
    grid.add_row(label, completion.help)
    return grid


class PromptInput(TextArea):
    """Enter sends; ctrl+j (or shift+enter) inserts a newline; Up/Down on the first/last line recall history.

    A large paste (``tui.paste``) is one chip, ``[pasted #1: 2,000 lines, 110 KB]``, that the
    cursor steps over and one Backspace deletes; the whole text is sent in its place.

    Args:
        completer: completes the token at the cursor (``/`` commands, ``@`` files).
        history: earlier prompts for Up/Down.
        draft: text to start with (what was typed when the app last ended on an error), with a notice.
        keep_draft: called with the text when the app ends on an error (``tui.draft.keep``).
        id: the widget's id.
    """

    BINDINGS = [
        Binding("enter", "submit", "Send", tooltip="Send the prompt (or accept the highlighted completion)", id="prompt.submit"),
        Binding("ctrl+j,shift+enter,alt+enter", "newline", "Newline", tooltip="New line in the prompt; Up/Down on the first/last line recall history", id="prompt.newline"),
        Binding("tab", "complete", "Complete", tooltip="Complete the /command or @file", show=False, id="prompt.complete"),
        Binding("pageup", "app.scroll_chat('page_up')", "Chat up", tooltip="Scroll the chat up a page (the prompt keeps the focus)", show=False, id="prompt.chat_page_up"),
        Binding("pagedown", "app.scroll_chat('page_down')", "Chat down", tooltip="Scroll the chat down a page", show=False, id="prompt.chat_page_down"),
        Binding("ctrl+home", "app.scroll_chat('top')", "Chat top", tooltip="Jump to the top of the chat", show=False, id="prompt.chat_top"),
        Binding("ctrl+end", "app.scroll_chat('bottom')", "Follow", tooltip="Jump to the newest output and follow it again (in the footer while scrolled up)", id="prompt.chat_bottom"),
        Binding("ctrl+c", "clear_prompt", "Clear", show=False, id="prompt.clear",
                tooltip="Copy the selection; without one, clear the prompt (Up brings the text back); on an empty prompt, say how to quit"),
        Binding("f4", "expand_paste", "Expand paste", tooltip="Turn the paste chip at the cursor (else the last one) back into editable text", id="prompt.expand_paste"),
    ]

    COMPONENT_CLASSES = TextArea.COMPONENT_CLASSES | {"prompt-input--chip"}
    DEFAULT_CSS = """
    PromptInput > .prompt-input--chip {
        color: $text-accent;
        background: $boost;
        text-style: bold;
    }
    """

    class Submitted(Message):
        """The user sent the prompt's text (chips replaced by what was pasted)."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    class CompletionsChanged(Message):
        """What the completion menu offers changed: other candidates, none (hide it), or another highlighted one."""

        def __init__(self, completions: Completions) -> None:
            super().__init__()
            self.candidates = tuple(completions.candidates)
            self.highlighted = completions.highlighted

    class CompletionAccepted(Message):
        """A completion was inserted (the app adds ``@`` files to the context)."""

        def __init__(self, completion: Completion) -> None:
            super().__init__()
            self.completion = completion

    def __init__(
        self,
        *,
        completer: Completer | None = None,
        history: list[str] | None = None,
        draft: str = "",
        keep_draft: Callable[[str], None] | None = None,
        id: str | None = None,
    ) -> None:
        super().__init__(
            id=id,
            tab_behavior="focus",
            soft_wrap=True,
            show_line_numbers=False,
            highlight_cursor_line=False,
            placeholder="Ask anything · / for commands · @ for files",
        )
        self.menu = Completions()
        """What the completion menu offers (the menu widget draws it from :class:`CompletionsChanged`)."""
        self.completer = completer
        self.prompt_history: list[str] = list(history or [])
        self._history_index = len(self.prompt_history)
        self._draft = ""
        self._suppress_completion = False
        self.pastes = PasteStore()
        """Large pastes behind the chips (kept for the run: recalled history entries hold chips)."""
        self._has_chip = False
        self._draft_kept = draft
        """What was typed when the app last ended on an error (shown at mount)."""
        self.keep_draft = keep_draft
        """Called with the prompt's text when the app ends on an error (an error in another widget still ends it)."""

    def on_mount(self) -> None:
        if self._draft_kept:
            self._load(self._draft_kept)
            self.notify("What you had typed when assistant-tui stopped on an error is back in the prompt.", timeout=8)

    def on_unmount(self) -> None:
        if self.keep_draft is not None and self.app.return_code and self.text.strip():
            self.keep_draft(self.pastes.expand(self.text))

    # -- keys ------------------------------------------------------------
    async def _on_message(self, message: Message) -> None:
        """Every event and message the prompt handles, guarded: a bug in handling one must not end the app and lose the text.

        Textual ends the app on any exception a widget's handler raises (``App._handle_exception``);
        here the error is logged with its traceback, the user is told, and what was typed stays.
        """
        try:
            await super()._on_message(message)
        except Exception:
            log.exception("the prompt failed to handle %s", type(message).__name__)
            self.notify("The prompt hit an internal error (details in the log); your text is kept.", severity="error", timeout=8)

    async def _on_key(self, event: events.Key) -> None:
        if event.key == "escape" and self.menu.display:
            # Esc closes the menu; otherwise it goes on to the app (cancel the reply).
            event.prevent_default()
            event.stop()
            self._offer([])
        elif not event.is_printable and await self._run_own_binding(event.key):  # typed text is TextArea's to insert
            event.prevent_default()  # enter submits instead of inserting a newline; TextArea's own handling is skipped
            event.stop()

    async def _run_own_binding(self, key: str) -> bool:
        """Run the prompt's (or TextArea's) binding for ``key`` now, in order with the keys typed around it.

        Left to Textual, a binding runs only once the key has bubbled up to the app, after the prompt
        has already inserted the characters typed after it: ``aaa`` ctrl+j ``bbb`` in one burst became
        ``aaabbb`` and a newline, and a burst of Backspaces deleted what was typed after them.

        The prompt's own map is read directly (``Screen.active_bindings`` took a millisecond a key);
        the app sets no keymap, which Textual would apply to a copy of it.

        Returns:
            True when a binding of the prompt handled the key (False: it goes on to the app's bindings).
        """
        for binding in self._bindings.key_to_bindings.get(key, ()):
            if not binding.priority and await self.app.run_action(binding.action, self):  # run_action asks check_action
                return True
        return False

    def action_submit(self) -> None:
        current = self.menu.current
        if current is not None:
            token = self._completion_token()
            if token is None or token != current.value:
                self._accept(current)
                return
        self._offer([])
        text = self.text
        if not text.strip():
            return
        self.post_message(self.Submitted(self.pastes.expand(text)))
        if not self.prompt_history or self.prompt_history[-1] != text:
            self.prompt_history.append(text)
        self._history_index = len(self.prompt_history)
        self._draft = ""
        self.clear()

    def action_newline(self) -> None:
        self.insert("\n")

    def action_complete(self) -> None:
        current = self.menu.current
        if current is None:
            raise SkipAction()
        self._accept(current)

    def action_cursor_up(self, select: bool = False) -> None:
        if self.menu.display and not select:
            self.highlight_completion(self.menu.moved(-1))
        elif not select and self.cursor_location[0] == 0 and self._history_index > 0:
            if self._history_index == len(self.prompt_history):
                self._draft = self.text
            self._history_index -= 1
            self._load(self.prompt_history[self._history_index])
        else:
            super().action_cursor_up(select)

    def action_cursor_down(self, select: bool = False) -> None:
        if self.menu.display and not select:
            self.highlight_completion(self.menu.moved(1))
        elif not select and self.cursor_location[0] == self.document.line_count - 1 and self._history_index < len(self.prompt_history):
            self._history_index += 1
            self._load(self.prompt_history[self._history_index] if self._history_index < len(self.prompt_history) else self._draft)
        else:
            super().action_cursor_down(select)

    def restore(self, text: str) -> None:
        """Put text back into the prompt (a failed turn), unless the user typed something new.

        What was pasted comes back as its chips.
        """
        if not self.text.strip():
            self._load(self.pastes.compress(text))

    # -- pastes ------------------------------------------------------------
    async def _on_paste(self, event: events.Paste) -> None:
        text = normalize(event.text)
        if self.read_only or not is_large(text):
            return  # TextArea inserts it as typed text
        event.prevent_default()
        paste = self.pastes.add(text)
        result = self.replace(paste.chip, *sorted(self.selection), maintain_selection_offset=False)
        self.move_cursor(result.end_location)
        self.focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "expand_paste":
            return self._has_chip  # in the footer only while the prompt holds a chip
        if action == "clear_prompt":
            return bool(self.text)  # an empty prompt leaves ctrl+c to the app ("Press ctrl+q to quit")
        return super().check_action(action, parameters)

    def action_clear_prompt(self) -> None:
        """ctrl+c: copy the selection if there is one, else clear the prompt, its text kept in the history (Up brings it back).

        Before, ctrl+c with text and no selection did nothing but the app's "Press ctrl+q to quit",
        and the text stayed: a new user's habit from shells and other assistants found no way to
        clear a long prompt but holding Backspace.
        """
        if self.selected_text:
            self.action_copy()
            return
        text = self.text
        if not self.prompt_history or self.prompt_history[-1] != text:
            self.prompt_history.append(text)
        self._history_index = len(self.prompt_history)
        self._draft = ""
        self._offer([])
        self.clear()
        self.notify("Prompt cleared: Up brings it back · ctrl+q quits", timeout=3)

    def action_expand_paste(self) -> None:
        """Replace the chip at the cursor (else the last chip) with the text it stands for, to edit it."""
        row, column = self.cursor_location
        chips = [(r, start, end) for r in range(self.document.line_count) for start, end in self.pastes.chips(self.document.get_line(r))]
        if not chips:
            return
        touching = [chip for chip in chips if chip[0] == row and chip[1] <= column <= chip[2]]
        r, start, end = (touching or chips)[-1]
        text = self.pastes.expand(self.document.get_line(r)[start:end])
        self.replace(text, (r, start), (r, end), maintain_selection_offset=False)

    def _chip_around(self, location: Location) -> tuple[int, int] | None:
        """The chip ``location`` is strictly inside of, if any."""
        row, column = location
        for start, end in self.pastes.chips(self.document.get_line(row)):
            if start < column < end:
                return start, end
        return None

    def _skip_chip(self, target: Location, *, leftwards: bool) -> Location:
        """``target`` moved to the chip's edge when the move from the cursor would enter or cross a chip."""
        row, column = self.cursor_location
        if target[0] == row:
            for start, end in self.pastes.chips(self.document.get_line(row)):
                if leftwards and target[1] < end <= column and target[1] > start:
                    return (row, start)
                if not leftwards and column <= start < target[1] < end:
                    return (row, end)
        return target

    def get_cursor_left_location(self) -> Location:
        """One step left; a chip is one step (so Backspace deletes it whole)."""
        return self._skip_chip(super().get_cursor_left_location(), leftwards=True)

    def get_cursor_right_location(self) -> Location:
        """One step right; a chip is one step (so Delete deletes it whole)."""
        return self._skip_chip(super().get_cursor_right_location(), leftwards=False)

    def get_cursor_word_left_location(self) -> Location:
        """One word left; a chip is one word."""
        return self._skip_chip(super().get_cursor_word_left_location(), leftwards=True)

    def get_cursor_word_right_location(self) -> Location:
        """One word right; a chip is one word."""
        return self._skip_chip(super().get_cursor_word_right_location(), leftwards=False)

    def on_text_area_selection_changed(self, event: TextArea.SelectionChanged) -> None:
        # A click inside a chip puts the cursor after it: nothing can be typed into a chip.
        # The event is queued behind the keys of a burst: by now the text may have changed
        # (even been sent and cleared), so the cursor as it is now is what counts, not the event's.
        selection = self.selection
        if selection.is_empty and (chip := self._chip_around(selection.end)):
            self.move_cursor((selection.end[0], chip[1]))

    def get_line(self, line_index: int) -> Text:
        """The line with its chips styled."""
        line = super().get_line(line_index)
        chips = self.pastes.chips(line.plain)
        if chips:
            style = self.get_component_rich_style("prompt-input--chip")
            for start, end in chips:
                line.stylize(style, start, end)
        return line

    def _load(self, text: str) -> None:
        self._suppress_completion = True
        self.load_text(text)
        self.move_cursor(self.document.end)
        self._offer([])

    # -- completion --------------------------------------------------------
    def _line_before_cursor(self) -> str:
        row, column = self.cursor_location
        return self.document.get_line(row)[:column]

    def _completion_token(self) -> str | None:
        if self.completer is None:
            return None
        found = self.completer(self._line_before_cursor())
        if found is None:
            return None
        start, _ = found
        return self._line_before_cursor()[start:]

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        if self.pastes and (has_chip := bool(self.pastes.chips(self.text))) != self._has_chip:
            self._has_chip = has_chip
            self.refresh_bindings()  # "f4 Expand paste" in the footer
        if self._suppress_completion:
            self._suppress_completion = False
            self._offer([])
            return
        self.refresh_completion()

    def refresh_completion(self) -> None:
        """Recompute the candidates for the token at the cursor."""
        found = self.completer(self._line_before_cursor()) if self.completer else None
        self._offer(found[1] if found else [])

    def _offer(self, candidates: list[Completion]) -> None:
        """Offer ``candidates`` (none: close the menu), the first one highlighted."""
        highlighted = 0 if candidates else None
        if candidates != self.menu.candidates or highlighted != self.menu.highlighted:
            self.menu.candidates, self.menu.highlighted = list(candidates), highlighted
            self.post_message(self.CompletionsChanged(self.menu))

    def highlight_completion(self, index: int | None) -> None:
        """Highlight the candidate at ``index`` (Up/Down in the menu, or a click on it)."""
        if self.menu.display and index != self.menu.highlighted and index is not None and 0 <= index < len(self.menu.candidates):
            self.menu.highlighted = index
            self.post_message(self.CompletionsChanged(self.menu))

    def _accept(self, completion: Completion) -> None:
        found = self.completer(self._line_before_cursor()) if self.completer else None
        row, column = self.cursor_location
        start = found[0] if found else column
        self._suppress_completion = True
        self.replace(completion.value + " ", (row, start), (row, column))
        self._offer([])
        self.post_message(self.CompletionAccepted(completion))


class PromptOptions(TypedDict, total=False):
    """What :class:`PromptArea` passes on to its :class:`PromptInput` (see its arguments)."""

    completer: Completer | None
    history: list[str] | None
    draft: str
    keep_draft: Callable[[str], None] | None


class PromptArea(Vertical):
    """The prompt with its completion menu above it.

    The prompt decides what is offered (:class:`Completions`); this container passes each
    :class:`PromptInput.CompletionsChanged` down to the menu, and a click on a candidate back
    to the prompt. Neither child knows the other.
    """

    DEFAULT_CSS = """
    PromptArea {
        height: auto;
    }
    """

    def __init__(self, *, id: str | None = None, **options: Unpack[PromptOptions]) -> None:
        super().__init__(id=id)
        self.completion_menu = CompletionMenu(id="completion")
        self.input = PromptInput(id="prompt", **options)

    def compose(self) -> ComposeResult:
        yield self.completion_menu
        yield self.input

    @on(PromptInput.CompletionsChanged)
    def _show_completions(self, event: PromptInput.CompletionsChanged) -> None:
        event.stop()
        self.completion_menu.show(event.candidates, event.highlighted)

    @on(OptionList.OptionSelected, "#completion")
    def _completion_clicked(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.input.highlight_completion(event.option_index)
