"""What editors lean on, seen from the editor's side: its buffers, its terminal, negotiation, listing, statuses.

The agent runs as ``assistant-tui acp`` (the real entry point) against the fake model;
the client is the ``agent-client-protocol`` package's own client side, offering
``fs`` and ``terminal`` like Zed does. What went through the client is judged by what
the client received and did: its buffer reads, its writes, the processes its
terminal ran.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, text_block
from acp.schema import (
    ClientCapabilities,
    ClientSessionCapabilities,
    CreateTerminalResponse,
    FileSystemCapabilities,
    ReadTextFileResponse,
    TerminalOutputResponse,
    WaitForTerminalExitResponse,
)

from core.sessions import SessionStore, load_session
from tests.acp.conftest import RecordingClient, agent_mid_answer, agent_stderr, allow, prompt, running_agent
from tests.fake_llm import Reply, Tool

EDITOR = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True, write_text_file=True), terminal=True)
NEWER_EDITOR = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True, write_text_file=True), terminal=True, session=ClientSessionCapabilities())


class EditorClient(RecordingClient):
    """A client with buffers (unsaved text by path) and a terminal that really runs what it is asked to."""

    def __init__(self, buffers: dict[str, str] | None = None) -> None:
        super().__init__()
        self.buffers = dict(buffers or {})
        self.reads: list[str] = []
        self.writes: list[tuple[str, str]] = []
        self.terminals: dict[str, dict[str, Any]] = {}
        self.released: list[str] = []

    async def read_text_file(self, session_id: str, path: str, line: int | None = None, limit: int | None = None, **_: Any) -> ReadTextFileResponse:
        self.reads.append(path)
        content = self.buffers[path] if path in self.buffers else Path(path).read_text()
        return ReadTextFileResponse(content=content)

    async def write_text_file(self, session_id: str, path: str, content: str, **_: Any) -> None:
        self.writes.append((path, content))
        self.buffers[path] = content

    async def create_terminal(self, session_id: str, command: str, args: list[str] | None = None, env: Any = None, cwd: str | None = None,
                              output_byte_limit: int | None = None, **_: Any) -> CreateTerminalResponse:
        environ = dict(os.environ, **{variable.name: variable.value for variable in env or []})
        process = await asyncio.create_subprocess_exec(command, *(args or []), cwd=cwd, env=environ, stdout=asyncio.subprocess.PIPE,
                                                       stderr=asyncio.subprocess.STDOUT)
        terminal_id = f"term-{len(self.terminals) + 1}"
        self.terminals[terminal_id] = {"command": command, "args": list(args or []), "cwd": cwd, "process": process, "output": b""}
        return CreateTerminalResponse(terminal_id=terminal_id)

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str, **_: Any) -> WaitForTerminalExitResponse:
        terminal = self.terminals[terminal_id]
        terminal["output"] += await terminal["process"].stdout.read()
        code = await terminal["process"].wait()
        return WaitForTerminalExitResponse(exit_code=code if code >= 0 else None, signal=None if code >= 0 else str(-code))

    async def terminal_output(self, session_id: str, terminal_id: str, **_: Any) -> TerminalOutputResponse:
        return TerminalOutputResponse(output=self.terminals[terminal_id]["output"].decode(errors="replace"), truncated=False)

    async def kill_terminal(self, session_id: str, terminal_id: str, **_: Any) -> None:
        self.terminals[terminal_id]["process"].kill()

    async def release_terminal(self, session_id: str, terminal_id: str, **_: Any) -> None:
        self.released.append(terminal_id)


def tool_messages(request: Any) -> str:
    return json.dumps(request.messages[-1])


async def test_reads_see_the_editors_unsaved_buffer_and_edits_land_in_it(fake_llm, project):
    auth, util = project / "auth.py", project / "util.py"
    util.write_text("def double(x):\n    return x * 2\n")
    (project / ".env").write_text("ANTHROPIC_API_KEY=sk-ant-from-the-env-file\n")
    unsaved = "def login(user):\n    return check(user)\n"
    client = EditorClient({str(auth): unsaved, str(project / ".env"): "ANTHROPIC_API_KEY=sk-ant-from-the-env-file\n"})
    fake_llm.script(
        Reply(tools=[Tool("readFile", {"path": "auth.py"}), Tool("readFile", {"path": ".env"}), Tool("readFile", {"path": "../agent-stderr.txt"})]),
        Reply(tools=[
            Tool("editFile", {"path": "auth.py", "edits": [{"old_text": "return check(user)", "new_text": "return check(user) and user.active"}]}),
            Tool("editFile", {"path": "util.py", "edits": [{"old_text": "x * 2", "new_text": "x + x"}]}),
        ]),
        Reply(text="Done."),
    )
    async with running_agent(project, client=client, capabilities=EDITOR) as (conn, _, _):
        session = await conn.new_session(cwd=str(project))
        response = await prompt(conn, session.session_id, "look at auth and tidy util")

    assert response.stop_reason == "end_turn"
    # the model saw the editor's unsaved text, not the file on disk
    reads = tool_messages(fake_llm.requests[1])
    assert "return check(user)" in reads and "return True" not in reads
    # the guards ran before the client was asked: no secret, nothing outside the project
    assert client.reads[0] == str(auth) and str(project / ".env") not in client.reads
    assert not any("agent-stderr" in path for path in client.reads)
    assert "sk-ant-from-the-env-file" not in json.dumps([r.messages for r in fake_llm.requests])
    # the edit of the file with unsaved changes was refused before it ran; the other landed in the editor
    edits = tool_messages(fake_llm.requests[2])
    assert "unsaved changes in the editor" in edits
    assert auth.read_text() == "def login(user):\n    return True\n" and client.buffers[str(auth)] == unsaved
    assert util.read_text() == "def double(x):\n    return x + x\n"
    assert client.writes == [(str(util), "def double(x):\n    return x + x\n")]
    assert "Traceback" not in agent_stderr(project)


async def test_commands_run_in_the_editors_terminal_after_approval(fake_llm, project):
    client = EditorClient()
    answers = iter(["deny", "allow_once"])
    client.answer = lambda tool_call, options: allow(next(answers))(tool_call, options)
    run = Tool("runCommand", {"command": ["python3", "-c", "import sys; print(6 * 7); print('to stderr', file=sys.stderr)"]})
    fake_llm.script(Reply(tools=[run]), Reply(tools=[run]), Reply(text="It printed 42."))
    async with running_agent(project, client=client, capabilities=EDITOR) as (conn, _, _):
        session = await conn.new_session(cwd=str(project))
        response = await prompt(conn, session.session_id, "compute it", timeout=120)

    assert response.stop_reason == "end_turn"
    assert len(client.permissions) == 2
    # the refused run never reached the terminal; the allowed one ran there, as our launcher, never as the model's command line
    [terminal] = client.terminals.values()
    assert (terminal["command"], terminal["args"][:2], terminal["cwd"]) == (sys.executable, ["-m", "core.acp.sandboxed"], str(project))
    assert "python3" not in " ".join(terminal["args"]) and "print(6 * 7)" not in " ".join(terminal["args"])
    assert "42" in terminal["output"].decode() and "to stderr" in terminal["output"].decode()
    assert client.released == ["term-1"]
    # the model got the run's result, sandboxed, and the editor's tool call shows the terminal to the end
    result = tool_messages(fake_llm.requests[2])
    assert "42" in result and "[sandboxed]" in result
    updates = [u for u in client.of("tool_call_update") if u.status == "completed"]
    assert updates and updates[-1].content[0].type == "terminal" and updates[-1].content[0].terminal_id == "term-1"


async def test_version_listing_and_permission_status(fake_llm, project, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    client = RecordingClient()
    edit = Tool("editFile", {"path": "auth.py", "edits": [{"old_text": "return True", "new_text": "return user is not None"}]})
    fake_llm.script(Reply(text="Hello."), Reply(tools=[edit]), Reply(text="Edited."))
    async with running_agent(project, client=client) as (conn, _, _):
        # a client asking for version 0 gets the version we speak
        assert (await conn.initialize(protocol_version=0)).protocol_version == PROTOCOL_VERSION
        first = await conn.new_session(cwd=str(other))
        await prompt(conn, first.session_id, "hello")
        second = await conn.new_session(cwd=str(project))
        await prompt(conn, second.session_id, "guard login")
        everything = await conn.list_sessions()
        here = await conn.list_sessions(cwd=str(project))

    assert {s.session_id for s in everything.sessions} == {first.session_id, second.session_id}
    assert [s.session_id for s in here.sessions] == [second.session_id]
    # pending until the user allowed it, then in progress, then done: never back to pending
    statuses = [u.status for u in client.updates if u.session_update in ("tool_call", "tool_call_update") and u.status]
    assert statuses[0] == "pending" and statuses[-1] == "completed"
    assert "pending" not in statuses[statuses.index("in_progress"):]
    [(asked, _)] = client.permissions
    assert asked.status == "pending"


async def test_cancel_withdraws_the_permission_request(fake_llm, project):
    fake_llm.script(Reply(text="Editing.", tools=[Tool("aiderAutomatic", {"prompt": "Rewrite login"})]))
    client = RecordingClient()
    never = asyncio.Event()
    seen: list[dict[str, Any]] = []

    async def wait_forever(tool_call, options):
        await never.wait()

    client.answer = wait_forever
    async with running_agent(project, client=client, observers=[lambda event: seen.append(event.message)]) as (conn, _, _):
        session = await conn.new_session(cwd=str(project))
        running = asyncio.create_task(prompt(conn, session.session_id, "rewrite it"))
        await asyncio.wait_for(client.permission_seen.wait(), 30)
        await conn.cancel(session_id=session.session_id)
        response = await running
        async with asyncio.timeout(30):
            while not any(m.get("method") == "$/cancel_request" for m in seen):
                await asyncio.sleep(0.01)

    assert response.stop_reason == "cancelled"
    [asked] = [m for m in seen if m.get("method") == "session/request_permission"]
    [withdrawn] = [m for m in seen if m.get("method") == "$/cancel_request"]
    assert withdrawn["params"]["requestId"] == asked["id"]


async def test_newer_clients_get_usage_title_and_options_and_load_restores_what_they_saw(fake_llm, project):
    (project / "notes.md").write_text("remember the milk\n")
    fake_llm.script(Reply(text="Noted."))
    client = EditorClient()
    async with running_agent(project, client=client, capabilities=NEWER_EDITOR) as (conn, _, _):
        session = await conn.new_session(cwd=str(project))
        await conn.set_session_mode(session_id=session.session_id, mode_id="deny")
        embedded = {"type": "resource", "resource": {"uri": f"file://{project / 'notes.md'}", "text": "remember the milk\n"}}
        await asyncio.wait_for(conn.prompt(session_id=session.session_id, prompt=[text_block("read"), embedded]), 60)
        listed = await prompt(conn, session.session_id, "/task list")

    assert listed.stop_reason == "end_turn"
    assert {o.id for o in session.config_options} == {"mode", "model"}
    [title] = client.of("session_info_update")
    assert title.title == "read"
    usage = client.of("usage_update")
    assert usage and usage[-1].size > 0 and usage[-1].used > 0
    assert any(u.session_update == "config_option_update" for u in client.updates)
    # /task output keeps its <placeholders> and line breaks (a code block)
    task_text = client.of("agent_message_chunk")[-1].content.text
    assert task_text.startswith("```") and "\n" in task_text.strip("`")

    old_client = RecordingClient()  # an older client: none of the newer kinds
    async with running_agent(project, client=old_client) as (conn, _, _):
        loaded = await conn.load_session(cwd=str(project), session_id=session.session_id)

    assert loaded.modes.current_mode_id == "deny" and loaded.config_options is None
    kinds = {u.session_update for u in old_client.updates}
    assert not kinds & {"usage_update", "session_info_update", "config_option_update"}
    users = [u.content.text for u in old_client.of("user_message_chunk")]
    assert users == ["read @notes.md", "/task list"]  # the file by name, the command as typed
    assert "remember the milk" not in json.dumps([u.model_dump() for u in old_client.updates])
    assert any(u.content.text.startswith("```") for u in old_client.of("agent_message_chunk"))


async def test_a_failed_prompt_says_why_in_message_and_details(fake_llm, project):
    from acp import RequestError

    from tests.fake_llm import HTTPError

    fake_llm.script(HTTPError(400, "prompt is malformed in a way the model refuses"))
    async with running_agent(project) as (conn, _, _):
        session = await conn.new_session(cwd=str(project))
        try:
            await prompt(conn, session.session_id, "hello")
        except RequestError as exc:
            error = exc
        else:
            raise AssertionError("a provider error was not reported")
    assert "malformed" in str(error) and error.data["details"] == str(error) and error.data["reason"]


def test_a_terminate_mid_turn_ends_cleanly_and_keeps_the_partial_answer(fake_llm, project):
    fake_llm.script(Reply(text="word " * 400, chunk=5, tokens_per_second=40))
    process, session_id = agent_mid_answer(project)
    process.send_signal(signal.SIGTERM)  # the editor quits
    assert process.wait(60) == 0
    assert b"Traceback" not in process.stderr.read()
    log = Path(os.environ["XDG_STATE_HOME"]) / "assistant-tui" / "assistant-tui.log"
    assert "Traceback" not in log.read_text()
    messages = load_session(SessionStore().open(session_id, project)).messages
    assert messages[-1]["role"] == "assistant" and messages[-1].get("interrupted")


async def test_sessions_resume_fork_and_close(fake_llm, project):
    from acp import RequestError

    fake_llm.script(Reply(text="First answer."))
    async with running_agent(project) as (conn, _, _):
        first = await conn.new_session(cwd=str(project))
        await prompt(conn, first.session_id, "first question")

    fake_llm.script(Reply(text="Second answer."), Reply(text="Third answer."))
    client = RecordingClient()
    async with running_agent(project, client=client) as (conn, _, _):
        await conn.resume_session(session_id=first.session_id, cwd=str(project))
        await prompt(conn, first.session_id, "second question")
        forked = await conn.fork_session(session_id=first.session_id, cwd=str(project))
        await prompt(conn, forked.session_id, "third question")
        await conn.close_session(session_id=forked.session_id)
        try:
            await prompt(conn, forked.session_id, "after close")
        except RequestError as exc:
            assert exc.code == -32602 and "unknown session" in str(exc)
        else:
            raise AssertionError("a closed session took a prompt")

    assert not client.of("user_message_chunk")  # resume replays nothing
    texts = lambda request: [b.get("text") for m in request.messages for b in m["content"] if isinstance(m["content"], list) and b.get("type") == "text"]  # noqa: E731
    asked = [t for t in texts(fake_llm.requests[-1]) if t and t.endswith("question")]
    assert asked == ["first question", "second question", "third question"] and forked.session_id != first.session_id
    original = [m["content"] for m in load_session(SessionStore().open(first.session_id, project)).messages if m["role"] == "user"]
    assert original == ["first question", "second question"]  # the fork's turn stayed in the fork


async def test_the_model_and_mode_options_switch_the_session(fake_llm, project):
    fake_llm.script(Reply(text="From haiku."))
    client = EditorClient()
    async with running_agent(project, client=client, capabilities=NEWER_EDITOR) as (conn, _, _):
        session = await conn.new_session(cwd=str(project))
        [model] = [o for o in session.config_options if o.id == "model"]
        assert "anthropic:claude-haiku-4-5" in [choice.value for choice in model.options]
        answer = await conn.set_config_option(config_id="model", session_id=session.session_id, value="anthropic:claude-haiku-4-5")
        await conn.set_config_option(config_id="mode", session_id=session.session_id, value="allow")
        await prompt(conn, session.session_id, "hello")
        async with asyncio.timeout(30):
            while not client.of("current_mode_update"):
                await asyncio.sleep(0.01)

    assert {o.id: o.current_value for o in answer.config_options}["model"] == "anthropic:claude-haiku-4-5"
    assert fake_llm.requests[-1].body["model"] == "claude-haiku-4-5"
    assert client.of("current_mode_update")[-1].current_mode_id == "allow"


async def test_without_a_key_the_client_is_asked_to_sign_in(project):
    from acp import RequestError

    async with running_agent(project) as (conn, _, _):
        init = await conn.initialize(protocol_version=PROTOCOL_VERSION)
        methods = {m.id: [v.name for v in m.vars] for m in init.auth_methods}
        session = await conn.new_session(cwd=str(project))
        try:
            await prompt(conn, session.session_id, "hello")
        except RequestError as exc:
            needs_auth = exc
        try:
            await conn.authenticate(method_id="anthropic-api-key")
        except RequestError as exc:
            missing = exc

    assert methods == {"anthropic-api-key": ["ANTHROPIC_API_KEY"], "openai-api-key": ["OPENAI_API_KEY", "OPENAI_BASE_URL"]}
    assert needs_auth.code == -32000 and "ANTHROPIC_API_KEY" in needs_auth.data["details"]
    assert "ANTHROPIC_API_KEY is not set" in str(missing) and missing.data["details"] == str(missing)


async def test_a_key_from_the_client_signs_in(fake_llm, project):
    fake_llm.script(Reply(text="Signed in."))
    async with running_agent(project) as (conn, client, _):
        await conn.authenticate(method_id="anthropic-api-key")  # the client started us with the key set
        session = await conn.new_session(cwd=str(project))
        response = await prompt(conn, session.session_id, "hello")
    assert response.stop_reason == "end_turn" and client.text() == "Signed in."
