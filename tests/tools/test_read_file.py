"""readFile: real files in real git repositories (and outside git), no mocks."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.tools.files import MAX_READ_BYTES, is_git_ignored, is_secret_path, read_file_tool
from core.types import is_error
from tests.tools.support import RepoCache, git, write_files

PRIVATE_KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n"


@pytest.fixture
def repo(tmp_path: Path, repo_cache: RepoCache) -> Path:
    return repo_cache.make(
        tmp_path / "proj",
        {
            "src/app.py": "import os\n\ndef main():\n    return 42\n",
            ".gitignore": "*.log\nbuild/\n.env\n",
            ".env": "API_KEY=sk-env-canary\n",
            ".env.local": "TOKEN=sk-env-local-canary\n",
            "deploy/id_rsa": PRIVATE_KEY,
            "deploy/id_rsa.pub": "ssh-ed25519 AAAA test\n",
            "certs/server.pem": PRIVATE_KEY,
            "notes/innocent.txt": PRIVATE_KEY,
            "debug.log": "log line\n",
            "build/out.txt": "generated\n",
            "image.png": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
            "big.txt": "".join(f"line {n}\n" for n in range(1, 40_001)),
        },
    )


def read(root: Path, path: str, **params) -> dict:
    return read_file_tool({"path": path, **params}, project_root=root)


class TestReading:
    def test_whole_file_with_line_numbers(self, repo: Path) -> None:
        result = read(repo, "src/app.py")
        assert result["status"] == "success"
        assert result["content"].splitlines() == ["     1\timport os", "     2\t", "     3\tdef main():",
                                                  "     4\t    return 42"]
        assert result["metadata"]["total_lines"] == 4
        assert result["metadata"]["path"] == str((repo / "src/app.py").resolve())

    def test_absolute_path_inside_root(self, repo: Path) -> None:
        assert read(repo, str(repo / "src/app.py"))["status"] == "success"

    def test_line_range(self, repo: Path) -> None:
        result = read(repo, "src/app.py", start_line=3, end_line="4")
        assert result["content"].splitlines() == ["     3\tdef main():", "     4\t    return 42"]
        assert (result["metadata"]["start_line"], result["metadata"]["end_line"]) == (3, 4)

    def test_range_past_the_end(self, repo: Path) -> None:
        assert read(repo, "src/app.py", start_line=4, end_line=99)["content"] == "     4\t    return 42"
        assert "has no line 10" in read(repo, "src/app.py", start_line=10)["content"]

    def test_big_file_needs_a_range(self, repo: Path) -> None:
        assert (repo / "big.txt").stat().st_size > MAX_READ_BYTES
        whole = read(repo, "big.txt")
        assert is_error(whole) and "start_line" in whole["content"]
        part = read(repo, "big.txt", start_line=39_999, end_line=40_000)
        assert part["content"].splitlines() == [" 39999\tline 39999", " 40000\tline 40000"]

    def test_open_ended_range_is_capped(self, repo: Path) -> None:
        result = read(repo, "big.txt", start_line=1)
        assert result["metadata"]["truncated"] and "continue with start_line=" in result["content"]
        assert len(result["content"].encode()) < MAX_READ_BYTES * 2

    def test_one_huge_line_stays_bounded(self, repo: Path) -> None:
        write_files(repo, {"min.js": "x" * (3 * MAX_READ_BYTES) + "\nsecond\n"})
        result = read(repo, "min.js", start_line=1, end_line=2)
        assert result["metadata"]["truncated"]
        assert read(repo, "min.js", start_line=2, end_line=2)["content"] == "     2\tsecond"

    def test_empty_file(self, repo: Path) -> None:
        write_files(repo, {"empty.py": ""})
        assert read(repo, "empty.py")["content"] == "empty.py is empty."


class TestRefusals:
    @pytest.mark.parametrize("path, words", [
        (".env", "environment file"), (".env.local", "environment file"), ("deploy/id_rsa", "private key"),
        ("certs/server.pem", "*.pem"),
        ("notes/innocent.txt", "private key"), ("debug.log", "ignored by git"), ("build/out.txt", "ignored by git"),
        ("image.png", "binary"), (".git/config", "git's internal"), ("missing.py", "does not exist"),
        ("src", "directory"),
    ])
    def test_refused_with_reason(self, repo: Path, path: str, words: str) -> None:
        result = read(repo, path)
        assert is_error(result), result
        assert words in result["content"]
        assert "canary" not in result["content"] and "BEGIN" not in result["content"]

    def test_public_key_is_readable(self, repo: Path) -> None:
        assert read(repo, "deploy/id_rsa.pub")["status"] == "success"

    def test_an_ignored_file_in_the_context_may_be_read(self, repo: Path) -> None:
        result = read_file_tool({"path": "debug.log"}, project_root=repo, explicit_files={str(repo / "debug.log")})
        assert result["status"] == "success"

    @pytest.mark.parametrize("path", [".env", "deploy/id_rsa"])
    def test_a_secret_is_refused_even_in_the_context(self, repo: Path, path: str) -> None:
        # /add refuses secrets, so one in the context came from elsewhere (an old session): still never sent.
        result = read_file_tool({"path": path}, project_root=repo, explicit_files={str(repo / path)})
        assert is_error(result) and "never sent to the model" in result["content"] and "canary" not in result["content"]

    def test_outside_root_names_the_resolved_path(self, repo: Path, tmp_path: Path) -> None:
        (tmp_path / "secret.txt").write_text("outside")
        for raw in ("../secret.txt", str(tmp_path / "secret.txt")):
            result = read(repo, raw)
            assert is_error(result) and str((tmp_path / "secret.txt").resolve()) in result["content"]

    def test_explicit_does_not_unlock_outside(self, repo: Path, tmp_path: Path) -> None:
        (tmp_path / "secret.txt").write_text("outside")
        result = read_file_tool({"path": "../secret.txt"}, project_root=repo,
                                explicit_files={str(tmp_path / "secret.txt")})
        assert is_error(result)

    def test_symlink_out_and_home(self, repo: Path, isolated_env: Path) -> None:
        (isolated_env / ".ssh").mkdir()
        (isolated_env / ".ssh/id_rsa").write_text(PRIVATE_KEY)
        (repo / "home").symlink_to(isolated_env)
        via_link = read(repo, "home/.ssh/id_rsa")
        assert is_error(via_link) and "symbolic link" in via_link["content"]
        assert str(isolated_env.resolve() / ".ssh/id_rsa") in via_link["content"]
        tilde = read(repo, "~/.ssh/id_rsa")
        assert is_error(tilde) and str(isolated_env / ".ssh/id_rsa") in tilde["content"]

    def test_sibling_sharing_the_prefix(self, repo: Path) -> None:
        evil = repo.parent / (repo.name + "-evil")
        evil.mkdir()
        (evil / "x.txt").write_text("evil")
        result = read(repo, str(evil / "x.txt"))
        assert is_error(result) and str(evil / "x.txt") in result["content"]

    @pytest.mark.parametrize("params, words", [
        ({}, "'path'"), ({"path": ""}, "'path'"), ({"path": "src/app.py", "start_line": 0}, "start_line"),
        ({"path": "src/app.py", "start_line": 3, "end_line": 2}, "before"),
        ({"path": "src/app.py", "end_line": "two"}, "end_line"),
    ])
    def test_bad_params(self, repo: Path, params: dict, words: str) -> None:
        result = read_file_tool(params, project_root=repo)
        assert is_error(result) and words in result["content"]


class TestIgnoreRules:
    def test_tracked_file_matching_a_pattern_is_not_ignored(self, repo: Path) -> None:
        write_files(repo, {"keep.log": "tracked anyway\n"})
        git(repo, "add", "-f", "keep.log")
        assert not is_git_ignored((repo / "keep.log").resolve(), repo)
        assert is_git_ignored((repo / "debug.log").resolve(), repo)

    def test_without_git_the_gitignore_files_apply(self, tmp_path: Path) -> None:
        root = tmp_path / "plain"
        write_files(root, {".gitignore": "*.log\n", "sub/.gitignore": "local/\n", "a.log": "x",
                           "sub/local/f.txt": "x", "sub/f.txt": "x", "ok.txt": "x"})
        assert is_git_ignored((root / "a.log").resolve(), root)
        assert is_git_ignored((root / "sub/local/f.txt").resolve(), root)
        assert not is_git_ignored((root / "sub/f.txt").resolve(), root)
        assert is_error(read(root, "a.log")) and read(root, "ok.txt")["status"] == "success"


@pytest.mark.parametrize("path, secret", [
    (".env", True), ("config/.env.production", True), (".envrc", True), ("id_rsa", True), ("id_ed25519", True),
    ("id_github", True), ("keys/server.key", True), ("cert.p12", True), ("a/.ssh/config", True), (".netrc", True),
    ("id_rsa.pub", False), ("id_utils.py", False), ("environment.py", False), ("src/keys.py", False),
    ("README.md", False), ("monkey.txt", False),
])
def test_is_secret_path(path: str, secret: bool) -> None:
    reason = is_secret_path(path)
    assert (reason is not None) == secret, reason


async def _turn(app, query: str) -> str:
    """Run one user turn through the app's handler (as the TUI does) and return its final text."""
    import contextlib

    from core import events as ev

    async with contextlib.aclosing(app.handler.stream_query(query)) as events:
        async for event in events:
            if isinstance(event, (ev.TurnCompleted, ev.TurnFailed)):
                return event.result["content"]
    return ""


