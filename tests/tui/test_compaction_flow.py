"""/compact and /model as the user sees them: the real app against the fake server (issue 27)."""

from __future__ import annotations

from pathlib import Path

from core.config import Settings
from tests.fake_llm import FakeLLM, Reply, Tool
from tests.scripted_session import anthropic_problems, openai_problems
from tests.tui.conftest import ECHO_SPEC, FixedClock, finish_turn, send, settle, wait_for, widgets
from tui.app import make_app
from tui.widgets.chat import NoteMessage


def notes(app: object, title: str) -> list[str]:
    return [n.body for n in widgets(app, NoteMessage) if n.border_title == title]  # type: ignore[arg-type]


async def test_compact_then_switch_models_and_f2_shows_everything(project: Path, fake_llm: FakeLLM) -> None:
    settings = Settings(
        project_root=project, max_retries=0, model="claude-sonnet-4-5",
        anthropic_base_url=fake_llm.anthropic_url, anthropic_api_key="test",
        openai_base_url=fake_llm.openai_url, openai_api_key="test",
    )
    app = make_app(settings, clock=FixedClock())
    assert not app.engine_error, app.engine_error
    app.handler.register_tool(ECHO_SPEC, lambda params: params["text"].upper())
    questions = [f"question {n}: " + "tell me more about the parser " * 20 for n in range(4)]
    for n in range(4):
        fake_llm.script(Reply(text=f"echoing {n}", tools=[Tool("echo", {"text": f"value {n}"})]), Reply(text=f"answer {n} " + "detail " * 200))
    fake_llm.script(Reply(text="## User requests\nfour questions about the parser"))
    async with app.run_test(size=(100, 32)) as pilot:
        for question in questions:
            await send(pilot, question)
            await finish_turn(pilot)
        await send(pilot, "/compact the parser")
        await wait_for(pilot, lambda: bool(notes(app, "/compact")))
        line = notes(app, "/compact")[-1]
        assert line.startswith("Compacted ") and line.endswith("f2 shows them all."), line
        assert "focus on: the parser" in str(fake_llm.requests[-1].body)

        await send(pilot, "/model openai:gpt-4o-mini")
        await wait_for(pilot, lambda: bool(notes(app, "/model")))
        assert "to openai:gpt-4o-mini" in notes(app, "/model")[-1]
        assert app.status.provider == "openai:gpt-4o-mini"
        fake_llm.script(Reply(text="checking", tools=[Tool("echo", {"text": "after"})]), Reply(text="done on the other model"))
        await send(pilot, "one more")
        await finish_turn(pilot)
        await settle(pilot)

        transcript = app.sessions.transcript_markdown()  # what f2 shows and /export writes
        assert all(question.strip() in transcript for question in questions) and "Compacted " in transcript
    openai_requests = fake_llm.requests_for("openai")
    assert len(openai_requests) == 2 and not any(openai_problems(r) for r in openai_requests)
    assert not any(anthropic_problems(r) for r in fake_llm.requests_for("anthropic"))
    assert "four questions about the parser" in str(openai_requests[0].body)
