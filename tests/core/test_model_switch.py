"""``/model``: one session switched Claude -> OpenAI-compatible -> Claude with tool calls between (issue 27).

Every request is checked the way the vendor's API checks it (roles, each tool result
answering its call, id formats: ``tests.scripted_session``), and the fake server
itself refuses reasoning that was lost or altered.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from core import events as ev
from core.compaction.commands import ModelSwitchError, model_listing
from core.config import Settings
from core.handlers.passthrough import PassthroughHandler
from core.providers import create_provider
from core.session import Session
from tests.core.conftest import ECHO_SPEC, assert_history_valid
from tests.fake_llm import FakeLLM, Reply, Tool
from tests.scripted_session import anthropic_problems, openai_problems


def both_providers(fake: FakeLLM, root: Path) -> Session:
    settings = Settings(
        project_root=root, provider="anthropic", model="claude-sonnet-4-5", max_retries=0,
        anthropic_base_url=fake.anthropic_url, anthropic_api_key="sk-ant-test",
        openai_base_url=fake.openai_url, openai_api_key="sk-test", thinking="2048",
    )
    handler = PassthroughHandler(None, None, create_provider(settings), settings)
    handler.register_tool(ECHO_SPEC, lambda params: params["text"].upper())
    return Session(handler)


async def turn(session: Session, query: str) -> list[ev.Event]:
    return [event async for event in session.stream_query(query)]


async def test_claude_to_openai_compatible_and_back_with_tool_calls_between(fake_llm: FakeLLM, tmp_path: Path) -> None:
    session = both_providers(fake_llm, tmp_path)
    handler = session.handler
    fake_llm.script(
        Reply(thinking="Let me echo.", tools=[Tool("echo", {"text": "one"})]),
        Reply(text="ONE, said Claude."),
    )
    assert (await turn(session, "echo one"))[-1].result["content"] == "ONE, said Claude."

    line = await session.switch_model("openai:gpt-4o-mini")
    assert "Switched from anthropic:claude-sonnet-4-5 to openai:gpt-4o-mini" in line and "128,000 tokens (from the model table)" in line
    assert "1 thinking blocks" in line and "about $" in line
    # a server that makes up ids Anthropic refuses (Mistral-style, with ':' and '/')
    fake_llm.script(
        Reply(reasoning="Echo it.", tools=[Tool("echo", {"text": "two"}, id="call:odd/2")]),
        Reply(text="TWO, said the compatible server."),
    )
    assert (await turn(session, "echo two"))[-1].result["content"] == "TWO, said the compatible server."

    line = await session.switch_model("claude-sonnet-4-5")
    assert "to anthropic:claude-sonnet-4-5" in line and "1 tool-call ids were mapped" in line
    fake_llm.script(Reply(thinking="Again.", tools=[Tool("echo", {"text": "three"})]), Reply(text="THREE, said Claude again."))
    events = await turn(session, "echo three")
    assert events[-1].result["content"] == "THREE, said Claude again.", events[-1]

    assert [r.api for r in fake_llm.requests] == ["anthropic"] * 2 + ["openai"] * 2 + ["anthropic"] * 2
    assert [r.body["model"] for r in fake_llm.requests] == ["claude-sonnet-4-5"] * 2 + ["gpt-4o-mini"] * 2 + ["claude-sonnet-4-5"] * 2
    for request in fake_llm.requests:
        problems = anthropic_problems(request) if request.api == "anthropic" else openai_problems(request)
        assert not problems, (request.api, problems)
    assert not fake_llm.rejected
    last = fake_llm.requests[-1]
    ids = [b["id"] for m in last.messages if isinstance(m["content"], list) for b in m["content"] if b.get("type") == "tool_use"]
    assert len(ids) == 3 and "call:odd/2" not in ids
    assert_history_valid(handler.conversation_history)
    per_model = {row["model"]: row["total_tokens"] for row in handler.usage.summary()["per_model"]}  # /cost per model
    assert set(per_model) == {"claude-sonnet-4-5", "gpt-4o-mini"} and all(per_model.values())
    assert [i["code"] for i in session.incidents] == ["model_switched", "model_switched"]


async def test_the_listing_names_each_configured_providers_models_with_window_and_price(fake_llm: FakeLLM, tmp_path: Path) -> None:
    session = both_providers(fake_llm, tmp_path)
    listing = await model_listing(session.handler)
    assert "Current: anthropic:claude-sonnet-4-5, window 200,000 tokens (from the model table)." in listing
    assert "anthropic:claude-haiku-4-5" in listing and "$1/$5 per Mtok in/out" in listing
    assert "openai:fake-model" in listing  # what the compatible server lists at /v1/models
    models = [line for line in listing.splitlines() if "Mtok" in line or "window from the server" in line]
    assert models and all(line.startswith("- `") for line in models)  # list items wrap between words at 80 columns


async def test_an_unconfigured_provider_is_refused_with_what_is_configured(fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.delenv("OPENAI_BASE_URL")
    settings = Settings(project_root=tmp_path, anthropic_base_url=fake_llm.anthropic_url, anthropic_api_key="k", max_retries=0)
    session = Session(PassthroughHandler(None, None, create_provider(settings), settings))
    with pytest.raises(ModelSwitchError, match="openai is not configured"):
        await session.switch_model("openai:gpt-4o")
    assert session.handler.model_name == "claude-sonnet-4-5"
