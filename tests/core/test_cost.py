"""Prompt caching, usage and budgets through the real SDKs against the caching fake server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from core import events as ev
from core.config import Settings
from core.handlers.pacing import Pacing
from core.handlers.passthrough import PassthroughHandler
from core.pricing import PriceTable
from core.sessions import SessionRecorder, SessionStore, load_session
from core.usage import Usage, UsageLedger
from tests.core.conftest import ECHO_SPEC, assert_history_valid, make_provider
from tests.fake_cache import PromptCaching
from tests.fake_llm import FakeLLM, Reply, Tool

LONG_PROMPT = "You are a careful assistant. " * 300  # ~2,200 tokens: past the minimum cacheable length


def build(fake: FakeLLM, tmp_path: Path, kind: str = "anthropic", provider_options: dict[str, Any] | None = None, **settings: Any) -> PassthroughHandler:
    fake.caching = PromptCaching()
    provider = make_provider(kind, fake, max_retries=0, **(provider_options or {}))
    settings = Settings(project_root=tmp_path, base_system_prompt=LONG_PROMPT, max_retries=0, **settings)
    handler = PassthroughHandler(None, None, provider, settings, pacing=Pacing(wall_clock=lambda: "2026-01-01 09:00 UTC"))
    handler.register_tool(ECHO_SPEC, lambda params: params["text"].upper())
    return handler


async def run(handler: PassthroughHandler, query: str) -> list[Any]:
    return [event async for event in handler.stream_query(query)]


def breakpoints(body: dict[str, Any]) -> list[str]:
    """Where the request's cache_control markers are: 'system', 'tools' or 'message N'."""
    found = [("system" if i == len(body["system"]) - 1 else f"system {i}") for i, b in enumerate(body.get("system") or []) if isinstance(b, dict) and "cache_control" in b]
    found += ["tools" for t in body.get("tools") or [] if "cache_control" in t]
    for index, message in enumerate(body["messages"]):
        content = message["content"]
        if isinstance(content, list):
            marked = [i for i, b in enumerate(content) if "cache_control" in b]
            assert marked in ([], [len(content) - 1]), "a breakpoint must sit on the message's last block"
            found += [f"message {index}"] * len(marked)
    return found


def echo_steps(count: int) -> list[Reply]:
    return [Reply(tools=[Tool("echo", {"text": f"step {n}"})]) for n in range(count)] + [Reply(text="done")]


async def test_breakpoints_on_system_and_the_newest_messages_and_each_step_reads_the_last(fake_llm: FakeLLM, tmp_path: Path) -> None:
    handler = build(fake_llm, tmp_path)
    fake_llm.script(*echo_steps(5))
    events = await run(handler, "count to five")
    assert events[-1].kind == "turn_completed"
    for number, request in enumerate(fake_llm.requests):
        marks = breakpoints(request.body)
        assert len(marks) <= 4
        last = len(request.messages) - 1
        expected = ["system"] + ([f"message {last - 2}"] if number else []) + [f"message {last}"]
        assert marks == expected, (number, marks)
    usages = [e.usage for e in events if isinstance(e, ev.AssistantMessage)]
    assert usages[0]["cache_write_tokens"] > 2000 and usages[0]["cache_read_tokens"] == 0
    for previous, usage in zip(usages, usages[1:]):
        # each step reads everything the previous one sent and writes only what was added
        assert usage["cache_read_tokens"] == previous["cache_read_tokens"] + previous["cache_write_tokens"]
        assert 0 < usage["cache_write_tokens"] < 100 and usage["input_tokens"] == 0
    metrics = [e for e in events if isinstance(e, ev.MetricsUpdated)][-1].metrics["usage"]
    assert metrics["hit_rate"] > 0.7 and metrics["turn"]["turn"] == 1
    assert metrics["per_model"][0]["model"] == "claude-test" and metrics["cost"] is None  # no price for a test model


