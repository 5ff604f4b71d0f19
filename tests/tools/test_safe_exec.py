"""executeFilePathCommand: real commands in real git repositories, no mocks."""

from __future__ import annotations

import asyncio
import os
import shutil
import time
import tracemalloc
from pathlib import Path

import pytest

from core.approvals import Approvals
from core.tools.safe_exec import (
    MAX_CHECKED_LINES,
    child_env,
    execute_command_safely,
    find_paths_in_output,
    parse_file_paths_from_output,
    run_file_path_command,
    scrubbed_env,
)
from core.sandbox.preflight import SandboxStatus
from core.tools.find_sandbox import CHILD_PATH
from core.types import Decision, is_error
from tests.tools.support import (
    RecordingApprover,
    RepoCache,
    git,
    process_gone,
    stage_output,
    tool_sandbox,
    write_files,
)

ENV_CANARY = "sk-canary-env-value-0123456789"
UNSANDBOXED = SandboxStatus(available=False, problem="switched off by the test")


@pytest.fixture
def repo(tmp_path: Path, repo_cache: RepoCache) -> Path:
    return repo_cache.make(
        tmp_path / "proj",
        {
            "src/auth.py": "def login(user):\n    return authenticate(user)\n",
            "src/util.py": "def helper():\n    return 1\n",
            "docs/auth.md": "How auth works.\n",
            "README.md": "A project.\n",
            ".gitignore": ".env\nbuild/\n",
            ".env": f"API_KEY={ENV_CANARY}\n",
            "build/gen.py": "# generated, mentions authenticate\n",
        },
    )


def rel(paths: list[str], root: Path) -> list[str]:
    return [Path(p).relative_to(root.resolve()).as_posix() for p in paths]


async def find_paths(command: str, root: Path, **kwargs) -> list[str]:
    result = await run_file_path_command({"command": command}, project_root=root, **kwargs)
    assert not is_error(result), result["content"]
    return rel(result["metadata"]["paths"], root)


