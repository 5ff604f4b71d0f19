"""MCP configuration: config.toml tables, a project's .mcp.json (only when trusted), --mcp-config, result shapes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp import types

from core.config import trust_project
from core.mcp import load_mcp_config, tool_name
from core.mcp.results import to_task_result

USER_TOML = """
model = "claude-sonnet-4-5"

[mcp_servers.time]
command = "uvx"
args = ["mcp-server-time"]
allow = ["get_current_time"]
tool_timeout = 10

[mcp_servers.docs]
url = "http://127.0.0.1:9999/mcp"
headers = { Authorization = "Bearer ${DOCS_TOKEN}" }

[mcp_servers.broken]
args = ["no command"]
"""

PROJECT_JSON = {
    "mcpServers": {
        "git": {"command": "uvx", "args": ["mcp-server-git", "--repository", "."], "env": {"GIT_PAGER": "cat"}},
        "remote": {"type": "http", "url": "https://example.invalid/mcp"},
        "time": {"command": "python3", "args": ["-m", "mcp_server_time"]},
    }
}


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    user = tmp_path / "config.toml"
    user.write_text(USER_TOML)
    project = tmp_path / "project"
    project.mkdir()
    (project / ".mcp.json").write_text(json.dumps(PROJECT_JSON))
    return user, project


def test_user_config_servers_and_their_problems(files) -> None:
    user, project = files
    config = load_mcp_config(project, user_config=user, environ={"DOCS_TOKEN": "t0k"})
    assert sorted(config.servers) == ["docs", "time"]  # .mcp.json is skipped: the project is not trusted
    time = config.servers["time"]
    assert time.command == "uvx" and time.args == ("mcp-server-time",) and time.allows("get_current_time") and not time.allows("convert_time")
    assert time.tool_timeout == 10
    assert config.servers["docs"].transport == "http" and config.servers["docs"].headers == {"Authorization": "Bearer t0k"}
    assert config.errors == [f"MCP server 'broken' in {user}: give either a command (stdio) or a url (streamable HTTP)"]
    assert config.skipped and "not trusted" in config.skipped[0]


def test_project_mcp_json_is_read_once_trusted(files) -> None:
    user, project = files
    trust_project(project)
    config = load_mcp_config(project, user_config=user, environ={"DOCS_TOKEN": "t"})
    assert sorted(config.servers) == ["docs", "git", "remote", "time"]
    assert config.servers["time"].command == "python3"  # the project's entry replaces the user's of that name
    assert config.servers["git"].env == {"GIT_PAGER": "cat"}
    assert config.servers["remote"].url == "https://example.invalid/mcp"


def test_mcp_config_flag_and_variable_rules(tmp_path: Path) -> None:
    extra = tmp_path / "servers.json"
    extra.write_text(json.dumps({"mcpServers": {
        "ok": {"command": "srv", "env": {"TOKEN": "${MY_TOKEN:-fallback}"}},
        "thief": {"command": "srv", "env": {"KEY": "${ANTHROPIC_API_KEY}"}},
        "unset": {"command": "srv", "args": ["${NOT_SET_ANYWHERE}"]},
        "sse": {"type": "sse", "url": "http://127.0.0.1/sse"},
        "bad name!": {"command": "srv"},
    }}))
    config = load_mcp_config(tmp_path, user_config=tmp_path / "none.toml", extra_file=extra, environ={"ANTHROPIC_API_KEY": "sk-ant-x"})
    assert list(config.servers) == ["ok"] and config.servers["ok"].env == {"TOKEN": "fallback"}
    joined = "\n".join(config.errors)
    assert "our provider key, which is never passed to a server" in joined
    assert "${NOT_SET_ANYWHERE}, which is not set" in joined
    assert "transport type 'sse' is not supported" in joined
    assert "may only use letters" in joined
    assert "sk-ant-x" not in joined


def test_registered_names_are_wire_safe() -> None:
    assert tool_name("time", "get_current_time") == "mcp__time__get_current_time"
    assert tool_name("my.srv", "do thing/now") == "mcp__my_srv__do_thing_now"
    assert len(tool_name("s" * 40, "t" * 80)) == 64


def test_result_shapes() -> None:
    result = types.CallToolResult(
        content=[
            types.TextContent(type="text", text="hello"),
            types.ImageContent(type="image", data="QUJD" * 1000, mimeType="image/png"),
            types.EmbeddedResource(type="resource", resource=types.BlobResourceContents(uri="file:///a.bin", blob="AAAA", mimeType="application/octet-stream")),
            types.EmbeddedResource(type="resource", resource=types.TextResourceContents(uri="file:///n.txt", text="notes", mimeType="text/plain")),
        ],
        structuredContent={"ignored": "because there is text"},
    )
    converted = to_task_result(result, "srv", "tool")
    assert converted["status"] == "success"
    assert converted["content"].splitlines() == [
        "hello",
        "[image image/png, 2.9 KB not shown]",
        "[resource file:///a.bin (application/octet-stream), 3 B not shown]",
        "[resource file:///n.txt (text/plain), 5 characters]",
        "notes",
    ]
    structured = to_task_result(types.CallToolResult(content=[], structuredContent={"a": 1}, isError=True), "srv", "tool")
    assert structured["status"] == "error" and json.loads(structured["content"]) == {"a": 1}


def test_untrusted_project_env_cannot_name_an_mcp_file(tmp_path: Path) -> None:
    from core.config import load_settings

    project = tmp_path / "p"
    project.mkdir()
    (project / ".env").write_text("ASSISTANT_TUI_MCP_CONFIG=servers.json\nASSISTANT_TUI_MCP_ALLOW_READ_ONLY=true\n")
    settings = load_settings(environ={}, project_root=project)
    assert settings.mcp_config == "" and settings.mcp_allow_read_only is False
    trust_project(project)
    settings = load_settings(environ={}, project_root=project)
    assert settings.mcp_config == "servers.json" and settings.mcp_allow_read_only is True


def test_a_server_config_holding_our_key_is_refused(tmp_path: Path) -> None:
    from core.mcp.config import refuse_secrets

    extra = tmp_path / "servers.json"
    extra.write_text(json.dumps({"mcpServers": {"leaky": {"command": "srv", "env": {"K": "sk-ant-pasted-0123456789"}}, "fine": {"command": "srv"}}}))
    config = load_mcp_config(tmp_path, user_config=tmp_path / "none.toml", extra_file=extra, environ={})
    refuse_secrets(config, ["sk-ant-pasted-0123456789"])
    assert list(config.servers) == ["fine"]
    assert "contains our provider API key" in config.errors[0] and "sk-ant" not in config.errors[0]
