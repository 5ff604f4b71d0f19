"""Keys sent in one burst (a fast typist, a terminal multiplexer) are handled in order, and nothing the prompt does ends the app.

A burst is posted to the app the way the terminal driver posts it: every key queued before
the app handles the first (Pilot's ``press`` waits after each key, which hides the bugs).
The real interleaving, with a resize and bracketed pastes, is replayed in tmux by
``test_key_burst_tmux.py``.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from textual import events
from textual.keys import _character_to_key

from tests.tui.conftest import Notices, ScriptedHandler, text_reply, wait_for
from tui.app import AssistantApp, make_app

SIZE = (80, 24)

CHARACTERS = {"enter": "\r", "ctrl+j": "\n", "backspace": "\x7f", "tab": "\t", "escape": "\x1b"}


def key_event(key: str) -> events.Key:
    """The event the driver posts for ``key``: one character (``a``, ``?``) or a key name (``ctrl+j``, ``left``)."""
    if len(key) == 1:
        return events.Key(_character_to_key(key), key)
    return events.Key(key, CHARACTERS.get(key))


def burst(app: AssistantApp, keys: list[str]) -> None:
    """Queue every key at once, as a terminal delivers a burst."""
    for key in keys:
        app.post_message(key_event(key))


def typed(text: str) -> list[str]:
    return list(text)


def scripted_app(project: Path, settings) -> tuple[AssistantApp, ScriptedHandler]:
    handler = ScriptedHandler(lambda query: text_reply("Done."), project_root=project, settings=settings)
    return make_app(settings, handler=handler), handler


async def test_a_burst_with_newlines_and_enter_sends_the_message_whole(project: Path, settings) -> None:
    """``q1`` ctrl+j ``bbb`` ctrl+j ``ccc`` Enter in one burst: one message of three lines, and the app lives on.

    It ended the app with an IndexError from the prompt (a queued cursor event read a line the sent text no longer had).
    """
    app, handler = scripted_app(project, settings)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_started()
        burst(app, [*typed("q1"), "ctrl+j", *typed("bbb"), "ctrl+j", *typed("ccc"), "enter"])
        await wait_for(pilot, lambda: handler.queries or not app.is_running, what="the message sent")
        await wait_for(pilot, lambda: not app.turn_running)
        assert handler.queries == ["q1\nbbb\nccc"]
        assert app.is_running and app.return_code is None
        assert app.prompt.text == ""


async def test_ctrl_j_keeps_its_place_among_the_keys(project: Path, settings) -> None:
    """``aaa`` ctrl+j ``bbb``: the newline between, not after (it arrived as ``aaabbb`` and a newline)."""
    app, _ = scripted_app(project, settings)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_started()
        burst(app, [*typed("aaa"), "ctrl+j", *typed("bbb"), "ctrl+j", *typed("c")])
        await wait_for(pilot, lambda: "c" in app.prompt.text, what="the last key handled")
        assert app.prompt.text == "aaa\nbbb\nc"


async def test_backspaces_in_a_burst_delete_what_was_typed_before_them(project: Path, settings) -> None:
    """``abcdef``, six Backspaces, ``xy``: the prompt holds ``xy`` (it held ``ab``: the Backspaces ran last)."""
    app, _ = scripted_app(project, settings)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_started()
        burst(app, [*typed("abcdef"), *["backspace"] * 6, *typed("xy")])
        await wait_for(pilot, lambda: "y" in app.prompt.text, what="the last key handled")
        assert app.prompt.text == "xy"


async def test_a_burst_of_backspaces_over_lines_leaves_the_app_running(project: Path, settings) -> None:
    """Three lines typed and erased again in one burst, then more typed: no crash, the prompt holds the rest."""
    app, _ = scripted_app(project, settings)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_started()
        burst(app, [*typed("one"), "ctrl+j", *typed("two"), "ctrl+j", *typed("six"), *["backspace"] * 20, *typed("ok"), "left", "left", *typed("<")])
        await wait_for(pilot, lambda: "<" in app.prompt.text or not app.is_running, what="the last key handled")
        assert app.is_running and app.return_code is None
        assert app.prompt.text == "<ok"


async def test_an_error_in_the_prompt_keeps_the_app_and_the_text(project: Path, settings, caplog) -> None:
    """A prompt handler that raises (here its completer) is logged with its traceback and shown as a notice; the app and the text live on."""
    app, handler = scripted_app(project, settings)

    def broken(line: str) -> None:
        raise RuntimeError("completer bug")

    notices = Notices()
    async with app.run_test(size=SIZE, message_hook=notices) as pilot:
        await app.wait_started()
        app.prompt.completer = broken
        with caplog.at_level(logging.ERROR, logger="tui.widgets.prompt"):
            burst(app, typed("keep me"))
            await wait_for(pilot, lambda: app.prompt.text == "keep me" or not app.is_running, what="the text typed")
        assert app.is_running and app.return_code is None
        assert app.prompt.text == "keep me"
        await wait_for(pilot, lambda: any("internal error" in n.message and n.severity == "error" for n in notices.raised), what="the error's notice")
        assert any(record.exc_info and "completer bug" in str(record.exc_info[1]) for record in caplog.records)
        await pilot.press("enter")  # still usable: the text is sent whole
        await wait_for(pilot, lambda: handler.queries == ["keep me"])


async def test_what_was_typed_survives_an_error_that_ends_the_app(project: Path, settings) -> None:
    """An error outside the prompt still ends the app (Textual's rule; nothing in the app swallows it), but the
    prompt's text is kept and is back in the prompt at the next start in the project, with a notice."""
    app, _ = scripted_app(project, settings)

    def broken() -> None:
        raise RuntimeError("a bug elsewhere")

    with pytest.raises(RuntimeError, match="a bug elsewhere"):
        async with app.run_test(size=SIZE) as pilot:
            await app.wait_started()
            app.prompt.insert("half a\nthought")
            app.call_later(broken)
            await wait_for(pilot, lambda: not app.is_running, what="the app ended by the error")
    assert app.return_code == 1
    again, _ = scripted_app(project, settings)
    notices = Notices()
    async with again.run_test(size=SIZE, message_hook=notices) as pilot:
        await again.wait_started()
        assert again.prompt.text == "half a\nthought"
        await wait_for(pilot, lambda: any("back in the prompt" in text for text in notices.messages), what="the notice that says so")
    later, _ = scripted_app(project, settings)
    async with later.run_test(size=SIZE) as pilot:  # put back once: a normal quit keeps nothing
        await later.wait_started()
        assert later.prompt.text == ""
