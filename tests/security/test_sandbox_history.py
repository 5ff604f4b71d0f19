"""Issue 22 section 5: a secret file once committed is not readable through git history in the sandbox.

Judged from outside: what reached the model (every request body the fake LLM got),
the canary looked for as text and hex-encoded; the host's ``.git`` still holds the
history afterwards. A control repository with no secret in its history keeps
``git log`` working inside.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from core.sandbox import history, run_command
from tests.fake_llm import FakeLLM, Reply, Tool
from tests.sandbox.conftest import sandbox  # noqa: F401 - fixture
from tests.security.test_canaries import cli_env, run_cli  # noqa: F401 - fixture

CANARY = "HistoryCanary6174"
STAGED_CANARY = "StagedCanary2290"
GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false"]


def leaked(text: str, canary: str) -> bool:
    squeezed = "".join(text.split()).replace("\\n", "")
    return canary in text or canary.encode().hex() in squeezed


def git(root: Path, *args: str) -> str:
    return subprocess.run([*GIT, *args], cwd=root, check=True, capture_output=True).stdout.decode(errors="replace")


def make_repo(root: Path, *, secret: bool) -> Path:
    root.mkdir()
    git(root, "init", "-q", "--template=")
    (root / "app.py").write_text("print(1)\n")
    if secret:
        (root / ".env").write_text(f"API_TOKEN={CANARY}\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "first commit")
    if secret:
        git(root, "rm", "-q", ".env")
    (root / "app.py").write_text("print(2)\n")
    git(root, "commit", "-qam", "second commit")
    return root.resolve()


def model_saw(fake_llm: FakeLLM) -> str:
    return json.dumps([r.body for r in fake_llm.requests])


def test_a_committed_then_deleted_env_is_not_readable_through_history(
    sandbox, tmp_path: Path, fake_llm: FakeLLM, cli_env: dict[str, str]  # noqa: F811
) -> None:
    root = make_repo(tmp_path / "repo", secret=True)
    before = git(root, "show", "HEAD~1:.env")
    assert CANARY in before  # the host's history holds it
    fake_llm.script(
        Reply(tools=[Tool("runCommand", {"command": ["git", "show", "HEAD~1:.env"]}),
                     Tool("runCommand", {"command": ["git", "log", "-p"]}),
                     Tool("runCommand", {"command": ["sh", "-c", "git show HEAD~1:.env | xxd -p"]}),
                     Tool("runCommand", {"command": ["sh", "-c", "git log -p --all | xxd -p"]}),
                     Tool("runCommand", {"command": ["sh", "-c", "git cat-file --batch-all-objects --batch | xxd -p"]}),
                     Tool("runCommand", {"command": ["sh", "-c", "cat .git/objects/*/* | xxd -p; echo walked"]})]),
        Reply(text="done"),
    )
    out = run_cli(["-p", "look at the history", "--yes"], root, cli_env)
    assert out.returncode == 0, out.stderr
    seen = model_saw(fake_llm)
    assert "walked" in seen  # the commands ran
    assert not leaked(seen, CANARY)
    assert not leaked(out.stdout + out.stderr, CANARY)
    # said once, in what reached the model
    results = json.dumps(fake_llm.requests[1].messages[-1])
    assert results.count("git's objects are hidden in the sandbox") == 1, results
    # the host's repository is untouched
    assert git(root, "show", "HEAD~1:.env") == before
    assert "second commit" in git(root, "log", "--oneline")


def test_git_log_works_where_history_holds_no_secret(
    sandbox, tmp_path: Path, fake_llm: FakeLLM, cli_env: dict[str, str]  # noqa: F811
) -> None:
    root = make_repo(tmp_path / "clean", secret=False)
    fake_llm.script(Reply(tools=[Tool("runCommand", {"command": ["git", "log", "--format=%s", "-p"]})]),
                    Reply(text="done"))
    out = run_cli(["-p", "look at the history", "--yes"], root, cli_env)
    assert out.returncode == 0, out.stderr
    seen = model_saw(fake_llm)
    assert "first commit" in seen and "second commit" in seen and "print(2)" in seen
    assert "objects are hidden" not in seen


async def test_a_staged_env_is_not_readable_through_the_index(sandbox, tmp_path: Path) -> None:  # noqa: F811
    root = make_repo(tmp_path / "staged", secret=False)
    (root / ".env").write_text(f"API_TOKEN={STAGED_CANARY}\n")
    git(root, "add", "-f", ".env")  # staged, never committed
    script = "git show :.env | xxd -p; git cat-file --batch-all-objects --batch | xxd -p; echo finished"
    result = await run_command(["sh", "-c", script], project_root=root, bwrap=sandbox.bwrap,
                               rlimit_nproc=sandbox.process_limit == "rlimit")
    assert "finished" in result.output
    assert not leaked(result.output, STAGED_CANARY)
    assert STAGED_CANARY in git(root, "show", ":.env")


def _dangling(root: Path) -> str:
    (root / ".env").write_text(f"API_TOKEN={STAGED_CANARY}\n")
    git(root, "add", "-f", ".env")
    git(root, "rm", "-q", "--cached", ".env")  # unstaged: its blob stays in objects/, named by nothing
    return "git cat-file --batch-all-objects --batch"


def _copy_committed(root: Path) -> str:
    (root / ".env").write_text(f"API_TOKEN={STAGED_CANARY}\n")  # masked, never committed
    (root / "config.bak").write_text(f"API_TOKEN={STAGED_CANARY}\n")
    git(root, "add", "config.bak")
    git(root, "commit", "-qm", "backup")
    git(root, "rm", "-q", "config.bak")
    git(root, "commit", "-qm", "drop backup")
    return "git show HEAD~1:config.bak"


def _orig_head(root: Path) -> str:
    (root / ".env").write_text(f"API_TOKEN={STAGED_CANARY}\n")
    git(root, "add", "-f", ".env")
    tree = git(root, "write-tree").strip()
    commit = git(root, "commit-tree", tree, "-m", "lost").strip()
    git(root, "rm", "-q", "--cached", ".env")
    (root / ".env").unlink()
    (root / ".git" / "ORIG_HEAD").write_text(commit + "\n")  # named only by ORIG_HEAD (no ref, no reflog)
    return "git show ORIG_HEAD:.env"


@pytest.mark.parametrize("setup", [_dangling, _copy_committed, _orig_head], ids=lambda f: f.__name__.strip("_"))
async def test_other_routes_to_a_stored_secret(sandbox, tmp_path: Path, setup) -> None:  # noqa: F811
    root = make_repo(tmp_path / "repo", secret=False)
    reader = setup(root)
    assert STAGED_CANARY in git(root, *reader.split()[1:])  # the host's git holds it
    result = await run_command(["sh", "-c", f"{reader} | xxd -p; {reader}; echo finished"], project_root=root,
                               bwrap=sandbox.bwrap, rlimit_nproc=sandbox.process_limit == "rlimit")
    assert "finished" in result.output
    assert not leaked(result.output, STAGED_CANARY)
    assert "git's objects are hidden in the sandbox" in result.output


def fast_import(root: Path, commits: int) -> None:
    """A history of ``commits`` commits; the first adds .env, the second removes it."""
    stream = []
    for n in range(commits):
        stream.append(f"commit refs/heads/main\ncommitter t <t@example.invalid> {1_700_000_000 + n} +0000\n"
                      f"data 4\nc{n:03d}\n" if n < 1000 else
                      f"commit refs/heads/main\ncommitter t <t@example.invalid> {1_700_000_000 + n} +0000\n"
                      f"data 5\nc{n:04d}\n")
        if n == 0:
            stream.append(f"M 644 inline .env\ndata {len(CANARY) + 1}\n{CANARY}\n")
        elif n == 1:
            stream.append("D .env\n")
        body = f"line {n}\n"
        stream.append(f"M 644 inline src/f{n % 50}.py\ndata {len(body)}\n{body}\n")
    subprocess.run(["git", "fast-import", "--quiet"], cwd=root, input="".join(stream), text=True, check=True)


def test_the_answer_is_cached_by_the_refs_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "big"
    root.mkdir()
    git(root, "init", "-q", "--template=", "-b", "main")
    fast_import(root, 2000)
    git_dir = str((root / ".git").resolve())
    began = time.perf_counter()
    assert history.history_secret(git_dir) == ".env"
    first = time.perf_counter() - began
    calls: list[tuple[str, ...]] = []
    real = history._listing

    def listing(git_dir: str, env: dict[str, str], *args: str, **kwargs):
        calls.append(args)
        return real(git_dir, env, *args, **kwargs)

    monkeypatch.setattr(history, "_listing", listing)  # counts the git runs
    began = time.perf_counter()
    assert history.history_secret(git_dir) == ".env"
    cached = time.perf_counter() - began
    assert calls == []  # the same refs: no git run
    print(f"2000 commits: first {first * 1000:.1f} ms, cached {cached * 1000:.2f} ms")
    git(root, "update-ref", "refs/heads/other", "main~1")
    assert history.history_secret(git_dir) == ".env"
    assert [("log" in args) for args in calls] == [True]  # a new ref: the history is listed again, not the index
    calls.clear()
    (root / "app.py").write_text("x\n")
    git(root, "add", "app.py")
    assert history.history_secret(git_dir) == ".env"
    assert [args[0] for args in calls] == ["ls-files"]  # the index changed: only it is listed again


def test_a_clean_repository_is_not_hidden(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "clean", secret=False)
    assert history.secrets_in_history(root, []) == []
    (root / "sub").mkdir()
    secret_root = make_repo(root / "sub" / "nested", secret=True)  # a nested repository that committed .env
    found = history.secrets_in_history(root, [str(secret_root / ".git" / "config")])
    assert [(s.git_dir, s.path) for s in found] == [(os.path.realpath(secret_root / ".git"), ".env")]
