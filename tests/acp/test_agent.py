"""``assistant-tui acp`` end to end: the real entry point, the package's client side, the fake model."""

from __future__ import annotations

import asyncio
import json

from core.sessions import SessionStore, load_session
from tests.acp.conftest import (
    RecordingClient,
    agent_mid_answer,
    agent_stderr,
    allow,
    cancelled_outcome,
    prompt,
    raw_agent,
    running_agent,
)
from tests.fake_llm import Reply, Tool


async def test_a_prompt_with_a_tool_call_streams_updates_and_is_recorded(fake_llm, project):
    fake_llm.script(Reply(thinking="The user wants auth.", text="Reading it.", tools=[Tool("readFile", {"path": "auth.py"})]), Reply(text="It always logs in."))
    async with running_agent(project) as (conn, client, _):
        session = await conn.new_session(cwd=str(project))
        response = await prompt(conn, session.session_id, "explain auth")

    assert response.stop_reason == "end_turn"
    assert client.text() == "Reading it.It always logs in."
    assert client.text("agent_thought_chunk") == "The user wants auth."
    [start] = client.of("tool_call")
    assert (start.tool_call_id, start.kind, start.status, start.title) == (start.tool_call_id, "read", "in_progress", "Read auth.py")
    assert [loc.path for loc in start.locations] == [str(project / "auth.py")]
    [done] = client.of("tool_call_update")
    assert done.tool_call_id == start.tool_call_id and done.status == "completed"
    assert "def login" in done.content[0].content.text
    assert [loc.path for loc in done.locations] == [str(project / "auth.py")]
    # the tool result reached the model's next request
    assert "def login" in json.dumps(fake_llm.requests[1].messages[-1])
    # recorded like -p: `assistant-tui --continue` finds this session
    latest = SessionStore().latest(project)
    assert latest is not None and latest.id == session.session_id
    roles = [m["role"] for m in load_session(latest).messages]
    assert roles == ["user", "assistant", "tool", "assistant"]
    assert "Traceback" not in agent_stderr(project)


async def test_a_permission_request_is_answered_before_the_tool_runs(fake_llm, project):
    from acp import RequestError

    edit = Tool("aiderAutomatic", {"prompt": "Add a docstring to login", "file_context": ["auth.py"]})
    fake_llm.script(Reply(text="Editing.", tools=[edit]), Reply(text="I was not allowed to edit."))
    client = RecordingClient()

    async def reject(tool_call, options):
        # the tool call was announced, pending, before we were asked
        [start] = client.of("tool_call")
        assert start.tool_call_id == tool_call.tool_call_id and start.status == "pending" and start.kind == "edit"
        return await allow("deny")(tool_call, options)

    client.answer = reject
    async with running_agent(project, client=client) as (conn, _, _):
        session = await conn.new_session(cwd=str(project))
        response = await prompt(conn, session.session_id, "document login")
        # the read-only mode denies without asking
        assert session.modes.current_mode_id == "ask" and [m.id for m in session.modes.available_modes] == ["ask", "allow", "deny"]
        await conn.set_session_mode(session_id=session.session_id, mode_id="deny")
        fake_llm.script(Reply(tools=[edit]), Reply(text="Read-only, then."))
        await prompt(conn, session.session_id, "try again")
        try:
            await conn.set_session_mode(session_id=session.session_id, mode_id="yolo")
        except RequestError as exc:
            assert exc.code == -32602
        else:
            raise AssertionError("an unknown mode was accepted")

    assert response.stop_reason == "end_turn"
    [(tool_call, options)] = client.permissions
    assert [(o.option_id, o.kind) for o in options] == [("allow_once", "allow_once"), ("allow_session", "allow_always"), ("deny", "reject_once")]
    assert tool_call.kind == "edit" and tool_call.title == "aider: Add a docstring to login"
    assert "auth.py" in tool_call.content[0].content.text and [loc.path for loc in tool_call.locations] == [str(project / "auth.py")]
    done = client.of("tool_call_update")[-1]
    assert done.status == "failed" and "Denied" in done.content[0].content.text
    assert "Denied" in json.dumps(fake_llm.requests[1].messages[-1])
    assert len(client.permissions) == 1 and "approval_mode=deny" in json.dumps(fake_llm.requests[-1].messages[-1])
    assert (project / "auth.py").read_text() == "def login(user):\n    return True\n"


