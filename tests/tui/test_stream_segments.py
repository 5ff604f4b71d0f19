"""A streamed answer in segments: each finished top-level block is mounted once and never drawn again.

Textual's ``Markdown.append`` keeps finished blocks, but inside one growing Markdown: every
write re-laid out and re-drew them. These tests stream a reply of several kinds of block
(heading, paragraph, list, fenced code, table) through the real ``AssistantMessage`` in the
real ``ChatView`` and count, from outside, what Textual renders: a finished block's lines and
content must not be rendered again by later writes, and the screen must read exactly as the
same answer drawn whole.
"""

from __future__ import annotations

import collections
from typing import Any, Iterator

import pytest
from textual._styles_cache import StylesCache
from textual.app import App
from textual.widget import Widget
from textual.widgets.markdown import MarkdownBlock

from tests.tui.conftest import refreshed, wait_for
from tui.widgets import chat
from tui.widgets.chat import AssistantMessage, ChatView

BLOCKS = [
    "## Where the login lives\n\n",
    "The login flow is in `src/auth.py`; the token is checked against the store before it returns.\n\n",
    "- `login(user)` returns the user\n- `logout()` ends the session\n\n",
    "```python\ndef login(user):\n    return session_store.lookup(user.session_id, refresh=True)\n```\n\n",
    "| call | result |\n|---|---|\n| `login(user)` | the user |\n\n",
    "1. check the token\n2. refresh it\n\n",
    "> Note: the store expires tokens after an hour.\n\n",
    "That is the whole flow.\n",
]
ANSWER = "".join(BLOCKS)


class ChatApp(App[None]):
    CSS_PATH = "../../tui/app.tcss"

    def compose(self) -> Any:
        yield ChatView(id="chat")


class Renders:
    """What Textual renders per widget: content renders and lines drawn (not taken from the line cache)."""

    def __init__(self) -> None:
        self.content: collections.Counter[int] = collections.Counter()
        self.lines: collections.Counter[int] = collections.Counter()

    def of(self, widgets: list[Widget]) -> int:
        return sum(self.content[id(w)] + self.lines[id(w)] for w in widgets)


@pytest.fixture
def renders(monkeypatch: pytest.MonkeyPatch) -> Iterator[Renders]:
    seen = Renders()
    render_content = Widget._render_content
    render_widget = StylesCache.render_widget

    def counted_content(widget: Widget) -> None:
        seen.content[id(widget)] += 1
        render_content(widget)

    def counted_lines(cache: StylesCache, widget: Widget, crop: Any) -> Any:
        seen.lines[id(widget)] += sum(1 for y in crop.line_range if y in cache._dirty_lines or y not in cache._cache)
        return render_widget(cache, widget, crop)

    monkeypatch.setattr(Widget, "_render_content", counted_content)
    monkeypatch.setattr(StylesCache, "render_widget", counted_lines)
    yield seen


def _with_descendants(widgets: list[Widget]) -> list[Widget]:
    return [w for widget in widgets for w in (widget, *widget.walk_children())]


def _top_blocks(message: AssistantMessage) -> list[MarkdownBlock]:
    """The message's top-level Markdown blocks in order (wherever they are mounted)."""
    return [w for w in message.walk_children() if isinstance(w, MarkdownBlock) and not isinstance(w.parent, MarkdownBlock)]


def _screen(app: App[Any]) -> list[str]:
    return [strip.text.rstrip() for strip in app.screen._compositor.render_strips()]


async def _write(pilot: Any, message: AssistantMessage, text: str) -> None:
    """Append ``text`` and wait until it is parsed, mounted, laid out and drawn."""
    await message.append(text)
    await wait_for(pilot, lambda: message.shown.endswith(text) and not message._body.busy, what="the write on screen")
    await refreshed(pilot, message)
    await refreshed(pilot, message)  # the segments' heights are fixed after the first refresh, laid out by the next


async def test_each_finished_block_is_a_segment_drawn_once(monkeypatch: pytest.MonkeyPatch, renders: Renders) -> None:
    monkeypatch.setattr(chat, "FLUSH_INTERVAL", 0.0)
    app = ChatApp()
    async with app.run_test(size=(80, 60)) as pilot:
        view = app.query_one(ChatView)
        message = AssistantMessage()
        await view.add(message)
        for number, block in enumerate(BLOCKS, 1):
            half = len(block) // 2
            await _write(pilot, message, block[:half])
            finished = _with_descendants(list(_top_blocks(message)[:-1]))
            drawn_before = renders.of(finished)
            await _write(pilot, message, block[half:])
            assert renders.of(finished) == drawn_before, f"block {number}: a write re-drew finished blocks"
            assert len(message.segments) == number - 1, f"after block {number}: {len(message.segments)} segments"
        await message.finish()
        await refreshed(pilot, message)
        assert message.shown == ANSWER
        assert len(message.segments) == len(BLOCKS) - 1
        assert len(message._body.blocks) == 1  # only the last block stayed live
        streamed = _screen(app)

    whole = ChatApp()
    async with whole.run_test(size=(80, 60)) as pilot:
        message = AssistantMessage(segmented=False)
        await whole.query_one(ChatView).add(message)
        await message.append(ANSWER)
        await message.finish()
        await wait_for(pilot, lambda: message.shown == ANSWER and not message._body.busy)
        await refreshed(pilot, message)
        await refreshed(pilot, message)
        assert not message.segments
        assert _screen(whole) == streamed  # the same rows, margins between blocks included


async def test_a_replaced_answer_is_one_markdown_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """The final content differs from what streamed (the provider's own text): the segments go."""
    monkeypatch.setattr(chat, "FLUSH_INTERVAL", 0.0)
    app = ChatApp()
    async with app.run_test(size=(80, 40)) as pilot:
        message = AssistantMessage()
        await app.query_one(ChatView).add(message)
        for block in BLOCKS[:4]:
            await _write(pilot, message, block)
        assert message.segments
        await message.finish("## Replaced\n\nOnly this.\n")
        await refreshed(pilot, message)
        assert not message.segments and message.shown == "## Replaced\n\nOnly this.\n"
        rows = [row.strip() for row in _screen(app) if row.strip()]
        assert rows == ["Replaced", "Only this."]



async def test_an_append_called_during_a_hand_over_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """``MarkdownStream.stop`` sends the rest with a new append while the last one may still be moving
    finished blocks out: Textual's append adds its text to the source as it is called, so the move
    must not write back a source read before it (the rest vanished from what the message shows)."""
    monkeypatch.setattr(chat, "FLUSH_INTERVAL", 0.0)
    app = ChatApp()
    async with app.run_test(size=(80, 60)) as pilot:
        message = AssistantMessage()
        await app.query_one(ChatView).add(message)
        add_segments = message._add_segments
        late: list[Any] = []

        async def interrupted(texts: list[str]) -> None:
            if not late:
                late.append(message._body.append("That is the whole flow.\n"))  # called now, awaited below
            await add_segments(texts)

        monkeypatch.setattr(message._body, "_finished", interrupted)
        await message.append(BLOCKS[0] + BLOCKS[1])
        await wait_for(pilot, lambda: bool(late) and not message._body.busy)
        await late[0]
        await message.finish()
        await refreshed(pilot, message)
        assert message.shown == BLOCKS[0] + BLOCKS[1] + "That is the whole flow.\n"
        assert "That is the whole flow." in "\n".join(_screen(app))
