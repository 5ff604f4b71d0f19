"""Extended thinking and reasoning_content (issue 11): streamed apart, kept, sent back as received.

The fake server answers 400, as the real APIs do, to a request whose tool-use turn lost
or altered the thinking blocks (Anthropic) or the reasoning_content (DeepSeek) it sent.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from core import events as ev
from core.config import ConfigError, load_settings
from core.providers import create_provider
from core.sessions.export import render_markdown
from core.sessions.load import load_session
from core.sessions.recorder import SessionRecorder
from core.sessions.session import StoredSession
from core.sessions.writer import SessionWriter
from tests.core.conftest import assert_history_valid, make_provider
from tests.fake_llm import Reply, Tool


async def collect(handler: Any, query: str) -> list[Any]:
    return [event async for event in handler.stream_query(query)]


def three_steps(kind: str) -> list[Reply]:
    extra = {"thinking": "I should shout each word."} if kind == "anthropic" else {"reasoning": "I should shout each word."}
    return [
        Reply(text="First.", tools=[Tool("echo", {"text": "one"})], **extra),
        Reply(tools=[Tool("echo", {"text": "two"})], **({**extra, "redacted": ("EqQBCgIYAhIM1gbcDa9GJwZA2b3h",)} if kind == "anthropic" else extra)),
        Reply(tools=[Tool("echo", {"text": "three"})], **extra),
        Reply(text="ONE TWO THREE", **extra),
    ]


async def test_a_three_step_tool_loop_with_thinking(make_handler, fake_llm, provider_kind, tmp_path):
    handler = make_handler(provider_kind)
    if provider_kind == "anthropic":
        handler.model_provider.thinking_budget = 2048
    writer = SessionWriter(StoredSession(id="20260101-000000-abcdef", path=tmp_path / "s.jsonl", project_root=tmp_path, created=0.0))
    handler.add_observer(SessionRecorder(writer))
    fake_llm.script(*three_steps(provider_kind))
    events = await collect(handler, "shout one two three")
    assert fake_llm.rejected == []
    assert isinstance(events[-1], ev.TurnCompleted) and events[-1].result["content"] == "ONE TWO THREE"
    thinking = "".join(e.text for e in events if isinstance(e, ev.ThinkingDelta))
    assert thinking == "I should shout each word." * 4
    assert "shout each word" not in "".join(e.text for e in events if isinstance(e, ev.TextDelta))
    assert [e.result for e in events if isinstance(e, ev.ToolCallFinished)] == ["ONE", "TWO", "THREE"]
    assert_history_valid(handler.conversation_history)
    if provider_kind == "anthropic":
        request = fake_llm.requests[0].body
        assert request["thinking"] == {"type": "enabled", "budget_tokens": 2048} and request["max_tokens"] > 2048
        second_step = fake_llm.requests[2].messages[3]["content"]
        assert [b["type"] for b in second_step] == ["thinking", "redacted_thinking", "tool_use"]
        assert second_step[1] == {"type": "redacted_thinking", "data": "EqQBCgIYAhIM1gbcDa9GJwZA2b3h"}
    else:
        tool_turns = [m for m in fake_llm.requests[3].messages if m.get("tool_calls")]
        assert len(tool_turns) == 3 and all(m["reasoning_content"] == "I should shout each word." for m in tool_turns)
    # Kept in the transcript, signatures and all, and apart from the answer in the export.
    writer.close()
    loaded = load_session(tmp_path / "s.jsonl")
    assert [m.get("thinking") for m in loaded.messages] == [m.get("thinking") for m in handler.conversation_history]
    markdown = render_markdown(loaded)
    assert markdown.count("<summary>thinking</summary>") == 4
    assert "ONE TWO THREE" in markdown.split("<summary>thinking</summary>")[-1].split("</details>", 1)[1]


async def test_previous_turns_reasoning_is_not_sent_back_to_openai_compatible_servers(make_handler, fake_llm):
    handler = make_handler("openai")
    fake_llm.script(Reply(text="Thought about it.", reasoning="Simple."), Reply(text="again"))
    await collect(handler, "first")
    await collect(handler, "second")
    assert all("reasoning_content" not in m for m in fake_llm.requests[1].messages)


@pytest.mark.parametrize("change", ["dropped", "altered"])
async def test_the_fake_server_rejects_lost_or_altered_thinking(fake_llm, change):
    """The check the loop test relies on can fail: a history without the blocks is refused."""
    provider = make_provider("anthropic", fake_llm, max_retries=0)
    provider.thinking_budget = 2048
    fake_llm.script(Reply(tools=[Tool("echo", {"text": "x"})], thinking="Plan."))
    items = [item async for item in provider.stream_message([{"role": "user", "content": "go"}], "", [])]
    complete = items[-1]
    blocks = [] if change == "dropped" else [{**complete.thinking[0], "thinking": "Plan!"}]
    history = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "", "tool_calls": [c.as_dict() for c in complete.tool_calls], "thinking": blocks},
        {"role": "tool", "content": "X", "tool_call_id": complete.tool_calls[0].id, "name": "echo"},
    ]
    from core.providers.base import ProviderError

    with pytest.raises(ProviderError) as caught:
        async for _ in provider.stream_message(history, "", []):
            pass
    assert caught.value.status == 400 and "thinking blocks" in str(caught.value)


def test_the_thinking_setting(tmp_path: Path):
    assert load_settings(environ={}, project_root=tmp_path).thinking_budget == 0
    settings = load_settings(environ={"ASSISTANT_TUI_THINKING": "4096", "ANTHROPIC_API_KEY": "k"}, project_root=tmp_path)
    assert settings.thinking_budget == 4096 and create_provider(settings).thinking_budget == 4096
    assert load_settings({"thinking": "off"}, environ={"ASSISTANT_TUI_THINKING": "4096"}, project_root=tmp_path).thinking_budget == 0
    with pytest.raises(ConfigError, match="thinking must be 'off' or a token budget of at least 1024"):
        load_settings(environ={"ASSISTANT_TUI_THINKING": "lots"}, project_root=tmp_path)
