"""A streamed write is laid out once, and the chat it leaves on screen is the one a single write draws.

Textual's screen tells each widget its new size after a layout through the
``virtual_size`` reactive, declared ``layout=True``: every widget a write resized (the
growing block, the message, the chat) asked for a second layout, and the chat for a
redraw of its whole visible region that drew no new line. ``tui/widgets/laid_out.py``
drops those requests. These tests stream an answer of every kind of block through the
real ``AssistantMessage`` in the real ``ChatView`` (the app's stylesheet, 80x38), count
the screen's layouts from outside (``Screen._refresh_layout``), and compare the screen
with the same answer written whole.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from textual.app import App
from textual.screen import Screen

from benchmarks.content import mixed_markdown
from tui.widgets import chat
from tui.widgets.chat import AssistantMessage, ChatView
from tui.widgets.laid_out import LaidOutOnce
from tui.widgets.markdown_table import ChatMarkdown

ANSWER = mixed_markdown(8000)
WRITE = 200
SIZE = (80, 38)


class ChatApp(App[None]):
    CSS_PATH = "../../tui/app.tcss"

    def compose(self) -> Any:
        yield ChatView(id="chat")


async def _settled(app: App[None], message: AssistantMessage) -> None:
    """The write is parsed, mounted, laid out and drawn (waits on the state, not on time)."""
    while message._body.busy or message._pending or (message._stream is not None and message._stream._pending):
        await asyncio.sleep(0)
    await app.screen.wait_for_refresh()
    await app.screen.wait_for_refresh()


def _screen_text(app: App[None]) -> str:
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


async def _stream(chunks: list[str], layouts: list[int] | None = None) -> str:
    app = ChatApp()
    async with app.run_test(size=SIZE):
        message = AssistantMessage()
        await app.query_one(ChatView).add(message)
        await app.screen.wait_for_refresh()
        if layouts is not None:
            layouts.clear()
        for chunk in chunks:
            await message.append(chunk)
            await _settled(app, message)
        return _screen_text(app)


@pytest.fixture
def layouts(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One entry per full layout of the screen (a layout on scroll alone is not one)."""
    seen: list[int] = []
    original = Screen._refresh_layout

    def counted(screen: Screen[Any], size: Any = None, scroll: bool = False) -> None:
        if not (scroll and not screen._layout_widgets):
            seen.append(1)
        original(screen, size, scroll)

    monkeypatch.setattr(Screen, "_refresh_layout", counted)
    return seen


async def test_a_streamed_write_is_laid_out_once(monkeypatch: pytest.MonkeyPatch, layouts: list[int]) -> None:
    monkeypatch.setattr(chat, "FLUSH_INTERVAL", 0.0)  # each chunk is one write
    chunks = [ANSWER[i : i + WRITE] for i in range(0, len(ANSWER), WRITE)]
    await _stream(chunks, layouts)
    per_write = len(layouts) / len(chunks)
    # Before: 2.0 per write (the second asked for by the widgets the first resized). A few more than
    # one: the scrollbar appearing, finished blocks sealed at their height.
    assert per_write <= 1.25, f"{len(layouts)} layouts for {len(chunks)} writes"


async def test_the_streamed_screen_reads_as_the_answer_written_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(chat, "FLUSH_INTERVAL", 0.0)
    streamed = await _stream([ANSWER[i : i + WRITE] for i in range(0, len(ANSWER), WRITE)])
    whole = await _stream([ANSWER])
    assert "stream_query" in whole  # the answer's last block is on screen
    assert streamed == whole


def test_the_chat_widgets_keep_their_css_type_names() -> None:
    """The mixin is not a Widget: Textual's CSS names follow a class's first Widget base, which must stay its own."""
    assert isinstance(ChatView(), LaidOutOnce)
    assert "VerticalScroll" in ChatView._css_type_names and "LaidOutOnce" not in ChatView._css_type_names
    for block in ChatMarkdown.BLOCKS.values():
        assert issubclass(block, LaidOutOnce)
        assert "MarkdownBlock" in block._css_type_names, block
