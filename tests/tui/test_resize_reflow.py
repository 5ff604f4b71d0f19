"""A streamed answer reflows when the terminal shrinks: no wrapped line is lost (issue 23, "design for 80x24").

Seen in tmux with a change that dropped Textual's layout request after a widget's virtual size
changed (to save a layout per streamed write): after 80x24 -> 60x20 the answer's paragraphs kept
the height they had at 80 columns, so their third wrapped line was cut off. Read from the rows
the terminal shows, through the real app against the fake server.
"""

from __future__ import annotations

from tests.fake_llm import FakeLLM, Reply
from tests.tui.conftest import finish_turn, refreshed, send, started, wait_for
from tui.app import AssistantApp

ANSWER = (
    "This is a paragraph about the login flow number five, with code and a list:\n\n"
    "- one item\n"
    "- two items that are rather long so that they wrap at eighty columns nicely\n"
)

SCROLLBAR = str.maketrans("", "", "▁▂▃▄▅▆▇█")
"""The scrollbar's thumb, drawn in the chat's last column."""


def shown(app: AssistantApp) -> str:
    """The chat's rows as the terminal shows them, joined into words (wrapping and the scrollbar undone)."""
    chat = app.chat.region
    rows = [strip.text[chat.x : chat.right] for strip in app.screen._compositor.render_strips()[chat.y : chat.bottom]]
    return " ".join(" ".join(rows).translate(SCROLLBAR).split())


async def test_a_streamed_answer_keeps_every_wrapped_line_after_the_terminal_shrinks(real_app: AssistantApp, fake_llm: FakeLLM) -> None:
    fake_llm.script(Reply(text=ANSWER, chunk=6))
    async with real_app.run_test(size=(80, 24)) as pilot:
        await started(pilot)
        await send(pilot, "the login flow")
        await finish_turn(pilot)
        await refreshed(pilot)
        assert "with code and a list:" in shown(real_app), shown(real_app)
        await pilot.resize_terminal(60, 20)
        await wait_for(pilot, lambda: real_app.size.width == 60, what="the app at 60 columns")
        await refreshed(pilot)
        await refreshed(pilot)
        text = shown(real_app)
        assert "login flow number five, with code and a list:" in text, text
        assert "rather long so that they wrap at eighty columns nicely" in text, text