def _tool_result_texts(request) -> list[str]:
    """The tool results in the last user message of an Anthropic request, as the model receives them."""
    blocks = request.messages[-1]["content"]
    return [b["content"] if isinstance(b["content"], str) else "".join(p.get("text", "") for p in b["content"])
            for b in blocks if b.get("type") == "tool_result"]


class TestOneLimitThroughTheToolLoop:
    """A read longer than the limit reaches the model whole-lined with a hint, and the hint leads to the rest."""

    async def test_a_158_kb_file_is_read_in_two_steps_by_following_the_hint(self, tmp_path: Path, fake_llm) -> None:
        import re

        from core.app import Application
        from core.config import Settings
        from tests.fake_llm import Reply, Tool

        root = tmp_path / "proj"
        root.mkdir()
        lines = [f"row {n:05d} " + "x" * 60 for n in range(1, 2231)]
        (root / "data.txt").write_text("\n".join(lines) + "\n")
        assert 150_000 < (root / "data.txt").stat().st_size < 160_000
        app = Application(Settings(provider="anthropic", model="claude-test", anthropic_base_url=fake_llm.anthropic_url,
                                   anthropic_api_key="sk-ant-test", project_root=root, mcp_enabled=False, max_retries=0))

        def model(request) -> Reply:
            """Reads the file, then follows whatever continuation the last result names."""
            results = _tool_result_texts(request)
            if not results:
                return Reply(tools=[Tool("readFile", {"path": "data.txt"})])
            hint = re.search(r"continue with start_line=(\d+)\]$", results[-1])
            if hint:
                return Reply(tools=[Tool("readFile", {"path": "data.txt", "start_line": int(hint.group(1))})])
            return Reply(text="read it all")

        fake_llm.responder = model
        assert await _turn(app, "read data.txt") == "read it all"
        reads = [_tool_result_texts(r)[-1] for r in fake_llm.requests[1:]]
        assert len(reads) == 2, [r[-200:] for r in reads]
        first, rest = reads
        assert len(first) <= app.settings.max_tool_result_chars
        assert "[output truncated" not in first and re.search(r"after line \d+; continue with start_line=\d+\]$", first)
        body = first.rsplit("\n", 1)[0] + "\n" + rest
        assert [line.split("\t", 1)[1] for line in body.splitlines()] == lines

    async def test_a_lower_setting_is_the_reads_limit_too(self, tmp_path: Path, fake_llm) -> None:
        from core.app import Application
        from core.config import Settings
        from tests.fake_llm import Reply, Tool

        root = tmp_path / "proj"
        root.mkdir()
        (root / "data.txt").write_text("".join(f"line {n}\n" for n in range(1, 2001)))
        app = Application(Settings(provider="anthropic", model="claude-test", anthropic_base_url=fake_llm.anthropic_url,
                                   anthropic_api_key="sk-ant-test", project_root=root, mcp_enabled=False, max_retries=0,
                                   max_tool_result_chars=2_000))
        fake_llm.script(Reply(tools=[Tool("readFile", {"path": "data.txt", "start_line": 100})]), Reply(text="ok"))
        await _turn(app, "read")
        [sent] = _tool_result_texts(fake_llm.requests[1])
        assert len(sent) <= 2_000 and sent.startswith("   100\tline 100\n")
        assert "[output truncated" not in sent and "continue with start_line=" in sent


def test_a_line_longer_than_the_limit_is_shown_up_to_it_and_the_read_goes_on_after_it(tmp_path: Path) -> None:
    (tmp_path / "min.js").write_text("y" * 5_000 + "\nnext\n")
    cut = read_file_tool({"path": "min.js"}, project_root=tmp_path, max_chars=1_000)
    assert len(cut["content"]) <= 1_000 and cut["content"].startswith("     1\tyyy")
    assert cut["content"].endswith("line 1 is longer than that; continue with start_line=2]")
    assert cut["metadata"]["continue_line"] == 2
    assert read_file_tool({"path": "min.js", "start_line": 2}, project_root=tmp_path)["content"] == "     2\tnext"
