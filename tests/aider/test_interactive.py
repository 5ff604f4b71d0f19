"""Interactive aider: the command line, change detection, and a real session driven through a pseudo-terminal."""

from __future__ import annotations

import json
import os
import pty
import signal
import sys
import threading
import time
from pathlib import Path

from core.config import Settings
from core.tools.aider_bridge import AiderBridge
from core.tools.aider_guard import aider_state_dir
from core.types import TaskResult, is_error
from tests.aider.conftest import whole_file_edit
from tests.fake_llm import FakeLLM, Reply, Request

TYPED = "def add(a: int, b: int) -> int:\n    return a + b\n"


DRIVER = """
import json, sys
from core.config import Settings
from core.tools.aider_bridge import AiderBridge
from core.tools.aider_guard import aider_state_dir
settings, out = json.loads(sys.argv[1]), sys.argv[2]
bridge = AiderBridge(Settings(**settings))
result = bridge.start_interactive_session("Add type hints", ["calc.py"])  # the inherited terminal
open(out, "w").write(json.dumps(result))
"""


class Terminal:
    """A process whose controlling terminal is a pseudo-terminal, and a patient user typing into it."""

    def __init__(self, argv: list[str], cwd: Path) -> None:
        self.pid, self.master = pty.fork()
        if self.pid == 0:  # the child: the pty is its controlling terminal and stdio
            os.chdir(cwd)
            os.execv(argv[0], argv)
        self.output = bytearray()
        self.typed: list[bytes] = []
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
                self.type(b"\x1b[1;1R")
            if b"[Yes]:" in data:  # aider's yes/no questions: take the default
                self.type(b"\r")

    def type(self, keys: bytes) -> None:
        self.typed.append(keys)
        os.write(self.master, keys)

    def wait_for(self, text: bytes, timeout: float = 60, since: int = 0) -> int:
        """Wait until ``text`` appears after offset ``since``; returns the offset just past it."""
        deadline = time.monotonic() + timeout
        while (found := self.output.find(text, since)) < 0:
            assert time.monotonic() < deadline, f"never saw {text!r}; screen: {self.screen[-1500:]}"
            time.sleep(0.05)
        return found + len(text)

    @property
    def screen(self) -> str:
        return self.output.decode(errors="replace")

    def close(self, timeout: float = 20) -> int:
        deadline = time.monotonic() + timeout
        while (done := os.waitpid(self.pid, os.WNOHANG))[0] == 0:
            if time.monotonic() > deadline:
                os.kill(self.pid, signal.SIGKILL)  # its aider child dies with the terminal
                done = os.waitpid(self.pid, 0)
                break
            time.sleep(0.05)
        status = done[1]
        self._reader.join(timeout=5)
        os.close(self.master)
        return os.waitstatus_to_exitcode(status)


def test_command_line_runs_aiders_cli_with_the_model_files_and_query(aider_settings: Settings, git_repo: Path) -> None:
    bridge = AiderBridge(aider_settings)
    command = bridge.interactive_command("Refactor calc.py", [git_repo / "calc.py"])
    assert command[:3] == [sys.executable, "-P", "-c"]  # -P: nothing imported from the project directory
    assert "core.tools.aider_child" in command[3]
    args = command[6:]
    assert command[5] == str(aider_state_dir(git_repo)) and args[0] == "Refactor calc.py"
    assert args[args.index("--model") + 1] == "openai/fake-model"
    assert {"--no-auto-commits", "--no-analytics", "--no-check-update"} <= set(args)
    assert args[-2:] == ["--", str(git_repo / "calc.py")]
    committing = AiderBridge(Settings(**{**aider_settings.__dict__, "aider_auto_commit": True}))
    assert "--auto-commits" in committing.interactive_command("q", [])


def test_refuses_files_outside_the_project_without_starting_aider(aider_settings: Settings, git_repo: Path) -> None:
    result = AiderBridge(aider_settings).start_interactive_session("Refactor", ["/etc/passwd"], stdin=-1)
    assert is_error(result) and "outside the project" in result["content"]


def test_real_session_in_a_terminal_survives_ctrl_c_and_reports_the_edit(
    aider_settings: Settings, git_repo: Path, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    interrupted_seen = threading.Event()

    def model(request: Request) -> Reply:
        if len(fake_llm.requests) == 1:  # the user presses Ctrl-C while aider waits for this one: answered only after
            interrupted_seen.wait(timeout=120)  # a hang guard far above need
        return Reply(text=whole_file_edit("calc.py", TYPED))

    fake_llm.responder = model
    settings = {k: str(v) if isinstance(v, Path) else v for k, v in aider_settings.__dict__.items()}
    out = tmp_path / "result.json"
    started = time.perf_counter()
    terminal = Terminal([sys.executable, "-c", DRIVER, json.dumps(settings), str(out)], cwd=Path.cwd())
    try:
        terminal.wait_for(b"Add type hints")  # the query went in as aider's first message
        deadline = time.monotonic() + 60
        while not fake_llm.requests:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        time.sleep(0.3)
        terminal.type(b"\x03")  # SIGINT: must reach aider only, not the process that started it
        interrupted = terminal.wait_for(b"^C again to exit")  # aider's own reaction to Ctrl-C
        interrupted_seen.set()
        terminal.wait_for(b"> ", since=interrupted)
        terminal.type(b"Add type hints\r")
        terminal.wait_for(b"Applied edit to calc.py")
        terminal.type(b"/exit\r")
    finally:
        interrupted_seen.set()
        code = terminal.close()
    elapsed = time.perf_counter() - started
    assert code == 0, terminal.screen[-2000:]
    result: TaskResult = json.loads(out.read_text())
    assert result["status"] == "success", result
    assert (git_repo / "calc.py").read_text() == TYPED
    assert result["metadata"]["edited_files"] == ["calc.py"]
    assert "+def add(a: int, b: int) -> int:" in result["metadata"]["diff"]
    assert len(fake_llm.requests) == 2 and "Add type hints" in fake_llm.requests[0].last_user_text()
    assert fake_llm.requests[0].headers.get("authorization") == "Bearer sk-test-not-a-real-key"
    # aider asked nothing about .gitignore and left no file of its own in the project: its history is in the state dir
    assert b".gitignore" not in terminal.output and b"(Y)es/(N)o" not in terminal.output  # nothing asked
    assert result["metadata"]["other_changed_files"] == []
    assert not [p.name for p in git_repo.iterdir() if p.name.startswith(".aider")]
    state = aider_state_dir(git_repo)
    assert "Add type hints" in (state / "chat.history.md").read_text()
    assert (state / "input.history").is_file() and list(state.glob("tags.cache.v*"))  # the repo map's cache too
    print(f"interactive session (start, ^C, one edit, exit): {elapsed:.1f}s")