async def test_cancel_during_a_permission_request(fake_llm, project):
    fake_llm.script(Reply(text="Editing.", tools=[Tool("aiderAutomatic", {"prompt": "Rewrite login"})]))
    client = RecordingClient()
    release = asyncio.Event()

    async def wait_for_cancel(tool_call, options):
        await release.wait()
        return cancelled_outcome()

    client.answer = wait_for_cancel
    async with running_agent(project, client=client) as (conn, _, _):
        session = await conn.new_session(cwd=str(project))
        running = asyncio.create_task(prompt(conn, session.session_id, "rewrite it"))
        await asyncio.wait_for(client.permission_seen.wait(), 30)
        await conn.cancel(session_id=session.session_id)
        response = await running
        release.set()
        # the session is still usable after the cancel
        fake_llm.script(Reply(text="Fine."))
        again = await prompt(conn, session.session_id, "never mind")

    assert response.stop_reason == "cancelled"
    updates = client.of("tool_call_update")
    assert updates and updates[-1].status == "failed"
    assert again.stop_reason == "end_turn"
    # the history stayed valid: the interrupted call was answered before the next user message
    messages = fake_llm.requests[-1].messages
    assert any(b.get("type") == "tool_result" for m in messages if isinstance(m["content"], list) for b in m["content"])


async def test_cancel_mid_stream(fake_llm, project):
    fake_llm.script(Reply(text="word " * 400, chunk=5, tokens_per_second=40))
    async with running_agent(project) as (conn, client, _):
        session = await conn.new_session(cwd=str(project))
        running = asyncio.create_task(prompt(conn, session.session_id, "talk"))
        await asyncio.wait_for(client.update_seen.wait(), 30)
        async with asyncio.timeout(30):  # the first chunk of the answer, streamed at 40 tokens a second
            while not client.of("agent_message_chunk"):
                await asyncio.sleep(0.01)
        await conn.cancel(session_id=session.session_id)
        response = await running

    assert response.stop_reason == "cancelled"
    assert 0 < len(client.text()) < len("word " * 400)
    recorded = load_session(SessionStore().open(session.session_id, project)).messages
    assert recorded[-1]["role"] == "assistant" and recorded[-1].get("interrupted")


async def test_session_load_replays_the_conversation(fake_llm, project):
    from acp import RequestError

    fake_llm.script(Reply(thinking="Read first.", text="Reading it.", tools=[Tool("readFile", {"path": "auth.py"})]), Reply(text="It always logs in."))
    async with running_agent(project) as (conn, _, _):
        session = await conn.new_session(cwd=str(project))
        await prompt(conn, session.session_id, "explain auth")

    fake_llm.script(Reply(text="Still true."))
    async with running_agent(project) as (conn, client, _):
        try:
            await conn.load_session(cwd=str(project), session_id="20990101-000000-abcdef")
        except RequestError as exc:
            assert exc.code == -32602 and "20990101-000000-abcdef" in json.dumps(exc.data)
        else:
            raise AssertionError("loading an unknown session succeeded")
        listed = await conn.list_sessions(cwd=str(project))
        assert [s.session_id for s in listed.sessions] == [session.session_id]
        await conn.load_session(cwd=str(project), session_id=session.session_id)
        replayed = list(client.updates)
        response = await prompt(conn, session.session_id, "and now?")

    kinds = [u.session_update for u in replayed if u.session_update != "available_commands_update"]
    assert kinds == ["user_message_chunk", "agent_thought_chunk", "agent_message_chunk", "tool_call", "agent_message_chunk"]
    assert replayed[0].content.text == "explain auth"
    tool = next(u for u in replayed if u.session_update == "tool_call")
    assert (tool.kind, tool.status, tool.title) == ("read", "completed", "Read auth.py") and "def login" in tool.content[0].content.text
    assert response.stop_reason == "end_turn"
    texts = [b.get("text") for m in fake_llm.requests[-1].messages for b in m["content"] if b.get("type") == "text"]
    assert [t for t in texts if t in ("explain auth", "and now?")] == ["explain auth", "and now?"]