async def test_the_prefix_stays_byte_identical_across_turns_with_files_and_plan(fake_llm: FakeLLM, tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("def main():\n    return 1\n")
    handler = build(fake_llm, tmp_path)
    fake_llm.script(Reply(text="one"), Reply(text="two"), Reply(text="<plan>\n1. a\n</plan>"))
    await run(handler, "first")
    handler.file_context.replace([str(tmp_path / "app.py")])
    await run(handler, "second")
    await run(handler, "/plan third")
    bodies = [r.body for r in fake_llm.requests]
    assert bodies[0]["system"] == bodies[1]["system"] == bodies[2]["system"]
    assert bodies[0]["tools"] == bodies[2]["tools"] and [t["name"] for t in bodies[0]["tools"]] == sorted(t["name"] for t in bodies[0]["tools"])
    for earlier, later in zip(bodies, bodies[1:]):
        strip = lambda messages: json.dumps(messages).replace(', "cache_control": {"type": "ephemeral"}', "")  # noqa: E731
        assert strip(later["messages"]).startswith(strip(earlier["messages"])[:-1])
    assert '<file path="app.py">' in fake_llm.requests[1].last_user_context()
    assert "app.py" not in fake_llm.requests[2].last_user_context()  # unchanged: not sent again
    assert fake_llm.requests[2].body["messages"][-1]["content"][0]["text"].count("asked for a plan") == 1


async def test_a_file_changed_since_its_copy_is_sent_again_and_a_small_old_copy_stays(fake_llm: FakeLLM, tmp_path: Path) -> None:
    target = tmp_path / "app.py"
    target.write_text("VERSION = 1\n")
    handler = build(fake_llm, tmp_path)
    handler.file_context.replace([str(target)])
    fake_llm.script(Reply(text="A long look at it. " * 20), Reply(text="seen again"))
    await run(handler, "look")
    target.write_text("VERSION = 2\n")
    await run(handler, "look again")
    wire = json.dumps(fake_llm.requests[1].body)
    assert "VERSION = 1" in wire and "VERSION = 2" in wire  # the old copy is smaller than what follows it: kept, cache intact
    big = "x = 1\n" * 2000
    target.write_text(big)
    fake_llm.script(Reply(text="big"), Reply(text="bigger"))
    await run(handler, "and now")
    target.write_text(big + "y = 2\n")
    await run(handler, "once more")
    wire = json.dumps(fake_llm.requests[-1].body)
    assert wire.count("x = 1") == 2000 and "an older copy of app.py was here" in wire  # the big old copy became a note


async def test_caching_off_and_one_hour_ttl(fake_llm: FakeLLM, tmp_path: Path) -> None:
    handler = build(fake_llm, tmp_path, provider_options={"prompt_cache": False})
    fake_llm.script(Reply(text="a"))
    await run(handler, "hi")
    assert breakpoints(fake_llm.requests[-1].body) == []
    handler = build(fake_llm, tmp_path, provider_options={"cache_ttl": "1h"})
    fake_llm.script(Reply(text="b"))
    await run(handler, "hi")
    marks = [b["cache_control"] for b in fake_llm.requests[-1].body["system"] if "cache_control" in b]
    assert marks == [{"type": "ephemeral", "ttl": "1h"}]


async def test_openai_cached_tokens_are_reported(fake_llm: FakeLLM, tmp_path: Path) -> None:
    handler = build(fake_llm, tmp_path, kind="openai")
    fake_llm.script(Reply(text="one"), Reply(text="two"))
    first = [e.usage for e in await run(handler, "first") if isinstance(e, ev.AssistantMessage)][0]
    second = [e.usage for e in await run(handler, "second") if isinstance(e, ev.AssistantMessage)][0]
    assert first["cache_read_tokens"] == 0 and first["input_tokens"] > 2000
    assert second["cache_read_tokens"] >= 2048 and second["cache_read_tokens"] % 128 == 0
    assert second["input_tokens"] + second["cache_read_tokens"] > first["input_tokens"]


async def test_budget_stops_before_the_step_that_would_exceed_it_then_a_fresh_allowance(fake_llm: FakeLLM, tmp_path: Path) -> None:
    handler = build(fake_llm, tmp_path, max_session_tokens=9_000)
    fake_llm.script(*echo_steps(6))
    events = await run(handler, "count")
    failed = events[-1]
    assert isinstance(failed, ev.TurnFailed) and failed.result["metadata"]["resource"] == "budget"
    assert "9,000 tokens" in failed.message and "/budget" in failed.message
    sent = len(fake_llm.requests)
    assert 1 < sent < 7
    assert_history_valid(handler.conversation_history)  # every tool call was answered
    assert handler.usage.total().total_tokens <= 9_000
    assert handler.spending.refresh_budget() == "9,000 tokens"
    fake_llm.clear()
    fake_llm.script(Reply(text="finished"))
    assert (await run(handler, "continue"))[-1].kind == "turn_completed"


async def test_money_budget_on_a_priced_model_and_the_unpriced_warning(fake_llm: FakeLLM, tmp_path: Path) -> None:
    handler = build(fake_llm, tmp_path, max_turn_cost=0.015, prices={"claude-test": {"input": 3.0, "output": 15.0, "cache_write": 3.75, "cache_read": 0.3}})
    fake_llm.script(*echo_steps(8))
    events = await run(handler, "count")
    assert events[-1].kind == "turn_failed" and "turn budget of $0.0150" in events[-1].message
    assert 1 < len(fake_llm.requests) < 9
    cost = handler.usage.cost()[0]
    assert 0 < cost <= 0.015
    handler = build(fake_llm, tmp_path, max_cost=1.0)
    fake_llm.script(Reply(text="ok"))
    warnings = [e for e in await run(handler, "hi") if isinstance(e, ev.Warning)]
    assert [w.code for w in warnings] == ["budget_unpriced"] and 'prices."claude-test"' in warnings[0].message


async def test_usage_is_in_the_transcript_and_a_resumed_session_keeps_its_totals(fake_llm: FakeLLM, tmp_path: Path) -> None:
    handler = build(fake_llm, tmp_path)
    store = SessionStore()
    session = store.create(tmp_path)
    writer = store.writer(session, provider="anthropic", model="claude-test")
    handler.add_observer(SessionRecorder(writer))
    fake_llm.script(*echo_steps(2), Reply(text="second answer"))
    await run(handler, "first")
    await run(handler, "second")
    writer.close()
    records = [json.loads(line) for line in session.path.read_text().splitlines()]
    usages = [r["usage"] for r in records if r["kind"] == "assistant"]
    assert len(usages) == 4 and all(u["model"] == "claude-test" for u in usages) and [u["turn"] for u in usages] == [1, 1, 1, 2]
    assert usages[1]["cache_read_tokens"] > 0
    assert all("context_parts" in r for r in records if r["kind"] == "user")

    resumed = build(fake_llm, tmp_path)
    loaded = load_session(session)
    resumed.restore_conversation(loaded.messages, loaded.usage)
    assert resumed.usage.total() == handler.usage.total() and resumed.user_turns == 2
    assert resumed.usage.summary()["per_turn"] == handler.usage.summary()["per_turn"]
    fake_llm.script(Reply(text="third answer"))
    await run(resumed, "third")
    assert resumed.usage.turns() == [1, 2, 3]


def test_prices_unknown_models_and_overrides() -> None:
    table = PriceTable({"my-local": {"input": 0.0, "output": 0.0}, "broken": {"input": "x"}})
    assert table.price_for("claude-sonnet-4-5-20250929") is table.price_for("claude-sonnet-4-5")
    assert table.price_for("claude-sonnet-4-5").cache_read == pytest.approx(0.3)
    assert table.price_for("llama3") is None and table.price_for("broken") is None
    ledger = UsageLedger(table)
    ledger.add(1, "claude-sonnet-4-5", Usage(input_tokens=1_000_000, cache_read_tokens=1_000_000, cache_write_tokens=1_000_000, output_tokens=1_000_000))
    ledger.add(2, "llama3", Usage(input_tokens=500))
    summary = ledger.summary()
    assert summary["per_turn"][0]["cost"] == pytest.approx(3 + 0.3 + 3.75 + 15)
    assert summary["per_turn"][1]["cost"] is None and summary["cost"] is None
    assert summary["cost_partial"] == pytest.approx(22.05)
