"""The chat never loses the reader: scrolled up, new output does not move the view.

A "N new messages ↓" marker appears; End (in the chat), ctrl+End (in the prompt) or
a click on the marker jumps to the bottom and follows again. PageUp/PageDown and
ctrl+Home scroll the chat from the prompt without taking the focus.
"""

from __future__ import annotations

import io
from typing import Any

import pytest
from textual.widget import Widget

from core import events as ev
from core.types import ToolCall
from tests.tui.conftest import FixedClock, Gate, ScriptedHandler, refreshed, settle, wait_for
from tui.app import AssistantApp, make_app
from tui.widgets.chat import AssistantMessage, NoteMessage, ToolCallLine
from tui.widgets.chat_view import NewOutputMarker
from tests.tui.app_help import app_help

SIZE = (100, 32)
CALL = ToolCall(id="call_1", name="readFile", parameters={"path": "src/auth.py"})


def build(settings: Any, project: Any, script: Any) -> AssistantApp:
    return make_app(settings, handler=ScriptedHandler(script, project_root=project, settings=settings), clock=FixedClock())


async def fill(app: AssistantApp, notes: int = 12) -> None:
    """Enough notes that the chat scrolls (about three screens)."""
    await app.chat.add(*[NoteMessage(f"note {i}\n" + "line\n" * 4, kind="info") for i in range(notes)])


def screen_y(widget: Widget) -> int:
    """Where the widget's top is on the screen."""
    return widget.region.y


async def at_bottom(pilot: Any, chat: Any) -> tuple[float, int]:
    """Wait until the chat is laid out, scrolls and sits at its bottom; return (bottom, page height)."""
    await refreshed(pilot, chat)
    await wait_for(pilot, lambda: chat.following and chat.max_scroll_y > 0 and chat.scroll_y == chat.max_scroll_y)
    return chat.max_scroll_y, chat.scrollable_content_region.height


def streamed_to_the_second_gate(chat: Any) -> bool:
    """The answer's text is written and rendered, and the tool line shows the call finished."""
    messages = list(chat.query(AssistantMessage))
    lines = list(chat.query(ToolCallLine))
    return bool(messages and lines) and messages[0].finished and not messages[0]._body.busy and lines[-1].status == "success"


def streaming_script(gate: Gate, more: Gate) -> list[Any]:
    para = "More text of the answer, arriving while the reader is elsewhere. " * 3
    return [
        ev.TurnStarted(query="", subtask_id="s1"),
        ev.TextDelta(text="First part of the answer.\n\n"),
        gate,
        *[ev.TextDelta(text=para + "\n\n") for _ in range(6)],
        ev.AssistantMessage(content="", tool_calls=(CALL,)),
        ev.ToolCallStarted(call=CALL, started_at=0),
        ev.ToolCallFinished(call=CALL, status="success", result="def login(user): ...", duration=0.1),
        more,
    ]


async def test_scrolled_up_the_view_stays_and_the_marker_counts(settings, project) -> None:
    gate, more = Gate(), Gate()
    app = build(settings, project, streaming_script(gate, more))
    async with app.run_test(size=SIZE) as pilot:
        chat = app.chat
        await fill(app)
        app.prompt.load_text("where is login?")
        await pilot.press("enter")
        await wait_for(pilot, lambda: any(m.shown for m in chat.query(AssistantMessage)))
        bottom, page = await at_bottom(pilot, chat)
        await pilot.press("pageup", "pageup")  # from the prompt
        await wait_for(pilot, lambda: chat.scroll_y == bottom - 2 * page, what="two pages up")
        await refreshed(pilot, chat)
        assert app.focused is app.prompt
        assert not chat.following
        top = chat.scroll_y
        assert 0 < top < chat.max_scroll_y
        first = [w for w in chat.items if w.region.y >= chat.region.y][0]
        was = screen_y(first)
        assert not chat.query_one(NewOutputMarker).display  # nothing new yet
        assert "ctrl+end" in app.screen.active_bindings  # the way back is in the footer

        gate.open()  # the answer streams on, then a tool line and a new message
        await wait_for(pilot, lambda: streamed_to_the_second_gate(chat) and chat.unseen >= 2, what="the stream at the second gate, new items counted")
        await refreshed(pilot, chat)  # all of it laid out and drawn
        assert chat.scroll_y == top and screen_y(first) == was  # the view did not move
        marker = chat.query_one(NewOutputMarker)
        assert marker.display and f"{chat.unseen} new messages ↓" in str(marker.render())

        await pilot.press("ctrl+end")
        await wait_for(pilot, lambda: chat.following and not marker.display)
        assert "ctrl+end" not in app.screen.active_bindings
        more.open()
        await settle(pilot, lambda: not app.turn_running)
        await refreshed(pilot, chat)
        await wait_for(pilot, lambda: chat.scroll_y == chat.max_scroll_y, what="following again: the end of the turn in view")


