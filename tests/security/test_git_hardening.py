"""Git hardening survives the secret scrubbing of child environments."""

from __future__ import annotations

import subprocess

from core.gitutil import git_argv, harden_git_environment
from core.tools.secrets import scrubbed_env


def test_hardened_environment_keeps_git_working_after_scrubbing(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "user.name", "GIT_CONFIG_VALUE_0": "Me"}
    harden_git_environment(env)
    harden_git_environment(env)  # idempotent
    assert env["GIT_CONFIG_COUNT"] == "3" and env["GIT_CONFIG_KEY_1"] == "core.fsmonitor"
    child = scrubbed_env(base={**env, "SECRET_TOKEN": "x"})
    assert "SECRET_TOKEN" not in child and child["GIT_CONFIG_KEY_0"] == "user.name"
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / ".git" / "hook").write_text(f"#!/bin/sh\ntouch '{tmp_path}/PWNED'\n")
    (tmp_path / ".git" / "hook").chmod(0o755)
    subprocess.run(["git", "config", "core.fsmonitor", str(tmp_path / ".git" / "hook")], cwd=tmp_path, check=True)
    (tmp_path / "a.py").write_text("x = 1\n")
    subprocess.run(["git", "add", "a.py"], cwd=tmp_path, env=child, check=True)
    out = subprocess.run(["git", "status", "--porcelain"], cwd=tmp_path, env=child, capture_output=True, text=True, check=True)
    assert "a.py" in out.stdout and not (tmp_path / "PWNED").exists()
    listed = subprocess.run(git_argv("ls-files"), cwd=tmp_path, capture_output=True, text=True, check=True)
    assert listed.stdout.strip() == "a.py" and not (tmp_path / "PWNED").exists()
