"""One context figure (issue 14's meter): the last response's real input tokens plus an estimate of what was added since."""

from __future__ import annotations

from pathlib import Path

from core.tokens import estimate_text_tokens
from core.memory.policy import estimate_file_tokens
from tests.fake_llm import FakeLLM, Reply


async def _turn(handler, text: str) -> None:
    async for _ in handler.stream_query(text):
        pass


async def test_the_meter_is_real_input_plus_what_was_added(make_handler, fake_llm: FakeLLM, tmp_path: Path) -> None:
    handler = make_handler()
    before = handler.context_meter()
    assert before.tokens == before.estimated > 0  # nothing reported yet: all of it is an estimate
    assert handler.get_resource_metrics()["estimated_tokens"] == before.tokens

    fake_llm.script(Reply(text="Hello there.", input_tokens=5_000))
    await _turn(handler, "hi")
    after_turn = handler.context_meter()
    answer = handler.conversation_history[-1]
    assert after_turn.tokens == 5_000 + after_turn.estimated
    assert 0 < after_turn.estimated <= 8 + estimate_text_tokens(answer["content"])  # only the answer is estimated

    # a picked file counts at once (sized, not read), and again once it is in the conversation
    (tmp_path / "notes.md").write_text("x" * 4_000)
    handler.file_context.replace([str(tmp_path / "notes.md")])
    picked = handler.context_meter()
    assert picked.tokens - after_turn.tokens == estimate_file_tokens(4_000) == 1_000
    metrics = handler.get_resource_metrics()
    assert (metrics["estimated_tokens"], metrics["context_estimated_tokens"]) == (picked.tokens, picked.estimated)

    fake_llm.script(Reply(text="Seen.", input_tokens=7_000))
    await _turn(handler, "read it")
    assert handler.context_meter().tokens == 7_000 + handler.context_meter().estimated  # sent now: in the real figure


async def test_a_picked_file_over_the_limit_is_not_counted(make_handler, tmp_path: Path) -> None:
    handler = make_handler()
    base = handler.context_meter().tokens
    (tmp_path / "dump.json").write_text("1" * (handler.file_context.policy.max_bytes + 1))
    handler.file_context.replace([str(tmp_path / "dump.json")])
    assert handler.context_meter().tokens == base  # it is not sent (the turn says why), so it is not counted
