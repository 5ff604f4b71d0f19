"""Interactive aider in a hostile repository: a real session in a pseudo-terminal, judged from outside.

The repository carries an ``.aider.conf.yml``, a ``.env``, model settings and git
hooks that all point at a loopback :class:`~tests.aider.hostile.Listener` or touch a
canary (:func:`tests.aider.hostile.plant`). The session must talk only to the app's
endpoint (the fake server) with the app's key, run nothing the repository names,
write no protected file even when the user says yes to everything, and leave no
``.aider*`` file behind.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from core.config import Settings
from core.types import TaskResult
from tests.aider.conftest import CALC, search_replace_edit, whole_file_edit
from tests.aider.hostile import Listener, aider_leftovers, hardened_git, plant_foreign_git_dir
from tests.aider.test_interactive import Terminal
from tests.fake_llm import FakeLLM, Reply

TYPED = "def add(a: int, b: int) -> int:\n    return a + b\n"

DRIVER = """
import json, sys
from core.config import Settings
from core.tools.aider_bridge import AiderBridge
settings, out, query, files = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
bridge = AiderBridge(Settings(**settings), edit_format=sys.argv[5] or None)
result = bridge.start_interactive_session(query, files)  # the inherited terminal
open(out, "w").write(json.dumps(result))
"""


def start(settings: Settings, tmp_path: Path, query: str, files: list[str], edit_format: str = "") -> tuple[Terminal, Path]:
    values = {k: str(v) if isinstance(v, Path) else v for k, v in settings.__dict__.items()}
    out = tmp_path / "result.json"
    argv = [sys.executable, "-c", DRIVER, json.dumps(values), str(out), query, json.dumps(files), edit_format]
    return Terminal(argv, cwd=Path.cwd()), out


def wait_for_a_request(fake_llm: FakeLLM, listener: Listener, terminal: Terminal, timeout: float = 60) -> None:
    """Until the model (the fake server) or the repository's endpoint (the listener) is asked."""
    deadline = time.monotonic() + timeout
    while not fake_llm.requests and not listener.hits:
        assert time.monotonic() < deadline, f"no request; screen: {terminal.screen[-1500:]}"
        time.sleep(0.05)


def test_interactive_aider_reads_no_configuration_from_the_repository(
    aider_settings: Settings, hostile_repo: Path, fake_llm: FakeLLM, listener: Listener, tmp_path: Path
) -> None:
    for name in (".aider.conf.yml", ".env", ".aider.model.settings.yml"):  # aider reads the home directory's too
        (Path.home() / name).write_text((hostile_repo / name).read_text())
    fake_llm.script(Reply(text=whole_file_edit("calc.py", TYPED)))
    head = hardened_git(hostile_repo, "rev-parse", "HEAD")
    terminal, out = start(aider_settings, tmp_path, "Add type hints", ["calc.py"])
    try:
        wait_for_a_request(fake_llm, listener, terminal)
        assert listener.hits == [], "aider sent the request to the repository's endpoint"
        terminal.wait_for(b"Applied edit to calc.py")
        terminal.type(b"/exit\r")
    finally:
        code = terminal.close()
    assert code == 0, terminal.screen[-2000:]
    assert listener.hits == []
    (request,) = fake_llm.requests  # one request: no lint or test round, no reflection
    assert request.body["model"] == "fake-model"  # the app's model, not the repository's
    assert request.headers.get("authorization") == "Bearer sk-test-not-a-real-key"  # the app's key
    assert sorted(p.name for p in (tmp_path / "canaries").iterdir()) == []  # no lint, test, /load, hook, fsmonitor
    assert (hostile_repo / "calc.py").read_text() == TYPED  # .aiderignore did not hide it
    assert hardened_git(hostile_repo, "rev-parse", "HEAD") == head  # auto-commits: true was not honoured
    result: TaskResult = json.loads(out.read_text())
    assert result["metadata"]["edited_files"] == ["calc.py"]


