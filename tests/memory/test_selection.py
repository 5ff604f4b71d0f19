"""determine_relevant_files: the model's JSON, mentions in its text, the default selection."""

from __future__ import annotations

import importlib.util
from typing import Any, Sequence

import pytest

from core.memory.index import FileMetadata
from core.compat import MemorySystem
from core.compat.selection import mentioned_paths, parse_selection
from core.providers.base import ProviderError

KNOWN = ["src/auth.py", "src/billing/invoice.py", "README.md", "lib/util.py", "lib/io.py", "lib/db.py", "lib/net.py"]


class ScriptedProvider:
    """Our ProviderAdapter protocol with canned replies (not an SDK client)."""

    name = "scripted"
    model = "scripted-1"

    def __init__(self, reply: str | Exception) -> None:
        self.reply = reply
        self.calls: list[tuple[Sequence[dict[str, Any]], str, Sequence[Any]]] = []

    async def send_message(self, messages, system_prompt, tools):  # noqa: ANN001
        self.calls.append((messages, system_prompt, tools))
        if isinstance(self.reply, Exception):
            raise self.reply
        return {"text": self.reply}

    def extract_tool_calls(self, response: dict[str, str]) -> dict[str, Any]:
        return {"content": response["text"], "tool_calls": [], "awaiting_tool_response": False}


def memory_with(tmp_path, reply: str | Exception) -> tuple[MemorySystem, ScriptedProvider]:
    provider = ScriptedProvider(reply)
    return MemorySystem(tmp_path, provider=provider), provider


async def test_json_answer_is_used_and_unknown_paths_rejected(tmp_path) -> None:
    reply = 'Sure:\n```json\n[{"path": "src/auth.py", "relevance": 0.9}, {"path": "src/secret.py", "relevance": 1}, {"path": "./lib/db.py", "relevance": 7}]\n```'
    memory, provider = memory_with(tmp_path, reply)
    result = await memory.determine_relevant_files("fix login", {p: None for p in KNOWN})
    assert result == [("lib/db.py", 1.0), ("src/auth.py", 0.9)]
    messages, system_prompt, tools = provider.calls[0]
    assert tools == [] and "JSON" in system_prompt
    assert "fix login" in messages[0]["content"] and "src/billing/invoice.py" in messages[0]["content"]


async def test_metadata_objects_are_described_to_the_model(tmp_path) -> None:
    memory, provider = memory_with(tmp_path, '[{"path": "src/auth.py", "relevance": 0.8}]')
    metadata = [FileMetadata(path="src/auth.py", size=120, language="python", symbols=("login", "SessionToken"), binary=False, mtime_ns=0)]
    assert await memory.determine_relevant_files("auth", metadata) == [("src/auth.py", 0.8)]
    prompt = provider.calls[0][0][0]["content"]
    assert "src/auth.py (python; 120 bytes; defines login, SessionToken)" in prompt


async def test_unparseable_json_falls_back_to_mentioned_paths(tmp_path) -> None:
    reply = "The relevant ones are src/billing/invoice.py and, to a lesser degree, README.md. Not src/nope.py."
    memory, _ = memory_with(tmp_path, reply)
    result = await memory.determine_relevant_files("invoices", KNOWN)
    assert [p for p, _ in result] == ["src/billing/invoice.py", "README.md"]
    assert result[0][1] > result[1][1]


async def test_nothing_usable_falls_back_to_a_small_default(tmp_path) -> None:
    memory, _ = memory_with(tmp_path, "I cannot decide [not json")
    many = [f"pkg/module_{i}.py" for i in range(40)]
    result = await memory.determine_relevant_files("something vague", many)
    assert 0 < len(result) <= 5 and all(p in many for p, _ in result)


async def test_default_selection_prefers_lexical_matches(tmp_path) -> None:
    memory, _ = memory_with(tmp_path, "no idea")
    result = await memory.determine_relevant_files("the invoice totals", KNOWN)
    assert result[0][0] == "src/billing/invoice.py" and len(result) <= 5


async def test_provider_failure_falls_back(tmp_path) -> None:
    memory, _ = memory_with(tmp_path, ProviderError("rate_limit", "slow down", status=429))
    result = await memory.determine_relevant_files("auth", KNOWN)
    assert result and result[0][0] == "src/auth.py"


async def test_empty_json_array_means_nothing_relevant(tmp_path) -> None:
    memory, _ = memory_with(tmp_path, "[]")
    assert await memory.determine_relevant_files("weather", KNOWN) == []


async def test_without_provider_uses_lexical_selection(tmp_path) -> None:
    result = await MemorySystem(tmp_path).determine_relevant_files("auth", KNOWN)
    assert result[0][0] == "src/auth.py"
    assert await MemorySystem(tmp_path).determine_relevant_files("auth", []) == []


def test_parse_selection_shapes() -> None:
    assert parse_selection('["lib/io.py", {"file": "lib/net.py", "score": "0.4"}, 3]', KNOWN) == [("lib/io.py", 0.5), ("lib/net.py", 0.4)]
    assert parse_selection("no array here", KNOWN) is None
    assert parse_selection('[{"path": "x.py"}]', KNOWN) == []
    assert parse_selection('Answer: [{"path": "lib/io.py", "relevance": null}] (see [1])', KNOWN) == [("lib/io.py", 0.5)]


def test_mentions_need_whole_paths_or_unique_names() -> None:
    known = ["a/util.py", "b/util.py", "b/main.py"]
    assert mentioned_paths("see util.py and main.py", known) == [("b/main.py", 0.7)]
    assert mentioned_paths("see a/util.py", known) == [("a/util.py", 0.7)]
    assert mentioned_paths("domain.pyc", known) == []


@pytest.mark.skipif(importlib.util.find_spec("core.providers.anthropic") is None, reason="ClaudeProvider not in the tree yet")
async def test_through_the_real_claude_provider(tmp_path, fake_llm) -> None:
    from core.providers.anthropic import ClaudeProvider
    from tests.fake_llm import Reply

    fake_llm.script(Reply(text='[{"path": "src/billing/invoice.py", "relevance": 0.95}, {"path": "made/up.py", "relevance": 0.9}]'))
    memory = MemorySystem(tmp_path, provider=ClaudeProvider())
    assert await memory.determine_relevant_files("invoice rounding bug", KNOWN) == [("src/billing/invoice.py", 0.95)]
    request = fake_llm.requests[-1]
    assert request.tool_names == [] and "invoice rounding bug" in request.last_user_text()
    assert "JSON" in str(request.system)


def test_the_model_reply_and_aider_read_the_same_mentions(tmp_path) -> None:
    from core.tools.aider_tools import mentioned_files

    known = [".github/workflows/ci.yml", "src/app.py", "docs/guide.md"]
    for rel in known:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x\n")
    text = "Edit `src/app.py`, then .github/workflows/ci.yml (not docs/guide.mdx)."
    assert [p for p, _ in mentioned_paths(text, known)] == ["src/app.py", ".github/workflows/ci.yml"]
    assert [p.relative_to(tmp_path.resolve()).as_posix() for p in mentioned_files(text, tmp_path)] == ["src/app.py", ".github/workflows/ci.yml"]