async def test_keys_a_click_and_sending_follow_again(settings, project) -> None:
    """PageUp/PageDown/ctrl+Home/ctrl+End from the prompt, End in the chat, a click on the marker,
    scrolling back down, and sending a message: each ends where it should, the prompt keeps its text."""
    app = build(settings, project, [ev.TurnStarted(query="", subtask_id="s1"), ev.TextDelta(text="hi")])
    async with app.run_test(size=SIZE) as pilot:
        chat = app.chat
        marker = chat.query_one(NewOutputMarker)
        await fill(app)
        bottom, page = await at_bottom(pilot, chat)
        await pilot.press("pagedown")  # at the bottom already: still following (Textual alone would drop the anchor)
        await refreshed(pilot, chat)  # the key and what it scheduled are done
        assert chat.following
        app.prompt.load_text("a prompt")
        await pilot.press("pageup")
        await wait_for(pilot, lambda: chat.scroll_y == bottom - page)
        assert not chat.following
        assert app.focused is app.prompt and app.prompt.text == "a prompt"
        await pilot.press("ctrl+home")
        await wait_for(pilot, lambda: chat.scroll_y == 0)
        await pilot.press("pagedown")
        await wait_for(pilot, lambda: chat.scroll_y == page)
        await pilot.press("ctrl+end")
        await wait_for(pilot, lambda: chat.following and chat.scroll_y == chat.max_scroll_y)

        chat.focus()  # End in the chat itself
        await pilot.press("home")
        await wait_for(pilot, lambda: chat.scroll_y == 0)  # Home scrolls with an animation: let it end
        await chat.add(NoteMessage("arrived while reading", kind="info"))
        await refreshed(pilot, chat)
        assert chat.scroll_y == 0 and chat.unseen == 1
        assert "1 new message ↓" in str(marker.render())
        await pilot.press("end")
        await wait_for(pilot, lambda: chat.following and chat.scroll_y == chat.max_scroll_y and not marker.display)

        await pilot.press("home")  # a click on the marker
        await wait_for(pilot, lambda: chat.scroll_y == 0)
        await chat.add(NoteMessage("another", kind="info"))
        await refreshed(pilot, chat)  # the marker is laid out where the click goes
        assert await pilot.click(NewOutputMarker)
        await wait_for(pilot, lambda: chat.following and chat.unseen == 0 and not marker.display)

        await pilot.press("pageup")  # scrolling back down to the end (the wheel, the scrollbar) follows again
        await wait_for(pilot, lambda: chat.scroll_y == chat.max_scroll_y - page)
        assert not chat.following
        chat.scroll_to(y=chat.max_scroll_y - 1, animate=False)
        await wait_for(pilot, lambda: chat.scroll_y == chat.max_scroll_y - 1)
        await refreshed(pilot, chat)
        assert not chat.following
        await pilot.press("down")
        await wait_for(pilot, lambda: chat.following)

        app.prompt.focus()  # sending a message jumps to the end
        await pilot.press("ctrl+home")
        app.prompt.load_text("hello")
        await pilot.press("enter")
        await settle(pilot, lambda: not app.turn_running)
        await refreshed(pilot, chat)
        await wait_for(pilot, lambda: chat.following and chat.scroll_y == chat.max_scroll_y)


@pytest.mark.parametrize("burst", [False, True], ids=["laid-out-between", "burst"])
async def test_pruning_while_reading_keeps_the_view(settings, project, burst: bool) -> None:
    """Scrolled up, three batches of output each prune what is above the view; what the reader sees stays put.

    Laid out between batches, or as a burst with no layout between them (``batch_update``
    holds the screen's layout, as a busy event loop can): the notice of pruned items
    appears once and each prune moves the view by exactly what went above it.
    """
    app = build(settings, project, [])
    async with app.run_test(size=SIZE) as pilot:
        chat = app.chat
        chat.max_nodes, chat.max_nodes_reading = 30, 40
        await fill(app, 20)
        bottom, page = await at_bottom(pilot, chat)
        await pilot.press("pageup")
        await wait_for(pilot, lambda: chat.scroll_y == bottom - page)
        await refreshed(pilot, chat)  # the screen positions are those of the scrolled view
        seen = [w for w in chat.items if w.region.y >= chat.region.y][:2]
        where = [screen_y(w) for w in seen]
        before = chat.items
        above = {w for w in before if w.region.bottom <= chat.region.y}
        if burst:
            with app.batch_update():  # no layout until all three are added and pruned
                for batch in range(3):
                    await chat.add(*[NoteMessage(f"new {batch}.{i}", kind="info") for i in range(10)])
        else:
            for batch in range(3):
                await chat.add(*[NoteMessage(f"new {batch}.{i}", kind="info") for i in range(10)])
                await refreshed(pilot, chat)  # laid out before the next batch prunes
        await refreshed(pilot, chat)  # mounted, pruned, scrolled back by what went: all of it laid out
        state = {"scroll_y": chat.scroll_y, "max_scroll_y": chat.max_scroll_y, "pruned": chat.pruned, "following": chat.following, "items": len(chat.items)}
        assert set(seen) <= set(chat.items), ("what the reader sees is never pruned", state)
        assert [screen_y(w) for w in seen] == where, (where, [screen_y(w) for w in seen], state)
        gone = set(before) - set(chat.items)
        assert gone and gone <= above, (len(gone), len(above), state)  # only what was wholly above the view went
        await pilot.press("ctrl+end")
        await wait_for(pilot, lambda: chat.following and len(chat.items) <= 30, what="back at the bottom: the normal bound again")


def test_help_lists_the_chat_keys(settings, project) -> None:
    from rich.console import Console

    console = Console(width=120, record=True, file=io.StringIO())
    console.print(app_help())
    text = console.export_text()
    for key, where in [("PgUp", "prompt"), ("PgDn", "prompt"), ("ctrl+home", "prompt"), ("ctrl+end", "prompt"), ("End", "chat")]:
        assert any(line.split()[:1] == [key] and line.rstrip().endswith(where) for line in text.splitlines()), (key, where)