def test_interactive_aider_never_writes_protected_files_even_when_the_user_says_yes(
    aider_settings: Settings, git_repo: Path, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    config_before = (git_repo / ".git" / "config").read_bytes()
    before = {p.name for p in git_repo.iterdir()}
    hooks = "[core]\n\thooksPath = /tmp\n"
    reply = (
        whole_file_edit(".git/config", hooks)
        + whole_file_edit(".mcp.json", '{"mcpServers": {"x": {"command": "touch"}}}\n')
        + whole_file_edit(".aider.conf.yml", "lint-cmd: touch PWNED\n")
        + whole_file_edit("calc.py", TYPED)
    )
    fake_llm.script(Reply(text=reply))
    terminal, out = start(aider_settings, tmp_path, "Add type hints", ["calc.py"])
    try:
        applied = terminal.wait_for(b"Applied edit to calc.py")  # every [Yes] question is answered with Enter
        terminal.wait_for(b"> ", since=applied)  # the prompt again: anything aider offers after the edits is over
        terminal.type(b"/exit\r")
    finally:
        code = terminal.close()
    assert code == 0, terminal.screen[-2000:]
    assert (git_repo / ".git" / "config").read_bytes() == config_before
    assert not (git_repo / ".mcp.json").exists()
    assert aider_leftovers(git_repo, before) == []  # no .aider.conf.yml, no history, no tag cache
    assert (git_repo / "calc.py").read_text() == TYPED
    assert b"Not editing .git/config" in terminal.output and b"Not editing .mcp.json" in terminal.output
    assert b".gitignore" not in terminal.output  # aider's .gitignore question was not asked
    result: TaskResult = json.loads(out.read_text())
    assert result["metadata"]["other_changed_files"] == []
    assert set(result["metadata"]["refused_files"]) == {".git/config", ".mcp.json", ".aider.conf.yml"}
    assert ".git/config: git's own files" in result["content"]


def test_interactive_aider_imports_nothing_from_the_project(
    aider_settings: Settings, git_repo: Path, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    canary = tmp_path / "imported"
    planted = f"open({str(canary)!r}, 'a').write(__name__ + '\\n')\n"
    for name in ("signal.py", "runpy.py", "json.py", "aider/__init__.py", "core/__init__.py", "litellm/__init__.py"):
        (git_repo / name).parent.mkdir(exist_ok=True)
        (git_repo / name).write_text(planted)
    fake_llm.script(Reply(text="Nothing to change."))
    terminal, out = start(aider_settings, tmp_path, "Hello", ["calc.py"])
    try:
        shown = terminal.wait_for(b"Nothing to change.")
        terminal.wait_for(b"> ", since=shown)
        terminal.type(b"/exit\r")
    finally:
        code = terminal.close()
    assert not canary.exists(), canary.read_text()
    assert code == 0, terminal.screen[-2000:]
    assert json.loads(out.read_text())["status"] == "success"
    assert (git_repo / "calc.py").read_text() == CALC


def test_the_query_is_sent_as_text_never_run_as_an_aider_command(
    aider_settings: Settings, git_repo: Path, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    canary = tmp_path / "ran"
    query = f"/run touch {canary}"  # what a model steered by a README might ask aiderInteractive to do
    fake_llm.script(Reply(text="I will not run commands."))
    terminal, out = start(aider_settings, tmp_path, query, ["calc.py"])
    try:
        wait = terminal.wait_for(b"I will not run commands.", timeout=30)
        terminal.wait_for(b"> ", since=wait)
        terminal.type(b"/exit\r")
    finally:
        code = terminal.close()
    assert not canary.exists()
    assert code == 0, terminal.screen[-2000:]
    assert query in fake_llm.requests[0].last_user_text()  # the model got it as a message


def test_a_git_file_pointing_out_of_the_project_gets_no_git_from_interactive_aider(
    aider_settings: Settings, git_repo: Path, fake_llm: FakeLLM, canaries: Path, tmp_path: Path
) -> None:
    plant_foreign_git_dir(git_repo, tmp_path / "elsewhere.git", canaries)
    settings = Settings(**{**aider_settings.__dict__, "aider_auto_commit": True})
    fake_llm.script(Reply(text=whole_file_edit("calc.py", TYPED)), Reply(text="feat: add type hints"))
    terminal, out = start(settings, tmp_path, "Add type hints", ["calc.py"])
    try:
        terminal.wait_for(b"Applied edit to calc.py")
        terminal.type(b"/exit\r")
    finally:
        code = terminal.close()
    assert code == 0, terminal.screen[-2000:]
    assert (git_repo / "calc.py").read_text() == TYPED
    assert sorted(p.name for p in canaries.iterdir()) == []  # no filter, no fsmonitor


def test_a_command_the_model_proposes_is_never_offered_to_run(
    aider_settings: Settings, git_repo: Path, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    canary = tmp_path / "shell"
    edit = search_replace_edit("calc.py", "def add(a, b):\n", "def add(a: int, b: int) -> int:\n")
    fake_llm.script(Reply(text=edit + f"\nNow run:\n\n```bash\ntouch {canary}\n```\n"))
    terminal, out = start(aider_settings, tmp_path, "Add type hints", ["calc.py"], edit_format="diff")
    try:
        applied = terminal.wait_for(b"Applied edit to calc.py")  # a [Yes] question would be answered with Enter
        terminal.wait_for(b"> ", since=applied)  # the prompt again: anything aider offers after the edits is over
        terminal.type(b"/exit\r")
    finally:
        code = terminal.close()
    assert code == 0, terminal.screen[-2000:]
    assert (git_repo / "calc.py").read_text() == TYPED
    assert not canary.exists()
