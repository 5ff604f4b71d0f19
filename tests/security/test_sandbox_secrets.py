"""Issue 22 section 5: secrets inside the sandbox, judged from outside.

Each canary is plain text with no credential shape (so no output filter could be what
hid it), looked for as is and hex-encoded in what the sandboxed command printed; the
Unix-socket listener counts its connections; ``/proc/sys`` is read on the host.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from core.sandbox import run_command
from tests.sandbox.conftest import python_inside, sandbox  # noqa: F401 - fixtures
from tests.security.conftest import loopback_listener

GIT_CANARY = "GitPassCanary7431"
HEADER_CANARY = "HeaderCanary5522"
KEY_CANARY = "KeyBodyCanary9013"
LINK_CANARY = "LinkedEnvCanary3377"


def leaked(output: str, canary: str) -> bool:
    """The canary as text or as hex (``od``/``xxd`` style, with or without spaces)."""
    squeezed = "".join(output.split())
    return canary in output or canary.encode().hex() in squeezed or canary.encode().hex() in squeezed.replace(" ", "")


async def sandboxed(sandbox, root: Path, script: str, **kwargs):
    return await run_command(["sh", "-c", script], project_root=root, bwrap=sandbox.bwrap,
                             rlimit_nproc=sandbox.process_limit == "rlimit", **kwargs)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", "--template=", str(root)], check=True)
    with open(root / ".git" / "config", "a", encoding="utf-8") as config:
        config.write(f'[remote "origin"]\n\turl = https://alice:{GIT_CANARY}@example.invalid/x.git\n'
                     f'[credential]\n\thelper = store --file=/x\n\tusername = alice-{GIT_CANARY}\n'
                     f'[http "https://example.invalid/"]\n\textraheader = Authorization: basic {HEADER_CANARY}\n')
    (root / "app.py").write_text("print(1)\n")
    return root.resolve()


async def test_git_credentials_are_masked(sandbox, repo):
    result = await sandboxed(sandbox, repo, "cat .git/config; od -An -tx1 .git/config; git config --list; "
                             "git remote get-url origin; echo finished")
    assert "finished" in result.output
    assert "example.invalid/x.git" in result.output  # the remote is still there, without its password
    for canary in (GIT_CANARY, HEADER_CANARY):
        assert not leaked(result.output, canary), canary
    assert GIT_CANARY in (repo / ".git" / "config").read_text()  # the host's file is untouched


async def test_a_private_key_is_masked_by_content(sandbox, repo):
    (repo / "docs").mkdir()
    (repo / "docs" / "notes.txt").write_text(
        f"setup notes\n-----BEGIN OPENSSH PRIVATE KEY-----\n{KEY_CANARY}\n-----END OPENSSH PRIVATE KEY-----\n")
    result = await sandboxed(sandbox, repo, "cat docs/notes.txt; od -An -tx1 docs/notes.txt; cp docs/notes.txt copy.txt; "
                             "cat copy.txt; echo finished")
    assert "finished" in result.output
    assert not leaked(result.output, KEY_CANARY)
    assert not (repo / "copy.txt").exists() or KEY_CANARY not in (repo / "copy.txt").read_text()


async def test_secrets_reached_through_symbolic_links_are_masked(sandbox, repo):
    (repo / "node_modules" / "pkg").mkdir(parents=True)  # not walked: a dependency directory
    (repo / "node_modules" / "pkg" / ".env").write_text(f"TOKEN={LINK_CANARY}\n")
    (repo / ".venv").mkdir()
    (repo / ".venv" / "deploy").write_text(f"-----BEGIN RSA PRIVATE KEY-----\n{KEY_CANARY}\n")
    (repo / "notes").symlink_to("node_modules/pkg/.env")
    (repo / "readme-link").symlink_to(repo / ".venv" / "deploy")
    result = await sandboxed(sandbox, repo, "cat notes; cat readme-link; od -An -tx1 notes readme-link; echo finished")
    assert "finished" in result.output
    assert not leaked(result.output, LINK_CANARY) and not leaked(result.output, KEY_CANARY)


async def test_a_unix_socket_in_the_project_is_not_a_way_out(sandbox, repo, python_inside):  # noqa: F811
    python, read_only = python_inside
    code = ("import socket\ntry:\n s = socket.socket(socket.AF_UNIX)\n s.connect('agent.sock')\n s.sendall(b'escaped')\n"
            " s.close()\n print('CONNECTED')\nexcept OSError as e:\n print('refused:', e)\n"
            "a, b = socket.socketpair()\na.sendall(b'x'); print('pair', b.recv(1))")
    with loopback_listener(read=True, unix_path=repo / "agent.sock") as (_, hits):
        result = await run_command([*python, "-c", code], project_root=repo, bwrap=sandbox.bwrap, read_only=read_only)
    assert "refused:" in result.output, result.output
    assert hits == []
    assert "pair b'x'" in result.output  # an unnamed socket pair still works


async def test_root_in_the_sandbox_cannot_write_proc_sys(sandbox, repo):
    knob = Path("/proc/sys/fs/lease-break-time")  # harmless: how long a file lease holder gets to release it
    before = knob.read_text()
    changed = str(int(before) + 1)
    try:
        result = await sandboxed(sandbox, repo, f"echo {changed} > {knob}; test -w /proc/sysrq-trigger && echo SYSRQ-WRITABLE; "
                                 "echo finished")
        after = knob.read_text()
    finally:
        if knob.read_text() != before:
            knob.write_text(before)
    assert "finished" in result.output
    assert after == before
    assert "SYSRQ-WRITABLE" not in result.output


async def test_the_hosts_tls_private_keys_are_not_in_the_sandbox(sandbox, repo):
    if not os.path.isdir("/etc/ssl/private"):
        pytest.skip("no /etc/ssl/private on this machine")
    result = await sandboxed(sandbox, repo, "ls -d /etc/ssl/private; ls /etc/ssl/certs >/dev/null && echo certs-ok")
    assert "No such file or directory" in result.output and "certs-ok" in result.output