def test_malformed_requests_get_json_rpc_errors_and_stdout_stays_protocol(fake_llm, project):
    lines = [
        b"this is not json\n",
        b"[1, 2, 3]\n",
        b'{"jsonrpc": "2.0", "id": 3, "method": 42}\n',
        b'{"jsonrpc": "2.0", "id": 4, "method": "session/prompt", "params": {}}\n',
        b'{"jsonrpc": "2.0", "id": 5, "method": "no/such/method"}\n',
        b'{"jsonrpc": "2.0", "id": 6, "method": "session/prompt", "params": {"sessionId": "nope", "prompt": [{"type": "text", "text": "hi"}]}}\n',
        b'{"jsonrpc": "2.0", "id": 7, "method": "session/new", "params": {"cwd": "relative/dir", "mcpServers": []}}\n',
        b'{"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "nope"}}\n',
        b'{"jsonrpc": "2.0", "id": 8, "method": "initialize", "params": {"protocolVersion": 1}}\n',
    ]
    process = raw_agent(project)
    out, err = process.communicate(b"".join(lines), timeout=300)
    assert process.returncode == 0, err
    replies = [json.loads(line) for line in out.decode().splitlines()]  # every stdout line is JSON-RPC
    by_id = {r["id"]: r for r in replies if r.get("id") is not None}
    anonymous = [r["error"]["code"] for r in replies if r.get("id") is None]
    assert sorted(anonymous) == [-32700, -32600]
    assert by_id[3]["error"]["code"] == -32600
    assert by_id[4]["error"]["code"] == -32602
    assert by_id[5]["error"]["code"] == -32601
    assert by_id[6]["error"]["code"] == -32602 and "nope" in json.dumps(by_id[6]["error"])
    assert by_id[7]["error"]["code"] == -32602 and "absolute" in json.dumps(by_id[7]["error"])
    assert by_id[8]["result"]["agentCapabilities"]["loadSession"] is True
    assert len(replies) == 8  # the notification got no answer
    assert b"Traceback" not in err and b"Traceback" not in out


def test_the_acp_path_does_not_import_textual(project):
    import subprocess
    import sys

    from tests.acp.conftest import agent_env

    code = "import sys, tui.cli; status = tui.cli.main(['acp']); sys.stderr.write('textual=%s' % ('textual' in sys.modules)); sys.exit(status)"
    out = subprocess.run([sys.executable, "-c", code], cwd=project, env=agent_env(), stdin=subprocess.DEVNULL, capture_output=True, timeout=300)
    assert out.returncode == 0 and out.stdout == b""
    assert out.stderr.endswith(b"textual=False"), out.stderr


async def test_an_allowed_aider_edit_arrives_as_a_diff_and_always_is_remembered(fake_llm, project):
    from tests.aider.conftest import git, whole_file_edit

    documented = '"""Log users in."""\n\n\ndef login(user):\n    return True\n'
    git(project, "init", "-q")
    git(project, "add", ".")
    git(project, "commit", "-qm", "initial")

    def respond(request):
        if request.api == "openai":  # aider asking its model for the edit
            return Reply(text=whole_file_edit("auth.py", documented))
        if len(request.messages) == 1:
            return Reply(tools=[Tool("aiderAutomatic", {"prompt": "Add a module docstring", "file_context": ["auth.py"]}), Tool("aiderAutomatic", {"prompt": ""})])
        return Reply(text="Documented.")

    fake_llm.responder = respond
    client = RecordingClient()
    client.answer = allow("allow_session")
    async with running_agent(project, client=client, ASSISTANT_TUI_AIDER_MODEL="openai/fake-model") as (conn, _, _):
        session = await conn.new_session(cwd=str(project))
        response = await prompt(conn, session.session_id, "document auth.py", timeout=120)

    assert response.stop_reason == "end_turn"
    assert (project / "auth.py").read_text() == documented
    assert len(client.permissions) == 1  # "always" covered the second call
    finished = [u for u in client.of("tool_call_update") if u.status in ("completed", "failed")]
    assert [u.status for u in finished] == ["completed", "failed"]
    diff = finished[0].content[0]
    assert (diff.type, diff.path) == ("diff", str(project / "auth.py"))
    assert (diff.old_text, diff.new_text) == ("def login(user):\n    return True\n", documented)


