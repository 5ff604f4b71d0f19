"""Secrets by value and by name (issue 12, class 4): environment scrubbing, redaction, the one definition."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.tools.files import read_file_tool
from core.secrets import contains_private_key, env_file_values, is_secret_path, redact, scrubbed_env
from core.types import is_error

# Token shapes (fake values). Sources: GitHub secret scanning patterns, gitleaks default rules.
TOKENS = {
    "url": "postgres://app:hunter2pass@db.internal:5432/app",
    "aws": "AKIAIOSFODNN7EXAMPLE",
    "github": "ghp_" + "a1B2" * 9,
    "github_oauth": "gho_" + "Z9y8" * 9,
    "github_pat": "github_pat_" + "11ABCDEFG" * 4,
    "gitlab": "glpat-" + "x1Y2z3" * 4,
    "slack": "xoxb-1234567890-abcdefghij",
    "openai": "sk-proj-" + "q" * 24,
    "anthropic": "sk-ant-api03-" + "w" * 24,
    "stripe": "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
}


@pytest.mark.parametrize("kind", sorted(TOKENS))
def test_the_environment_is_scrubbed_by_value_whatever_the_name(kind: str) -> None:
    env = scrubbed_env(base={"PATH": "/bin", "HARMLESS_SOUNDING": TOKENS[kind], "NOTE": f"x {TOKENS[kind]} y"})
    assert env == {"PATH": "/bin"}


@pytest.mark.parametrize("kind", sorted(TOKENS))
def test_token_shapes_are_redacted_from_output(kind: str) -> None:
    text = redact(f"config: {TOKENS[kind]} end", [])
    assert TOKENS[kind] not in text and "[REDACTED]" in text


def test_ordinary_values_survive() -> None:
    env = {"PATH": "/usr/bin", "LANG": "C.UTF-8", "URL": "https://example.com/x", "GIT_AUTHOR_NAME": "Me",
           "TERM": "xterm", "EDITOR": "vim"}
    assert scrubbed_env(base=env) == env
    assert redact("sk-short and https://example.com/a:b@c", []) == "sk-short and https://example.com/a:b@c"


@pytest.mark.parametrize(("name", "secret"), [
    (".env", True), (".env.local", True), (".ENV", True), (".Env.Production", True), (".\uff45\uff4e\uff56", True),
    (".env.example", False), (".env.sample", False), (".env.template", False), (".envrc", True),
    (".npmrc", True), (".pypirc", True), (".pgpass", True), (".netrc", True), (".git-credentials", True),
    (".git/config", True), ("sub/.git/config", True), ("config", False), ("store.jks", True), ("a.keystore", True),
    ("cert.p12", True), ("cert.PFX", True), ("id_rsa", True), ("id_ed25519", True), ("id_rsa.pub", False),
    ("server.key", True), ("tls.pem", True), (".ssh/known_hosts", True), ("README.md", False),
])
def test_one_definition_of_secret_files(name: str, secret: bool) -> None:
    assert bool(is_secret_path(name)) is secret


def test_private_keys_are_found_anywhere_in_a_file(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("x\n" * 100_000 + "-----BEGIN RSA PRIVATE KEY-----\nabc\n-----END RSA PRIVATE KEY-----\n")
    assert contains_private_key(notes)
    (tmp_path / "plain.txt").write_text("x\n" * 100_000)
    assert not contains_private_key(tmp_path / "plain.txt")
    result = read_file_tool({"path": "notes.txt", "start_line": 1, "end_line": 2}, project_root=tmp_path)
    assert is_error(result) and "private key" in str(result)


def test_env_example_is_readable_and_env_is_not(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("TOKEN=value-of-the-secret-1\n")
    (tmp_path / ".env.example").write_text("TOKEN=put-yours-here\n")
    assert not is_error(read_file_tool({"path": ".env.example"}, project_root=tmp_path))
    assert is_error(read_file_tool({"path": ".env"}, project_root=tmp_path))
    assert env_file_values(tmp_path) == ["value-of-the-secret-1"]


async def test_a_search_piped_into_a_filter_is_filtered_before_the_filter(tmp_path: Path) -> None:
    """``grep -rl X . | wc -l`` counts no secret file: the first stage's output is filtered on its way."""
    from core.tools.safe_exec import execute_command_safely

    (tmp_path / "a.txt").write_text("needle\n")
    (tmp_path / "notes.txt").write_text("needle\n" + "x\n" * 50_000 + "-----BEGIN RSA PRIVATE KEY-----\nk\n")
    (tmp_path / ".env").write_text("needle=1\n")
    counted = await execute_command_safely("grep -rl needle . | wc -l", project_root=tmp_path)
    listed = await execute_command_safely("grep -rn needle . | sort", project_root=tmp_path)
    assert counted.status == "success" and counted.stdout.strip() == "1"
    assert listed.stdout == "./a.txt:1:needle\n"
