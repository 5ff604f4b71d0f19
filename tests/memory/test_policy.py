"""The one file policy (core.memory.policy): the same size, binary, secret and ignore rule on every path to the model."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.config import Settings
from core.handlers.passthrough import PassthroughHandler
from core.globs import glob_match
from core.memory.policy import MAX_FILE_BYTES, FilePolicy
from core.memory.system import MemorySystem
from core.providers.anthropic import ClaudeProvider
from core.tools.files import read_file_tool
from core.types import is_error
from tests.memory.conftest import git, write_tree
from core.file_context import plan_add

BIG = 300 * 1024


def _rchar() -> int:
    """Bytes this process has read through read() so far (Linux /proc accounting, page cache included)."""
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise AssertionError("no rchar in /proc/self/io")


def _handler(root: Path, memory: MemorySystem) -> PassthroughHandler:
    provider = ClaudeProvider("claude-test", base_url="http://127.0.0.1:9", api_key="k", max_retries=0)
    return PassthroughHandler(None, memory, provider, Settings(project_root=root))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git project with a 300 KB text file, gitignored build output and a binary file."""
    root = tmp_path / "project"
    write_tree(root, {
        ".gitignore": "build/\n*.log\n",
        "src/app.py": "def main():\n    return 1\n",
        "src/util.py": "def helper():\n    pass\n",
        "build/lib/app.py": "# generated\n",
        "build/gen.py": "# generated\n",
        "big.json": "[" + "1," * (BIG // 2 - 1) + "1]",
        "debug.log": "log line\n",
    })
    (root / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR")
    git(root, "init", "-q")
    git(root, "add", "-A")
    return root


def test_a_300_kb_file_is_refused_with_the_same_words_everywhere(repo: Path) -> None:
    memory = MemorySystem(repo)
    reason = memory.policy.check("big.json").reason
    assert reason == "is 300 KB, over the 256 KB limit for one file"
    # /add (the picker and @ completion add through it)
    outcome = plan_add("big.json", repo, [], memory.policy)
    assert outcome.added == [] and outcome.refused == [((repo / "big.json").resolve(), reason)]
    # readFile, whole: refused with the same words and a way forward; a range still works
    whole = read_file_tool({"path": "big.json"}, project_root=repo, policy=memory.policy)
    assert is_error(whole) and whole["content"].startswith(f"big.json {reason}.") and "start_line" in whole["content"]
    assert read_file_tool({"path": "big.json", "start_line": 1, "end_line": 1}, project_root=repo)["status"] == "success"
    # a picked file the policy refuses (an old session): the request says why instead of dropping it silently
    handler = _handler(repo, memory)
    assert handler.file_context.policy is memory.policy
    handler.file_context.replace([str(repo / "big.json"), str(repo / "src/app.py")])
    parts = handler._turn_parts("", [])
    notes = [p["text"] for p in parts if p.get("path") == "big.json"]
    assert notes == [f"[big.json was picked into the context but is not sent: it {reason}]"]
    assert any(p.get("kind") == "file" and p["path"] == "src/app.py" for p in parts)


def test_the_limit_is_the_policys(repo: Path) -> None:
    roomy = FilePolicy(repo, max_bytes=BIG * 2)
    assert roomy.check("big.json") is None
    assert plan_add("big.json", repo, [], roomy).added == [(repo / "big.json").resolve()]
    assert read_file_tool({"path": "big.json"}, project_root=repo, policy=roomy)["status"] == "success"


@pytest.mark.parametrize("with_git", [True, False])
def test_a_glob_leaves_gitignored_build_output_out(repo: Path, with_git: bool) -> None:
    if not with_git:
        import shutil

        shutil.rmtree(repo / ".git")
    outcome = plan_add("**/*.py", repo, [])
    assert sorted(p.relative_to(repo.resolve()).as_posix() for p in outcome.added) == ["src/app.py", "src/util.py"]
    assert plan_add("build", repo, []).added == []  # a directory expands like a glob
    # named on its own, an ignored file is the user's choice
    assert plan_add("build/gen.py", repo, []).added == [(repo / "build/gen.py").resolve()]
    assert FilePolicy(repo).check("build/gen.py").reason == "is ignored by git (.gitignore)"


def test_a_file_created_after_indexing_is_found_by_a_glob(repo: Path) -> None:
    memory = MemorySystem(repo)
    memory.ensure_index(timeout=10)
    write_tree(repo, {"src/late.py": "x = 1\n"})
    assert (repo / "src/late.py").resolve() in plan_add("src/*.py", repo, [], memory.policy).added
    assert "src/late.py" in memory.matcher.paths  # the picker sees it too


def test_binary_and_secret_files_are_refused(repo: Path) -> None:
    policy = FilePolicy(repo)
    assert policy.check("logo.png").reason.startswith("is a binary file")
    write_tree(repo, {".env": "API_KEY=sk-canary\n"})
    assert policy.check(".env", chosen=True).code == "secret"
    assert policy.check("../outside.txt").code == "outside"
    assert policy.check(".git/config").code == "git_internal"


@pytest.mark.parametrize("rel, pattern, expected", [
    ("a.py", "*.py", True), ("src/a.py", "*.py", False), ("src/a.py", "**/*.py", True), ("a.py", "**/*.py", True),
    ("src/x/a.py", "src/**/*.py", True), ("src/x/a.py", "src/*.py", False), ("src/a.py", "./src/?.py", True),
])
def test_glob_match_follows_pathlib(rel: str, pattern: str, expected: bool) -> None:
    assert glob_match(rel, pattern) is expected


def test_a_45_mb_dump_is_never_suggested_nor_read_whole(tmp_path: Path) -> None:
    root = tmp_path / "project"
    write_tree(root, {"schema.sql": "create table users (id int);\n", "app.py": "def main():\n    pass\n"})
    with open(root / "dump.sql", "wb") as handle:  # text at its head, 45 MB long (sparse: quick to make)
        handle.write(b"insert into users values (1);\n" * 400)
        handle.truncate(45 * 1024 * 1024)
    memory = MemorySystem(root)
    memory.ensure_index(timeout=10)
    before = _rchar()
    matches = [Path(p).name for p, _ in memory.get_relevant_context_for({"taskText": "the users dump and the schema sql"}).matches]
    assert "schema.sql" in matches and "dump.sql" not in matches
    assert memory.policy.tokens(root / "dump.sql") == 45 * 1024 * 1024 // 4  # sized by a stat, for the pane
    assert _rchar() - before < 4 * 1024 * 1024
    # the same ranking with room for it does suggest it: the size is what keeps it out
    memory.policy.max_bytes = 64 * 1024 * 1024
    assert "dump.sql" in [Path(p).name for p, _ in memory.get_relevant_context_for({"taskText": "the users dump and the schema sql"}).matches]
    assert MAX_FILE_BYTES == 256 * 1024
