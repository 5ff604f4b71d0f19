"""The file-finding tool's sandbox and its environment-directory rules, through real commands."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from core.tools.find_sandbox import sandbox_prefix
from core.tools.safe_exec import execute_command_safely, run_file_path_command
from tests.tools.support import tool_sandbox, write_files

HOUR_AGO = time.time() - 3600


def settle(root: Path) -> None:
    """Every entry an hour old: the command line may be reused (nothing modified just now)."""
    for entry in [*root.rglob("*"), root]:
        os.utime(entry, (HOUR_AGO, HOUR_AGO), follow_symlinks=False)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    write_files(root, {"src/app.py": "def login(): ...\n", "src/lib/util.py": "x = 1\n", "README.md": "hi\n",
                       ".venv/lib/pkg/auth.py": "def login(): ...\n", "node_modules/m/i.js": "login\n",
                       "src/__pycache__/app.cpython-311.pyc": "login\n"})
    return root


async def listed(command: str, root: Path) -> list[str]:
    result = await run_file_path_command({"command": command}, project_root=root)
    assert result["status"] == "success", result["content"]
    return sorted(Path(p).relative_to(root.resolve()).as_posix() for p in result["metadata"]["paths"])


class TestReuse:
    async def test_a_secret_file_created_after_the_line_was_kept_is_masked(self, project: Path) -> None:
        """The kept command line is checked against the project: a new .env is masked at once."""
        status = tool_sandbox()
        settle(project)
        first = sandbox_prefix(status.bwrap, project)
        assert sandbox_prefix(status.bwrap, project) is first  # reused while nothing changed
        mtime = project.stat().st_mtime_ns
        write_files(project, {".env": "TOKEN=CANARY-NEW-ENV\n"})
        os.utime(project, ns=(mtime, mtime))  # as if in the same timestamp tick: the listing still tells
        settle(project / ".env")
        result = await execute_command_safely("ls -ln .env", project_root=project)
        assert result.stdout.startswith("----------"), result.stdout

    async def test_a_file_rewritten_to_hold_a_key_is_not_served_from_an_old_line(self, project: Path) -> None:
        status = tool_sandbox()
        settle(project)
        first = sandbox_prefix(status.bwrap, project)
        (project / "README.md").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nx\n-----END OPENSSH PRIVATE KEY-----\n")
        assert sandbox_prefix(status.bwrap, project) is not first

    async def test_recently_modified_projects_are_not_trusted(self, project: Path) -> None:
        status = tool_sandbox()
        first = sandbox_prefix(status.bwrap, project)  # just written: racy
        assert sandbox_prefix(status.bwrap, project) is not first


class TestEnvironmentDirectories:
    async def test_find_prunes_them_whatever_the_expression(self, project: Path) -> None:
        assert await listed("find . -name '*.py'", project) == ["src/app.py", "src/lib/util.py"]
        assert await listed("find . -name '*.py' -print0", project) == ["src/app.py", "src/lib/util.py"]
        assert await listed("find . -maxdepth 2 -type d", project) == ["src", "src/lib"]
        assert await listed("find . -path ./src/lib -prune -o -name '*.py' -print", project) == ["src/app.py"]
        assert await listed("find src -type f", project) == ["src/app.py", "src/lib/util.py"]

    async def test_named_directories_are_searched(self, project: Path) -> None:
        assert await listed("find .venv -name '*.py'", project) == [".venv/lib/pkg/auth.py"]
        assert await listed("find . -path '*node_modules*' -type f", project) == ["node_modules/m/i.js"]
        assert await listed("grep -rl login node_modules", project) == ["node_modules/m/i.js"]

    async def test_grep_leaves_them_out_and_says_so(self, project: Path) -> None:
        result = await run_file_path_command({"command": "grep -rl login ."}, project_root=project)
        assert [Path(p).name for p in result["metadata"]["paths"]] == ["app.py"]
        assert "Left out" in result["content"] and ".venv" in result["content"]
        assert "grep -rl PATTERN" in result["content"]

    async def test_counts_in_a_pipeline_leave_them_out_too(self, project: Path) -> None:
        result = await execute_command_safely("find . -type f | wc -l", project_root=project)
        assert result.stdout.strip() == "3" and "Left out" in result.reason
        assert "assistant-tui-skipped" not in result.stdout + result.stderr
