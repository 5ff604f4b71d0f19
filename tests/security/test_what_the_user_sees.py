"""Issue 22 section 6: what the user is shown, and what stays on disk.

- An approval shows invisible and bidirectional characters as visible escapes: a
  Trojan Source command line (U+202E reverses what follows), a zero-width space inside
  a program name, ASCII smuggled in tag characters. Judged on the screen's rendered
  text (what the terminal would draw), not on what the app says it did.
- The log, transcripts and state directories are private (0600 files, 0700 dirs), and
  no write follows a symlink planted where the app's own files go.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from core.config import Settings
from core.text import visible_text
from tests.fake_llm import FakeLLM, Reply, Tool

RLO, ZWSP, TAG_A = "\u202e", "\u200b", "\U000e0041"
INVISIBLE = (RLO, ZWSP, TAG_A, "\u2066", "\u2069", "\ufeff", "\u200d", "\u061c")


@pytest.mark.parametrize("char", INVISIBLE)
def test_every_invisible_character_becomes_a_visible_escape(char: str) -> None:
    shown = visible_text(f"rm -rf build{char}/ notes")
    assert char not in shown
    assert f"<U+{ord(char):04X}>" in shown


def test_ordinary_text_is_unchanged() -> None:
    text = "git grep -l 'ñandú' -- src/ # été \t tab\nnew line"
    assert visible_text(text) == text


def screen_text(app: object) -> str:
    """The plain text of every strip the screens would write to the terminal."""
    lines = []
    for screen in app.screen_stack:  # type: ignore[attr-defined]
        update = screen._compositor.render_update(full=True)
        lines += ["".join(strip.text for strip in line) for line in update.strips]
    return "\n".join(lines)


async def test_an_approval_shows_hidden_characters(fake_llm: FakeLLM, tmp_path: Path) -> None:
    from tests.tui.conftest import FixedClock, finish_turn, refreshed, send, wait_for
    from tui.app import make_app
    from tui.screens.approval import ApprovalScreen

    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.txt").write_text("hello\n")
    instruction = f"tidy notes.txt{RLO}txt.exe{ZWSP} and{TAG_A}"
    settings = Settings(project_root=project, anthropic_base_url=fake_llm.anthropic_url,
                        anthropic_api_key="sk-ant-test-not-a-real-key", max_retries=0)
    app = make_app(settings, clock=FixedClock())
    fake_llm.script(
        Reply(text="Editing.", tools=[Tool("aiderAutomatic", {"prompt": instruction, "file_context": ["notes.txt"]})]),
        Reply(text="Done."),
    )
    async with app.run_test(size=(80, 24)) as pilot:
        await send(pilot, "tidy the notes")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        await refreshed(pilot)
        shown = screen_text(app)
        await pilot.press("n")
        await finish_turn(pilot)
    assert "<U+202E>" in shown and "<U+200B>" in shown and "<U+E0041>" in shown, shown
    assert not [line for line in shown.splitlines() if any(c in line for c in INVISIBLE)]
    assert (project / "notes.txt").read_text() == "hello\n", "denied: nothing changed"


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_log_is_private_and_never_follows_a_planted_symlink(tmp_path: Path) -> None:
    from core.logging_setup import setup_logging

    victim = tmp_path / "victim.txt"
    victim.write_text("untouched\n")
    state = tmp_path / "state"
    log_path = state / "assistant-tui.log"
    state.mkdir(mode=0o755)
    os.symlink(victim, log_path)
    used = setup_logging(log_path=log_path)
    import logging

    logging.getLogger("probe").warning("a line for the log")
    for handler in logging.getLogger().handlers:
        handler.flush()
    assert victim.read_text() == "untouched\n", "the log wrote through the planted symlink"
    assert used.is_file() and not used.is_symlink()
    assert "a line for the log" in used.read_text()
    assert _mode(used) == 0o600
    assert _mode(used.parent) == 0o700


def test_the_app_directories_are_private(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from core import paths

    os.umask(0o022)
    for directory in (paths.private_dir(paths.state_dir()), paths.private_dir(paths.data_dir() / "sessions"),
                      paths.private_dir(paths.config_dir())):
        assert _mode(directory) == 0o700, directory
    assert _mode(paths.data_dir()) == 0o700, "the app's own parent directory is private too"


def test_a_transcript_is_private_and_never_written_through_a_symlink(tmp_path: Path) -> None:
    from core.sessions import SessionStore, SessionWriteError

    store = SessionStore(tmp_path / "sessions")
    project = tmp_path / "project"
    project.mkdir()
    session = store.create(project)
    session.path.parent.mkdir(parents=True, exist_ok=True)
    victim = tmp_path / "victim.txt"
    victim.write_text("untouched\n")
    os.symlink(victim, session.path)
    writer = store.writer(session)
    with pytest.raises(SessionWriteError):
        writer.user("hello")
    assert victim.read_text() == "untouched\n", "the transcript was written through the planted symlink"
    os.unlink(session.path)
    writer.flush_pending()
    writer.close()
    assert _mode(session.path) == 0o600
    assert "hello" in session.path.read_text(), "kept in memory, written once the path was safe"


def test_headless_notices_never_carry_raw_escapes(fake_llm: FakeLLM, tmp_path: Path) -> None:
    """An MCP server that fails at start with escapes and a bidi override on its stderr: ``-p``
    reports the failure on stderr with the escapes shown as symbols and the override removed."""
    import json
    import re
    import sys

    from tests.core.test_cli import run_cli

    project = tmp_path / "proj"
    project.mkdir()
    noise = "\\x1b]52;c;cm0gLXJmIH4K\\x07 \\x1b[2J \\u202eevil\\u2066 \\x9b31m"
    servers = tmp_path / "servers.json"
    servers.write_text(json.dumps({"mcpServers": {"loud": {
        "command": sys.executable, "args": ["-c", f"import sys; sys.stderr.write('{noise}\\\\n'); sys.exit(3)"]}}}))
    fake_llm.script(Reply(text="fine"))
    out = run_cli(["-p", "hello", "--mcp-config", str(servers)], project)
    assert out.returncode == 0, out.stderr
    assert "MCP server loud failed" in out.stderr
    assert re.findall(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", out.stderr) == []
    assert "\u202e" not in out.stderr and "\u2066" not in out.stderr
    assert "␛]52" in out.stderr, "the escape is shown, not dropped"


async def test_file_finding_is_refused_in_a_home_root(isolated_env: Path) -> None:
    """Issue 22 s1: a project root that is the home directory (or holds it) is refused for the
    file-finding tool too, not only for runCommand: nothing under HOME is listed."""
    from core.tools.safe_exec import execute_command_safely

    canary = isolated_env / "private-notes-CANARY-HOMEROOT.txt"
    canary.write_text("x\n")
    for root in (isolated_env, isolated_env.parent):
        result = await execute_command_safely("find . -name '*CANARY*'", project_root=root, approval_mode="allow")
        assert result.status == "refused" and "home directory" in result.reason, result
        assert "CANARY" not in (result.stdout or "")


def test_only_the_apps_own_directory_is_made_private(tmp_path: Path) -> None:
    """A directory higher up that happens to share the app's name (a clone of this repository) keeps its mode."""
    from core import paths

    clone = tmp_path / "assistant-tui"
    clone.mkdir(mode=0o755)
    os.chmod(clone, 0o755)
    made = paths.private_dir(clone / "xdg" / "assistant-tui" / "sessions")
    assert _mode(clone) == 0o755
    assert _mode(made) == 0o700 and _mode(made.parent) == 0o700
