"""Sessions in the app: resume restores chat, context pane and trace; /new, /sessions, /export."""

from __future__ import annotations

from pathlib import Path

from core import paths
from core.config import Settings
from tests.fake_llm import FakeLLM, Reply, Tool
from tests.tui.conftest import ECHO_SPEC, SIZE, FixedClock, finish_turn, send, started, wait_for, widgets
from tui.app import make_app
from tui.widgets.chat import AssistantMessage, NoteMessage, ToolCallLine, UserMessage


def settings_for(project: Path, fake_llm: FakeLLM) -> Settings:
    return Settings(project_root=project, anthropic_base_url=fake_llm.anthropic_url, anthropic_api_key="test", max_retries=0)


async def test_resume_restores_chat_context_and_trace(project: Path, fake_llm: FakeLLM) -> None:
    settings = settings_for(project, fake_llm)
    fake_llm.script(Reply(text="Let me check.", tools=[Tool("echo", {"text": "abc"})]), Reply(text="It is ABC."))
    first = make_app(settings, clock=FixedClock())
    first.handler.register_tool(ECHO_SPEC, lambda params: params["text"].upper())
    async with first.run_test(size=SIZE) as pilot:
        await send(pilot, "/add src/app.py")
        await wait_for(pilot, lambda: len(first.pinned) == 1)
        await pilot.press("ctrl+g", "r")  # mark it read-only in the context pane
        await wait_for(pilot, lambda: bool(first.engine.session.context.read_only))
        first.prompt.focus()
        await send(pilot, "shout abc")
        await finish_turn(pilot)
        session_id = first.application.session.id

    second = make_app(settings, clock=FixedClock(), continue_session=True)
    async with second.run_test(size=SIZE) as pilot:
        await started(pilot)
        assert second.application.session.id == session_id
        assert [m.text for m in widgets(second, UserMessage)] == ["shout abc"]
        assert [m.text for m in widgets(second, AssistantMessage)] == ["Let me check.", "It is ABC."]
        (line,) = widgets(second, ToolCallLine)
        assert (line.call.name, line.status) == ("echo", "success")
        (record,) = second.trace.records.values()
        assert (record.call.name, record.status, record.result) == ("echo", "success", "ABC")
        entries = second.context_pane.entries
        assert [(e.display, e.read_only) for e in entries] == [("src/app.py", True)]
        assert [m["role"] for m in second.handler.conversation_history] == ["user", "assistant", "tool", "assistant"]
        # the resumed conversation goes on: the next request carries the earlier turns
        fake_llm.script(Reply(text="Still here."))
        await send(pilot, "and now?")
        await finish_turn(pilot)
        assert len(fake_llm.requests[-1].messages) == 5


async def test_new_sessions_and_export(project: Path, fake_llm: FakeLLM) -> None:
    settings = settings_for(project, fake_llm)
    fake_llm.responder = lambda request: Reply(text=f"answer to {request.last_user_text()}")
    app = make_app(settings, clock=FixedClock())
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "first session question")
        await finish_turn(pilot)
        await send(pilot, "/export notes/out.md")
        await wait_for(pilot, lambda: any("does not exist" in getattr(w, "body", "") for w in app.chat.children))
        await send(pilot, "/export out.md")
        await wait_for(pilot, lambda: (project / "out.md").exists())
        exported = (project / "out.md").read_text()
        assert "first session question" in exported and "answer to first session question" in exported
        await send(pilot, "/export")  # no path: the state directory, never the repository; the note says where
        target = paths.state_dir() / "exports" / f"assistant-tui-{app.application.session.id}.md"
        await wait_for(pilot, lambda: target.exists())
        assert "answer to first session question" in target.read_text()
        assert f"to {target}." in widgets(app, NoteMessage)[-1].body
        assert sorted(p.name for p in project.iterdir()) == ["README.md", "out.md", "src"]
        old_id = app.application.session.id
        await send(pilot, "/new")
        await wait_for(pilot, lambda: app.application.session.id != old_id)
        assert not widgets(app, UserMessage) and not app.handler.conversation_history
        await send(pilot, "second session question")
        await finish_turn(pilot)
        await send(pilot, "/sessions")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "SessionPickerScreen")
        picker = app.screen
        assert [info.first_prompt for info in picker.sessions] == ["second session question", "first session question"]
        await pilot.press("down", "enter")
        await wait_for(pilot, lambda: app.application.session.id == old_id)
        await wait_for(pilot, lambda: [m.text for m in widgets(app, UserMessage)] == ["first session question"], what="the switched-to session redrawn")


async def test_sessions_without_a_message_are_neither_listed_nor_kept(project: Path, fake_llm: FakeLLM) -> None:
    settings = settings_for(project, fake_llm)
    fake_llm.script(Reply(text="Hi."))
    app = make_app(settings, clock=FixedClock())
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_started()
        sessions_dir = app.application.session_state.store.project_dir(project)
        empty_id = app.application.session.id
        await send(pilot, "/add src/app.py")  # the context pane is recorded, but it is no message
        await wait_for(pilot, lambda: len(app.engine.session.context.picked) == 1)
        await send(pilot, "/new")
        await wait_for(pilot, lambda: app.application.session.id != empty_id)
        await send(pilot, "hello")
        await finish_turn(pilot)
        kept_id = app.application.session.id
        await send(pilot, "/new")
        await wait_for(pilot, lambda: app.application.session.id != kept_id)
        await send(pilot, "/sessions")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "SessionPickerScreen")
        assert [info.id for info in app.screen.sessions] == [kept_id]
        await pilot.press("escape")
    assert sorted(p.name for p in sessions_dir.glob("*.jsonl")) == [f"{kept_id}.jsonl"]
