"""What makes 80 columns readable: URL-aware wrapping, a status line and a footer that leave parts out whole."""

from __future__ import annotations

import random
from pathlib import Path

from rich._wrap import divide_line as rich_divide_line
from rich.cells import cell_len
from rich.console import Console
from rich.text import Text
from textual.content import Content
from textual.widgets._footer import FooterKey

from core.config import Settings
from tests.tui.conftest import FixedClock, ScriptedHandler, refreshed, send, settle, wait_for
from tui import wrap
from tui.app import make_app
from tui.widgets.chat import NoteMessage
from tui.widgets.footer import fit_keys, key_width
from tui.widgets.status import fit_line

URL = "https://docs.example.com/guides/authentication/oauth2/authorization-code-flow-with-pkce?lang=en#step-3"


def lines(text: str, width: int) -> list[str]:
    offsets = wrap.divide_line(text, width)
    return [text[a:b] for a, b in zip([0, *offsets], [*offsets, len(text)])]


class TestWrap:
    def test_a_long_url_breaks_after_its_separators(self) -> None:
        assert lines(f"See {URL} for details", 44) == [
            "See ",
            "https://docs.example.com/guides/",
            "authentication/oauth2/",
            "authorization-code-flow-with-pkce?lang=en#",
            "step-3 for details",
        ]

    def test_a_piece_wider_than_the_line_breaks_after_dashes_and_only_a_word_wider_than_a_line_folds(self) -> None:
        assert lines("x https://e.com/authorization-code-flow-with-pkce", 12) == ["x ", "https://", "e.com/author", "ization-", "code-flow-", "with-pkce"]

    def test_text_without_overlong_words_wraps_exactly_as_rich_does(self) -> None:
        rng = random.Random(16)
        for _ in range(500):
            text = "".join(rng.choice("ab cd/ -日") for _ in range(rng.randint(0, 60)))
            width = rng.randint(2, 30)
            offsets = wrap.divide_line(text, width)
            assert offsets == sorted(set(offsets)) and all(0 < o < len(text) for o in offsets)
            assert all(cell_len(line.rstrip()) <= width for line in lines(text, width)), (text, width)
            if all(cell_len(word) <= width for word in text.split()):
                assert offsets == rich_divide_line(text, width)

    def test_installed_for_rich_text_and_textual_content(self) -> None:
        wrap.install()
        console = Console(width=30, file=None, record=True, color_system=None)
        console.print(Text(URL))
        assert console.export_text().splitlines()[0] == "https://docs.example.com/"
        assert [line.plain for line in Content(URL).wrap(30)][:2] == ["https://docs.example.com/", "guides/authentication/oauth2/"]


def parts(state: str = "ready", spend: bool = True) -> list[tuple[str, Text]]:
    named = [
        ("provider", Text("anthropic:claude-sonnet-4-5")),
        ("turn", Text("turn 3")),
        ("tools", Text("tools 2/10")),
        ("meter", Text("██████░░")),
        ("context", Text("~172k/200k")),
        ("warning", Text("⚠ 86% of context")),
        ("state", Text(state)),
    ]
    return named + ([("spend", Text("Σ 412k $1.37"))] if spend else [])


class TestStatusLine:
    def test_wide_shows_everything(self) -> None:
        assert fit_line(parts(), 200).plain == " anthropic:claude-sonnet-4-5 · turn 3 · tools 2/10 · ██████░░ ~172k/200k ⚠ 86% of context · ready · Σ 412k $1.37"

    def test_narrow_shortens_before_it_drops_and_keeps_turn_tools_and_cost_at_80(self) -> None:
        assert fit_line(parts(), 100).plain == " claude-sonnet-4-5 · turn 3 · tools 2/10 · ~172k/200k ⚠ 86% of context · ready · Σ 412k $1.37"
        assert fit_line(parts(), 80).plain == " claude-sonnet-4-5 · turn 3 · tools 2/10 · ~172k/200k ⚠ 86% · ready · Σ $1.37"
        assert fit_line(parts("running readFile…"), 80).plain == " claude-sonnet-4-5 · turn 3 · tools 2/10 · ~172k/200k · readFile… · Σ $1.37"
        assert fit_line(parts("waiting for the model…"), 80).plain == " claude-sonnet-4-5 · turn 3 · tools 2/10 · ~172k/200k ⚠ 86% · waiting… · Σ $1.37"
        assert fit_line(parts("running executeFilePathCommand…"), 80).plain == " claude-sonn… · turn 3 · tools 2/10 · ~172k/200k · executeFilePathCom… · Σ $1.37"
        assert fit_line(parts(), 60).plain == " claude-sonnet-… · tools 2/10 · ~172k/200k · ready · Σ $1.37"

    def test_too_narrow_even_then_keeps_the_model_name_and_the_state(self) -> None:
        line = fit_line(parts("running executeFilePathCommand"), 50).plain
        assert line == " claude-sonnet-4-5 · ~172k/200k · executeFilePath…"
        line = fit_line(parts("waiting for your approval of runCommand:curl"), 40).plain
        assert line == " claude-sonn… · ~172k/200k · approve ru…"
        assert cell_len(line) <= 40


def key(key_display: str, description: str, action: str) -> FooterKey:
    return FooterKey(key_display, key_display, description, action)


class TestFooter:
    KEYS = [
        ("⏎", "Send", "submit"),
        ("^j", "Newline", "newline"),
        ("esc", "Cancel", "cancel_turn"),
        ("^o", "Pick", "pick_files"),
        ("^g", "Context", "toggle_focus('context')"),
        ("^t", "Trace", "toggle_focus('trace')"),
        ("f2", "History", "transcript"),
        ("f1", "Help", "help"),
    ]

    def test_whole_keys_are_left_out_least_important_first(self) -> None:
        keys = [key(*k) for k in self.KEYS]
        assert sum(key_width(k) for k in keys) == 76
        assert [k.description for k in fit_keys(keys, 76)] == [k[1] for k in self.KEYS]
        assert [k.description for k in fit_keys(keys, 75)] == ["Send", "Newline", "Cancel", "Pick", "Context", "Trace", "Help"]
        assert [k.description for k in fit_keys(keys, 40)] == ["Send", "Cancel", "Pick", "Help"]
        assert [k.description for k in fit_keys(keys, 26)] == ["Send", "Cancel", "Help"]

    def test_unknown_keys_go_from_the_right_after_the_listed_ones(self) -> None:
        keys = [key(*k) for k in self.KEYS[:1]] + [key("pgup", "Up", "scroll_up"), key("pgdn", "Down", "scroll_down")]
        assert [k.description for k in fit_keys(keys, 15)] == ["Send", "Up"]


async def test_onboarding_opens_at_its_top_and_a_sent_message_is_followed(project: Path) -> None:
    """At 80x24 the onboarding is taller than the chat: it shows from its first line; what the user
    sends next (and the "No provider" note it gets) is brought into view."""
    app = make_app(Settings(project_root=project), handler=ScriptedHandler([], project_root=project), clock=FixedClock())
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, lambda: app.chat.max_scroll_y > 0)
        await refreshed(pilot, app.chat)  # the onboarding's scroll to its top (after a refresh) is done
        assert app.chat.scroll_y == 0
        await send(pilot, "hello")
        await wait_for(pilot, lambda: any("nothing was sent" in note.body for note in app.chat.query(NoteMessage)))
        await wait_for(pilot, lambda: app.chat.scroll_y == app.chat.max_scroll_y > 0)
