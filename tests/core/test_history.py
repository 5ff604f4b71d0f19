"""The conversation's messages are the handler's History: read by everyone, changed only by its methods (issue 24 s1)."""

from __future__ import annotations

import pytest

from core.history import History
from tests.fake_llm import Reply


async def test_a_reader_cannot_change_the_conversation(make_handler, fake_llm) -> None:
    handler = make_handler()
    fake_llm.script(Reply(text="hello"))
    async for _ in handler.stream_query("hi"):
        pass
    shown = handler.conversation_history
    assert [m["role"] for m in shown] == ["user", "assistant"] and handler.history.current_turn == 1
    shown.append({"role": "user", "content": "planted"})
    del shown[0]
    assert [m["content"] for m in handler.conversation_history] == ["hi", "hello"]
    with pytest.raises(AttributeError):
        handler.conversation_history = []  # type: ignore[misc]
    with pytest.raises(AttributeError):
        handler.history = History()  # type: ignore[misc]
    assert not hasattr(handler.history, "pop") and not hasattr(handler.history, "__setitem__")


def test_each_change_says_what_it_does() -> None:
    history = History()
    first = history.append_user("one", turn=1)
    history.append_assistant("", tool_calls=[{"id": "c1", "name": "echo", "parameters": {}}])
    history.append_tool_result("c1", "echo", "ECHO", is_error=False)
    history.append_assistant("done")
    second = history.append_user("two", turn=2)
    assert history.current_turn == 2 and len(history) == 5 and history[2]["tool_call_id"] == "c1"
    assert history.retract(first) is False  # only the newest message is taken back
    assert history.retract(second) is True and history.current_turn == 1
    assert history.rewind_to(7) is None and len(history) == 4
    assert history.rewind_to(1) == 0 and list(history) == []
    history.restore([{"role": "user", "content": "x", "turn": 3}])
    assert history.current_turn == 3
    copy = history.messages()
    copy.clear()
    assert len(history) == 1
    history.clear()
    assert len(history) == 0


async def test_rewind_cuts_the_handlers_conversation_and_its_file_copies(make_handler, fake_llm) -> None:
    handler = make_handler()
    fake_llm.script(Reply(text="first"), Reply(text="second"))
    for query in ("one", "two"):
        async for _ in handler.stream_query(query):
            pass
    assert handler.rewind_to(2) == 2
    assert [m["content"] for m in handler.conversation_history] == ["one", "first"]
    assert handler.rewind_to(2) is None
