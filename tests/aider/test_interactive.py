"""Interactive aider: the command line, change detection, and a real session driven through a pseudo-terminal."""

from __future__ import annotations

import os
import pty
import sys
import threading
import time
from pathlib import Path

from core.config import Settings
from core.tools.aider_bridge import AiderBridge
from core.types import TaskResult, is_error
from tests.aider.conftest import whole_file_edit
from tests.fake_llm import FakeLLM, Reply

TYPED = "def add(a: int, b: int) -> int:\n    return a + b\n"


class Terminal:
    """A pseudo-terminal that answers like a patient user: Enter on questions, /exit once aider has edited."""

    def __init__(self, exit_after: bytes = b"Applied edit") -> None:
        self.master, self.slave = pty.openpty()
        self.output = bytearray()
        self.exit_after = exit_after
        self._exited = False
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                data = os.read(self.master, 4096)
            except OSError:
                return
            if not data:
                return
            self.output.extend(data)
            if b"\x1b[6n" in data:  # prompt_toolkit asks where the cursor is
                os.write(self.master, b"\x1b[1;1R")
            if b"[Yes]:" in data:  # aider's yes/no questions: take the default
                os.write(self.master, b"\r")
            if not self._exited and self.exit_after in self.output:
                self._exited = True
                threading.Timer(0.3, os.write, (self.master, b"/exit\r")).start()

    def close(self) -> str:
        os.close(self.slave)
        self._reader.join(timeout=5)
        os.close(self.master)
        return self.output.decode(errors="replace")


def test_command_line_runs_aiders_cli_with_the_model_files_and_query(aider_settings: Settings, git_repo: Path) -> None:
    bridge = AiderBridge(aider_settings)
    command = bridge.interactive_command("Refactor calc.py", [git_repo / "calc.py"])
    assert command[:2] == [sys.executable, "-c"]
    assert "aider.main import main" in command[2]
    args = command[3:]
    assert args[0] == "Refactor calc.py"
    assert args[args.index("--model") + 1] == "openai/fake-model"
    assert {"--no-auto-commits", "--no-analytics", "--no-check-update"} <= set(args)
    assert args[-2:] == ["--", str(git_repo / "calc.py")]
    committing = AiderBridge(Settings(**{**aider_settings.__dict__, "aider_auto_commit": True}))
    assert "--auto-commits" in committing.interactive_command("q", [])


def test_refuses_files_outside_the_project_without_starting_aider(aider_settings: Settings, git_repo: Path) -> None:
    result = AiderBridge(aider_settings).start_interactive_session("Refactor", ["/etc/passwd"], stdin=-1)
    assert is_error(result) and "outside the project" in result["content"]


def test_real_session_in_a_pseudo_terminal_sends_the_query_and_reports_the_edit(
    aider_settings: Settings, git_repo: Path, fake_llm: FakeLLM
) -> None:
    fake_llm.script(Reply(text=whole_file_edit("calc.py", TYPED)))
    terminal = Terminal()
    started = time.perf_counter()
    try:
        result: TaskResult = AiderBridge(aider_settings).start_interactive_session(
            "Add type hints", ["calc.py"], stdin=terminal.slave, stdout=terminal.slave, stderr=terminal.slave
        )
    finally:
        screen = terminal.close()
    elapsed = time.perf_counter() - started
    assert result["status"] == "success", (result, screen[-2000:])
    assert (git_repo / "calc.py").read_text() == TYPED
    assert result["metadata"]["edited_files"] == ["calc.py"]
    assert "+def add(a: int, b: int) -> int:" in result["metadata"]["diff"]
    assert "Add type hints" in screen and "Applied edit to calc.py" in screen
    # the query was aider's first message, sent to the configured endpoint
    assert fake_llm.requests and "Add type hints" in fake_llm.requests[0].last_user_text()
    assert fake_llm.requests[0].headers.get("authorization") == "Bearer sk-test-not-a-real-key"
    # aider's first-run question (add .aider* to .gitignore?) was answered with Enter: reported too
    assert result["metadata"]["other_changed_files"] == [".gitignore"]
    assert "Other files changed during the session: .gitignore" in result["content"]
    print(f"interactive session (start, one edit, exit): {elapsed:.1f}s")
