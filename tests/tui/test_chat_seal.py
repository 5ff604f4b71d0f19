"""A streamed message's finished blocks are fixed at their laid-out height ("sealed"), never at a stale one.

Sealing saves a relayout of every finished block on each write. A block's height is only
known after the screen has laid it out, so a write that comes straight after the previous
one (the flush interval already passed, as on a loaded machine) must not seal what that
write changed: a paragraph sealed at the one line it had ("See") hid the rest of its text.
"""

from __future__ import annotations

import asyncio
from typing import Any

from textual.app import App

from tests.tui.conftest import refreshed
from tui.widgets import chat
from tui.widgets.chat import AssistantMessage

URL = "https://example.com/a/very/long/path/that/goes/on/and/on/forever/index.html"
FRAGMENTS = ["See", f" {URL} and {URL} for the details of the login flow.\n\n- one\n", "- two\n", "- three\n\nDone.\n"]


class StreamApp(App[None]):
    def compose(self) -> Any:
        yield AssistantMessage()


async def test_a_write_straight_after_another_never_seals_a_stale_height(monkeypatch: Any) -> None:
    monkeypatch.setattr(chat, "FLUSH_INTERVAL", 0.0)  # every fragment is written at once, as when the loop is late
    app = StreamApp()
    async with app.run_test(size=(60, 30)) as pilot:
        message = app.query_one(AssistantMessage)
        for fragment in FRAGMENTS:
            await message.append(fragment)
            while message._body.busy or message._stream is not None and message._stream._pending:
                await asyncio.sleep(0)  # the write is parsed and mounted, but no frame has been drawn since
        await message.finish()
        await refreshed(pilot, message)  # finish() seals after a refresh…
        await refreshed(pilot, message)  # …and the sealed heights are laid out by the next one
        paragraph = message._body.children[0]
        needed = paragraph.get_content_height(paragraph.size, app.size, paragraph.size.width)
        assert paragraph.size.height >= needed, (paragraph.size.height, needed)
        shown = "\n".join(strip.text for strip in app.screen._compositor.render_strips())
        assert "login flow." in shown and "Done." in shown
