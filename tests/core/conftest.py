"""Fixtures for engine tests: handlers wired to the fake server through the real SDKs."""

from __future__ import annotations

from typing import Any, Callable

import pytest

from core.config import Settings
from core.compat import PassthroughHandler  # the engine's, with the SPEC's handle_query
from core.handlers.pacing import Pacing
from core.providers.anthropic import ClaudeProvider
from core.providers.openai import OpenAICompatibleProvider
from tests.fake_llm import FakeLLM

ECHO_SPEC = {
    "name": "echo",
    "description": "Upper-case a string.",
    "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
}


def make_provider(kind: str, fake: FakeLLM, **kwargs: Any) -> Any:
    if kind == "anthropic":
        return ClaudeProvider("claude-test", base_url=fake.anthropic_url, api_key="sk-ant-test", **kwargs)
    return OpenAICompatibleProvider("gpt-test", base_url=fake.openai_url, api_key="sk-test", **kwargs)


@pytest.fixture(params=["anthropic", "openai"])
def provider_kind(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def make_handler(fake_llm: FakeLLM, tmp_path: Any) -> Callable[..., PassthroughHandler]:
    """Build a PassthroughHandler on a real provider pointed at the fake server."""

    def build(kind: str = "anthropic", pacing: Pacing | None = None, **settings: Any) -> PassthroughHandler:
        settings.setdefault("project_root", tmp_path)
        settings.setdefault("max_retries", 0)
        provider = make_provider(kind, fake_llm, max_retries=0)  # as create_provider: the loop retries
        handler = PassthroughHandler(None, None, provider, Settings(**settings), pacing=pacing or Pacing(retry_base_delay=0.01))
        handler.register_tool(ECHO_SPEC, lambda params: params["text"].upper())
        return handler

    return build


def assert_history_valid(history: list[dict[str, Any]]) -> None:
    """Every tool request in the history has exactly one result, in order."""
    open_calls: list[str] = []
    for message in history:
        if message["role"] == "assistant":
            assert not open_calls, f"tool calls left unanswered: {open_calls}"
            open_calls = [c["id"] for c in message.get("tool_calls") or []]
        elif message["role"] == "tool":
            assert message["tool_call_id"] in open_calls, f"result for unknown call {message['tool_call_id']}"
            open_calls.remove(message["tool_call_id"])
        elif message["role"] == "user":
            assert not open_calls, f"user message before tool results: {open_calls}"
    assert not open_calls, f"tool calls left unanswered: {open_calls}"
