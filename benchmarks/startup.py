"""1. Time to prompt: process start to the focused prompt on screen, against a minimal Textual app."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import paths
from benchmarks.harness import BenchResult, Figure, at_most

TITLE = "Time to prompt"
METHOD = """\
The parent notes `time.time()` just before it starts a process; the child
(`benchmarks/startup_child.py`) writes `time.time()` at the first frame painted
while the prompt has focus, then exits. `app` is the real console entry point
(`tui.cli.main([])`: settings, logging, `make_app`, `run`) in a small git
project with a configured provider; the anchor is a minimal Textual app with a
Markdown and a focused Input. Both use Textual's headless driver at 120×40 and
convert that frame to escape codes as a terminal driver would. App and anchor
alternate, after one discarded warm-up run of each. Neither the settings nor the
engine are loaded before the app's first frame. A diagnostic row launches the same
app through `tui.cli.launch`, without the command line's argument parsing and log
set-up: the difference is the command line's share.
The MCP row starts the same `app` with three MCP servers configured in its
config.toml (mcp-server-time twice and mcp-server-git, run by this Python), against
the `app` runs without them: the servers start after the first frame, so the
ratio should stay at 1 within noise."""

MCP_CONFIG = """\
[mcp_servers.time]
command = "{python}"
args = ["-m", "mcp_server_time", "--local-timezone", "UTC"]

[mcp_servers.clock]
command = "{python}"
args = ["-m", "mcp_server_time", "--local-timezone", "UTC"]

[mcp_servers.git]
command = "{python}"
args = ["-m", "mcp_server_git", "--repository", "{project}"]
"""


def _mcp_home(root: Path, project: Path) -> Path:
    """A home whose config.toml configures three MCP servers."""
    config = root / ".config" / "assistant-tui" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(MCP_CONFIG.format(python=sys.executable, project=project), encoding="utf-8")
    return root


def _project(root: Path) -> None:
    (root / "src").mkdir(parents=True)
    for index in range(20):
        (root / "src" / f"module_{index}.py").write_text(f"VALUE = {index}\n", encoding="utf-8")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)


def time_to_prompt(kind: str, project: Path, home: Path) -> tuple[float, list[str]]:
    """Seconds from process start to the focused prompt on screen, and the heavy modules imported by then."""
    ready_file = home / f"ready-{kind}.json"  # a separate home per configuration (the MCP one has its config.toml)
    ready_file.unlink(missing_ok=True)
    env = paths.isolated_environment(
        home,
        {
            "TEXTUAL_DRIVER": "textual.drivers.headless_driver:HeadlessDriver",
            "COLUMNS": "120",
            "LINES": "40",
            "ANTHROPIC_API_KEY": "sk-ant-bench-not-a-real-key",
            "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",
        },
    )
    script = str(paths.REPO / "benchmarks" / "startup_child.py")
    started = time.time()
    done = subprocess.run([sys.executable, script, kind, str(ready_file)], cwd=project, env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    if not ready_file.exists():
        raise RuntimeError(f"the {kind} never showed a focused prompt (exit {done.returncode}): {done.stderr.strip()[-1500:]}")
    data = json.loads(ready_file.read_text(encoding="utf-8"))
    return data["ready"] - started, data["imported"]


def run(quick: bool = False) -> BenchResult:
    repeats = 1 if quick else 9
    result = BenchResult("startup", TITLE, parameters={"repeats": repeats, "size": "120x40"})
    with tempfile.TemporaryDirectory(prefix="atui-startup-") as tmp:
        project, home = Path(tmp) / "project", Path(tmp) / "home"
        home.mkdir()
        _project(project)
        mcp_home = _mcp_home(Path(tmp) / "home-mcp", project)
        if not quick:
            time_to_prompt("app", project, home)
            time_to_prompt("anchor", project, home)
        app_times: list[float] = []
        ui_times: list[float] = []
        anchor_times: list[float] = []
        mcp_times: list[float] = []
        imported: list[str] = []
        for _ in range(repeats):
            seconds, imported = time_to_prompt("app", project, home)
            app_times.append(seconds * 1000)
            anchor_times.append(time_to_prompt("anchor", project, home)[0] * 1000)
            ui_times.append(time_to_prompt("ui", project, home)[0] * 1000)
            mcp_times.append(time_to_prompt("app", project, mcp_home)[0] * 1000)
    anchor = "minimal Textual app (Markdown + Input)"
    result.add(Figure("process start → focused prompt", "ms", app_times, anchor_times, anchor, at_most(1.25, of="ratio")))  # issue 23 (was 1.4)
    result.add(Figure("  diagnostic: same app without the command line's parsing and log set-up", "ms", ui_times, anchor_times, anchor))
    result.add(Figure("process start → focused prompt, 3 MCP servers configured", "ms", mcp_times, app_times, "the same app without MCP servers", at_most(1.2, of="ratio")))
    result.notes.append(
        "Heavy modules imported before the first frame: " + (", ".join(imported) if imported else "none (SDKs and aider load later)") + "."
    )
    return result