async def test_plan_steps_turn_limit_and_provider_errors(fake_llm, project):
    from acp import RequestError

    from tests.fake_llm import HTTPError

    fake_llm.script(
        Reply(text="<plan>\n1. Read auth.py\n2. Add a password check\n</plan>"),
        Reply(tools=[Tool("readFile", {"path": "auth.py"}), Tool("readFile", {"path": "auth.py"})]),
        Reply(text="A very long answer that gets cu", stop_reason="max_tokens"),
        Reply(text="", stop_reason="refusal"),
        HTTPError(401, "invalid x-api-key"),
    )
    async with running_agent(project, "--max-tool-calls", "1") as (conn, client, _):
        session = await conn.new_session(cwd=str(project))
        planned = await prompt(conn, session.session_id, "/plan secure login")
        plan = client.of("plan")[-1]
        plan_text = client.text()
        limited = await prompt(conn, session.session_id, "read it twice")
        cut = await prompt(conn, session.session_id, "write a lot")
        refused = await prompt(conn, session.session_id, "something bad")
        try:
            await prompt(conn, session.session_id, "and again")
        except RequestError as exc:
            error = exc
        else:
            raise AssertionError("a provider error was not reported")

    assert planned.stop_reason == "end_turn"
    assert [(e.content, e.status) for e in plan.entries] == [("Read auth.py", "pending"), ("Add a password check", "pending")]
    assert "<plan>" not in plan_text and "Read auth.py" not in plan_text  # the steps are entries, not message text
    assert limited.stop_reason == "max_turn_requests"
    assert (cut.stop_reason, refused.stop_reason) == ("max_tokens", "refusal")
    assert "Stopped: the model asked for more than 1 tool calls" in client.text()
    # the second call was answered, not run, and announced as one finished tool call
    calls = [(u.session_update, u.status) for u in client.updates if u.session_update in ("tool_call", "tool_call_update")]
    assert calls == [("tool_call", "in_progress"), ("tool_call_update", "completed"), ("tool_call", "failed")]
    assert "Not run" in client.of("tool_call")[-1].content[0].content.text
    assert "401" in str(error) or "key" in str(error).lower()
    assert "Traceback" not in agent_stderr(project)


def test_the_client_going_away_mid_answer_keeps_the_partial_answer(fake_llm, project):
    fake_llm.script(Reply(text="word " * 400, chunk=5, tokens_per_second=40))
    process, session_id = agent_mid_answer(project)
    process.stdin.close()  # the editor quit
    assert process.wait(60) == 0
    assert b"Traceback" not in process.stderr.read()
    messages = load_session(SessionStore().open(session_id, project)).messages
    assert [m["role"] for m in messages] == ["user", "assistant"]
    assert messages[-1].get("interrupted") and messages[-1]["content"].startswith("word")


async def test_without_a_provider_a_prompt_says_what_to_set(project):
    from acp import RequestError

    async with running_agent(project) as (conn, client, _):
        session = await conn.new_session(cwd=str(project))
        try:
            await prompt(conn, session.session_id, "hello")
        except RequestError as exc:
            assert "ANTHROPIC_API_KEY" in str(exc)
        else:
            raise AssertionError("a prompt without a provider succeeded")
        # structured tasks need no model
        listed = await prompt(conn, session.session_id, "/task list")
    assert listed.stop_reason == "end_turn" and "aider:automatic" in client.text()


async def test_the_clients_mcp_server_gives_the_model_a_tool(fake_llm, project):
    import sys

    from acp.schema import EnvVariable, McpServerStdio

    fake_llm.script(Reply(tools=[Tool("mcp__clock__get_current_time", {"timezone": "Asia/Tokyo"})]), Reply(text="Late in Tokyo."))
    clock = McpServerStdio(name="clock", command=sys.executable, args=["-m", "mcp_server_time", "--local-timezone", "UTC"], env=[EnvVariable(name="TZ", value="UTC")])
    async with running_agent(project) as (conn, client, _):
        session = await conn.new_session(cwd=str(project), mcp_servers=[clock])
        response = await prompt(conn, session.session_id, "what time is it in Tokyo?")

    assert response.stop_reason == "end_turn"
    assert "mcp__clock__get_current_time" in fake_llm.requests[0].tool_names
    [(asked, _)] = client.permissions  # MCP tools ask by default
    assert asked.title == "clock: get_current_time"
    done = client.of("tool_call_update")[-1]
    assert done.status == "completed" and "+09:00" in done.content[0].content.text
    assert "+09:00" in json.dumps(fake_llm.requests[1].messages[-1])