class TestAllowedCommands:
    async def test_find_lists_python_files(self, repo: Path) -> None:
        assert sorted(await find_paths("find . -name '*.py'", repo)) == ["build/gen.py", "src/auth.py", "src/util.py"]

    async def test_success_content_lists_relative_paths(self, repo: Path) -> None:
        result = await run_file_path_command({"command": "git ls-files '*.py'"}, project_root=repo)
        assert result["status"] == "success"
        assert result["content"].splitlines() == ["Found 2 path(s):", "src/auth.py", "src/util.py"]
        assert result["metadata"]["paths"] == [str(repo.resolve() / "src/auth.py"), str(repo.resolve() / "src/util.py")]

    async def test_git_grep_lists_tracked_matches_only(self, repo: Path) -> None:
        assert await find_paths("git grep -l authenticate", repo) == ["src/auth.py"]

    async def test_grep_recursive_list(self, repo: Path) -> None:
        assert sorted(await find_paths("grep -rl auth .", repo)) == ["build/gen.py", "docs/auth.md", "src/auth.py"]

    async def test_grep_never_searches_env_files(self, repo: Path) -> None:
        """grep -l must not become an oracle for the contents of .env."""
        assert await find_paths(f"grep -rl {ENV_CANARY[:12]} .", repo) == []
        result = await run_file_path_command({"command": f"grep -l {ENV_CANARY[:12]} .env"}, project_root=repo)
        assert is_error(result) and ".env" in result["content"]

    async def test_git_grep_never_searches_a_tracked_env_file(self, repo: Path) -> None:
        git(repo, "add", "-f", ".env")
        git(repo, "commit", "-q", "-m", "oops, committed the .env")
        needle = ENV_CANARY[:12]
        assert (repo / ".env").read_text().count(needle) == 1
        for command in (f"git grep -l {needle}", f"git grep -l {needle} .", f"git grep -l {needle} -- .",
                        f"git grep -l {needle} HEAD", f"git grep -l {needle} HEAD -- .", "git grep -L zzz"):
            result = await execute_command_safely(command, project_root=repo)
            if "HEAD" in command and result.status == "error":
                # Sandboxed, the history holding .env hides git's objects: said plainly, nothing of git's message shown.
                assert "history holds a secret file" in result.reason and result.stderr == "", (command, result)
            else:
                assert result.status == "success", (command, result.reason)
            assert ".env" not in result.stdout + result.reason, command
        # Control: the same search without the exclusions would have found it.
        assert ".env" in git(repo, "grep", "-l", needle)

    async def test_pipeline_between_allowed_programs(self, repo: Path) -> None:
        assert await find_paths("git ls-files | grep auth | sort -r | head -n 1", repo) == ["src/auth.py"]

    async def test_quoted_pipe_is_a_pattern_not_a_pipeline(self, repo: Path) -> None:
        assert sorted(await find_paths("grep -rlE 'helper|login' src", repo)) == ["src/auth.py", "src/util.py"]

    async def test_ls_of_a_directory_gives_paths_in_it(self, repo: Path) -> None:
        assert await find_paths("ls src", repo) == ["src/auth.py", "src/util.py"]

    async def test_no_match_is_not_an_error(self, repo: Path) -> None:
        result = await run_file_path_command({"command": "grep -rl no-such-text-anywhere src"}, project_root=repo)
        assert result["status"] == "success" and "no files" in result["content"]

    async def test_failing_command_reports_stderr(self, repo: Path) -> None:
        result = await run_file_path_command({"command": "ls missing-dir"}, project_root=repo)
        assert is_error(result) and "missing-dir" in result["content"]

    async def test_non_path_output_is_shown(self, repo: Path) -> None:
        result = await run_file_path_command({"command": "git ls-files | wc -l"}, project_root=repo)
        assert result["status"] == "success" and "printed no paths" in result["content"]
        assert result["content"].strip().endswith("5")

    async def test_long_non_path_output_says_how_much_was_cut(self, repo: Path) -> None:
        (repo / "notes.txt").write_text("word " * 1000)  # 5,000 characters, no paths
        result = await run_file_path_command({"command": "cat notes.txt"}, project_root=repo)
        assert result["status"] == "success" and "printed no paths" in result["content"]
        assert result["content"].rstrip().endswith("[... 2,999 more characters not shown]"), result["content"][-200:]

    async def test_bad_params(self, repo: Path) -> None:
        assert is_error(await run_file_path_command({}, project_root=repo))
        assert is_error(await run_file_path_command({"command": 42}, project_root=repo))

    @pytest.mark.skipif(shutil.which("rg") is None, reason="ripgrep not installed")
    async def test_rg_files_and_list(self, repo: Path) -> None:
        assert sorted(await find_paths("rg --files src", repo)) == ["src/auth.py", "src/util.py"]
        assert await find_paths(f"rg -l --hidden {ENV_CANARY[:12]}", repo) == []

    @pytest.mark.skipif(not (shutil.which("fd") or shutil.which("fdfind")), reason="fd not installed")
    async def test_fd(self, repo: Path) -> None:
        program = "fd" if shutil.which("fd") else "fdfind"
        assert "src/auth.py" in await find_paths(f"{program} auth", repo)

    async def test_missing_program_is_reported(self, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """Unsandboxed, programs come from PATH; sandboxed, from the system directories only."""
        monkeypatch.setenv("PATH", str(repo.parent / "empty-bin"))
        result = await execute_command_safely("find .", project_root=repo, sandbox=UNSANDBOXED)
        assert result.status == "error" and "not installed" in result.reason
        missing = next((p for p in ("rg", "fdfind", "fd") if not shutil.which(p, path=CHILD_PATH)), None)
        if missing is not None:
            result = await execute_command_safely(f"{missing} --help", project_root=repo, sandbox=tool_sandbox())
            assert result.status == "error" and "not installed (not found in the system directories" in result.reason


class TestProgramResolution:
    async def test_planted_program_in_the_project_is_never_run(self, repo: Path, monkeypatch) -> None:
        """A repository cannot shadow `find` through a relative or in-project PATH entry."""
        write_files(repo, {"bin/find": "#!/bin/sh\ntouch PLANTED\n"})
        (repo / "bin/find").chmod(0o755)
        monkeypatch.setenv("PATH", os.pathsep.join(["bin", str(repo / "bin"), os.environ["PATH"]]))
        result = await execute_command_safely("find . -name auth.py", project_root=repo)
        assert result.status == "success" and "auth.py" in result.stdout
        assert not (repo / "PLANTED").exists()

    async def test_hostile_git_config_cannot_run_fsmonitor(self, repo: Path) -> None:
        git(repo, "config", "core.fsmonitor", "touch FSMONITOR_RAN; echo")
        result = await execute_command_safely("git ls-files", project_root=repo)
        assert result.status == "success", result.reason
        assert not (repo / "FSMONITOR_RAN").exists()
        git(repo, "ls-files")  # the same command without our hardening does run it: the test can fail
        assert (repo / "FSMONITOR_RAN").exists()


class TestParseFilePaths:
    def test_keeps_existing_inside_drops_the_rest(self, repo: Path, tmp_path: Path) -> None:
        outside = tmp_path / "outside.txt"
        outside.write_text("x")
        (repo / "link_out").symlink_to(outside)
        (repo / "link_in").symlink_to(repo / "src/util.py")
        root = repo.resolve()
        output = "\n".join([
            "./src/auth.py", "src/auth.py", str(root / "src/auth.py"),  # the same file three ways
            "missing.py", str(outside), "/etc/passwd", "link_out", "~/x", "../proj/README.md", "",
            "  docs/auth.md  ", "link_in", ".",
        ])
        assert parse_file_paths_from_output(output, repo) == [
            str(root / "src/auth.py"), str(root / "README.md"), str(root / "docs/auth.md"), str(root / "src/util.py"),
        ]

    def test_nul_separated(self, repo: Path) -> None:
        assert rel(parse_file_paths_from_output("src/auth.py\0src/util.py\0", repo), repo) == [
            "src/auth.py", "src/util.py"]

    def test_sibling_with_shared_prefix_is_outside(self, repo: Path) -> None:
        evil = repo.parent / (repo.name + "-evil")
        evil.mkdir()
        (evil / "x.py").write_text("")
        assert parse_file_paths_from_output(str(evil / "x.py"), repo) == []

    def test_repeated_lines_are_looked_up_once_and_do_not_count_towards_the_cap(self, repo: Path) -> None:
        output = "src/auth.py\n" * 200_000 + "missing\n" * 1000 + "README.md\n"
        found = find_paths_in_output(output, repo, max_checked=3)
        assert rel(found.paths, repo) == ["src/auth.py", "README.md"] and found.unchecked_lines == 0

    def test_lines_past_the_cap_are_counted_not_checked(self, repo: Path) -> None:
        output = "\n".join(["src/auth.py", "a", "b", "README.md", "c", "src/auth.py", "docs/auth.md", "", "~/x"])
        found = find_paths_in_output(output, repo, max_checked=3)
        # checked: src/auth.py, a, b; not: README.md, c, docs/auth.md (a repeat of a checked line is not counted)
        assert rel(found.paths, repo) == ["src/auth.py"] and found.unchecked_lines == 3

    async def test_the_result_says_how_many_lines_were_not_checked(self, repo: Path) -> None:
        write_files(repo, {"many.txt": "".join(f"{n}\n" for n in range(1, MAX_CHECKED_LINES + 2501))})
        result = await run_file_path_command({"command": "cat many.txt"}, project_root=repo)
        assert result["status"] == "success" and result["metadata"]["unchecked_lines"] == 2500
        assert f"Only the first {MAX_CHECKED_LINES} distinct lines of output were checked" in result["content"]
        assert "2500 more were not" in result["content"]


LOG = "git log -1 --format=%s"
"""Allowlisted, read-only, and not plain file finding: it asks."""


class TestApproval:
    async def test_ask_shows_exact_argv_and_runs_once(self, repo: Path) -> None:
        approver = RecordingApprover(Decision.ALLOW_ONCE)
        approvals = Approvals(approver=approver)
        result = await execute_command_safely(LOG, project_root=repo, approvals=approvals, tool_call_id="call_1")
        assert result.status == "success" and result.stdout == "initial\n"
        [request] = approver.requests
        assert request.detail.startswith(f"{shutil.which('git')} ") and " log " in request.detail
        assert request.session_key == "git log" and request.tool_call.id == "call_1"
        assert request.tool_call.parameters == {"command": LOG}
        assert "not one of the read-only" in request.reason
        assert approvals.allowed == set()

    async def test_allow_session_is_remembered(self, repo: Path) -> None:
        approver = RecordingApprover(Decision.ALLOW_SESSION)
        approvals = Approvals(approver=approver)
        for _ in range(2):
            result = await execute_command_safely(LOG, project_root=repo, approvals=approvals)
            assert result.status == "success"
        assert len(approver.requests) == 1 and approvals.allowed == {"git log"}
        assert result.decision == "session"

    async def test_deny(self, repo: Path) -> None:
        approver = RecordingApprover(Decision.DENY)
        result = await execute_command_safely(LOG, project_root=repo, approve=approver)
        assert result.status == "refused" and "declined" in result.reason and result.stdout == ""

    async def test_modes(self, repo: Path) -> None:
        approver = RecordingApprover(Decision.ALLOW_ONCE)
        allow = await execute_command_safely(LOG, project_root=repo, approve=approver, approval_mode="allow")
        deny = await execute_command_safely(LOG, project_root=repo, approve=approver, approval_mode="deny")
        nobody = await execute_command_safely(LOG, project_root=repo)
        assert allow.status == "success" and allow.decision == "allow_mode"
        assert deny.status == "refused" and "'deny'" in deny.reason
        assert nobody.status == "refused" and "approval" in nobody.reason
        assert approver.requests == []

    async def test_allowlisted_commands_never_ask(self, repo: Path) -> None:
        approver = RecordingApprover(Decision.DENY)
        result = await execute_command_safely("git ls-files | head -1", project_root=repo, approve=approver,
                                              approval_mode="deny")
        assert result.status == "success" and approver.requests == []

    async def test_content_grep_runs_without_approval_with_file_names(self, repo: Path) -> None:
        """Issue 12: content searches run unasked; every line names its file (secret files are withheld)."""
        approver = RecordingApprover(Decision.DENY)
        result = await execute_command_safely("grep -r login src", project_root=repo, approve=approver)
        assert result.status == "success" and approver.requests == []
        assert result.stdout and all(line.startswith("src/") for line in result.stdout.splitlines())

    async def test_broken_approver_counts_as_deny(self, repo: Path) -> None:
        async def broken(request):
            raise RuntimeError("the screen went away")

        result = await execute_command_safely(LOG, project_root=repo, approve=broken)
        assert result.status == "refused"

    async def test_read_only_mode_ignores_an_earlier_always(self, repo: Path) -> None:
        """Issue 22: in approval mode deny, what the user allowed for the session earlier does not run."""
        approver = RecordingApprover(Decision.ALLOW_SESSION)
        approvals = Approvals(approver=approver)
        first = await execute_command_safely(LOG, project_root=repo, approvals=approvals)
        assert first.status == "success" and approvals.allowed == {"git log"}
        approvals.set_mode("deny")
        later = await execute_command_safely(LOG, project_root=repo, approvals=approvals)
        assert later.status == "refused" and later.stdout == "" and "'deny'" in later.reason


def running_with(marker: str) -> list[int]:
    """Pids of processes (anywhere on the machine) whose command line holds ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and entry.name != str(os.getpid()):
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


def wait_for_processes(marker: str, count: int, timeout: float = 10.0) -> list[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if len(pids := running_with(marker)) >= count:
            return pids
        time.sleep(0.02)
    raise AssertionError(f"{count} processes with {marker!r} never ran")


class TestProcessControl:
    """A pipeline that never ends (``tail -f`` into ``grep``): every process of it goes, sandbox included."""

    async def test_timeout_kills_the_whole_pipeline(self, repo: Path) -> None:
        write_files(repo, {"follow-timeout.txt": "x\n"})
        result = await execute_command_safely("tail -f follow-timeout.txt | grep -v follow-timeout.txt",
                                              project_root=repo, timeout=1.5)
        assert result.status == "timeout" and "1.5 s" in result.reason
        assert all(process_gone(pid) for pid in running_with("follow-timeout.txt"))

    async def test_cancellation_kills_the_pipeline_and_reraises(self, repo: Path) -> None:
        write_files(repo, {"follow-cancel.txt": "x\n"})
        task = asyncio.create_task(execute_command_safely("tail -f follow-cancel.txt | grep -v follow-cancel.txt",
                                                          project_root=repo, timeout=60))
        pids = await asyncio.to_thread(wait_for_processes, "follow-cancel.txt", 2)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert all(process_gone(pid) for pid in pids)
        assert all(process_gone(pid) for pid in running_with("follow-cancel.txt"))

    async def test_big_output_is_capped(self, repo: Path) -> None:
        """3 MB of output: the reader stops at the cap, kills the command, and memory stays bounded."""
        write_files(repo, {"big.txt": "y\n" * 1_500_000})
        tracemalloc.start()
        try:
            result = await execute_command_safely("cat big.txt", project_root=repo, max_output=1_000_000)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert result.status == "success" and result.truncated and "1000000 bytes" in result.reason
        assert 999_000 <= len(result.stdout) <= 1_000_000 and result.stdout.endswith("y\n")
        assert peak < 12_000_000, f"peak Python memory {peak} bytes"

    async def test_truncated_listing_drops_the_partial_line(self, repo: Path) -> None:
        """The cut falls inside "docs/auth.md"; "docs" exists, so a partial line would be a wrong path."""
        result = await run_file_path_command({"command": "git ls-files"}, project_root=repo, max_output=25)
        assert result["metadata"]["truncated"]
        assert rel(result["metadata"]["paths"], repo) == [".gitignore", "README.md"]


class TestEnvironment:
    async def test_child_environment_has_no_secrets(self, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """What a stage's program sees (printed by ``printenv`` run exactly as the tool runs its stages)."""
        monkeypatch.setenv("MY_SERVICE_API_KEY", "canary-one-111111")
        monkeypatch.setenv("GITHUB_TOKEN", "canary-two-222222")
        monkeypatch.setenv("AWS_PROFILE", "canary-three-333333")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://canary-four")
        monkeypatch.setenv("INNOCENT_NAME", "canary-five-555555")
        env = child_env(scrubbed_env(["canary-five-555555"]), repo)
        printed = await stage_output(["printenv"], repo, env)
        assert "canary" not in printed
        assert "PATH=" in printed and "HOME=/tmp/home" in printed and str(Path.home()) not in printed

    async def test_secrets_are_redacted_from_output(self, repo: Path) -> None:
        write_files(repo, {"notes.txt": "key is sk-redact-me-12345\n"})
        result = await execute_command_safely("cat notes.txt", project_root=repo, secrets=["sk-redact-me-12345"],
                                              approval_mode="allow")
        assert result.stdout == "key is [REDACTED]\n"

    def test_scrubbed_env_rules(self) -> None:
        env = scrubbed_env(["s3cr3t-value"], base={
            "PATH": "/bin", "HOME": "/h", "LANG": "C", "OPENAI_API_BASE": "x", "DB_PASSWORD": "p",
            "SOME_CREDENTIALS_FILE": "f", "X": "s3cr3t-value", "Y": "Bearer s3cr3t-value", "SSH_AUTH_SOCK": "/s",
            "GIT_AUTHOR_NAME": "me",
        })
        assert env == {"PATH": "/bin", "HOME": "/h", "LANG": "C", "GIT_AUTHOR_NAME": "me"}
