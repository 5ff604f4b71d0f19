"""The project's test command: configured (``test_command``) or detected from its files."""

from __future__ import annotations

import configparser
import json
import re
import shlex
import tomllib
from pathlib import Path

# Characters that mean a configured command needs a shell (pipes, chaining, redirection, variables).
_SHELL_SYNTAX = re.compile(r"[|&;<>$`*?(){}\[\]~]|\n")


class TestCommandError(ValueError):
    """The configured test command cannot be used; the message says why."""

    __test__ = False  # not a pytest test class


def configured_argv(command: str) -> list[str]:
    """The argv of a configured command line: split like a shell would, or ``sh -c`` when it needs one.

    The user's own configured command is the only text that may reach ``sh -c`` (and
    it still runs inside the sandbox).

    Raises:
        TestCommandError: the line is empty or its quoting is unbalanced.
    """
    if not command.strip():
        raise TestCommandError("the test command is empty")
    if _SHELL_SYNTAX.search(command):
        return ["sh", "-c", command]
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise TestCommandError(f"test_command {command!r} cannot be split into arguments: {exc}") from None
    return argv


def _has_pytest_config(root: Path) -> bool:
    if (root / "pytest.ini").is_file() or (root / "conftest.py").is_file():
        return True
    try:
        if "pytest" in tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8")).get("tool", {}):
            return True
    except (OSError, tomllib.TOMLDecodeError):
        pass
    for name, section in (("setup.cfg", "tool:pytest"), ("tox.ini", "pytest")):
        parser = configparser.ConfigParser()
        try:
            parser.read(root / name, encoding="utf-8")
        except (configparser.Error, UnicodeDecodeError):
            continue
        if parser.has_section(section):
            return True
    return False


def _has_python_tests(root: Path) -> bool:
    for directory in (root, root / "tests", root / "test"):
        if directory.is_dir() and any(directory.glob("test_*.py")):
            return True
    return False


def _python(root: Path) -> str:
    """The interpreter with pytest that the user's shell would run (:mod:`core.sandbox.python_env`).

    Raises:
        TestCommandError: no interpreter found has pytest installed.
    """
    from core.sandbox.python_env import test_candidates

    candidates = test_candidates(root)
    found = next((c for c in candidates if c.has_pytest), None)
    if found is None:
        tried = "; ".join(f"{c.python} ({c.source})" for c in candidates) or "no Python interpreter at all"
        raise TestCommandError(
            f"Could not run the tests: pytest is not installed for any Python this project would use (tried: {tried}). "
            "Install it in the project's virtualenv (python3 -m venv .venv && .venv/bin/pip install pytest), "
            "or set test_command in the configuration (ASSISTANT_TUI_TEST_COMMAND)."
        )
    return found.python


_NO_PYTEST = re.compile(r"(?m): No module named '?pytest'?\s*$")
_PYTEST_NOT_RUN = {
    3: "pytest stopped with an internal error (exit status 3)",
    4: "pytest was given arguments it could not use (exit status 4)",
    5: "pytest collected no tests (exit status 5)",
}


def tests_not_run(argv: list[str], returncode: int | None, output: str) -> str | None:
    """Why a test command that ended with ``returncode`` never ran the tests; None when it did (pass or fail).

    "No module named pytest", a program that is not there or cannot run (exit status 126
    or 127), and pytest's own exit statuses for an internal error, a usage error and no
    tests collected are not test failures: the user hears "could not run the tests".
    """
    if returncode in (None, 0):
        return None
    program = argv[0] if argv else "the test command"
    if _NO_PYTEST.search(output[-4000:]):
        return f"pytest is not installed for {program}"
    if returncode in (126, 127):
        return f"{program} was not found or could not be started (exit status {returncode})"
    if "pytest" in argv[:3] or any(Path(a).name == "pytest" for a in argv[:1]):
        return _PYTEST_NOT_RUN.get(returncode)
    return None


def _makefile_has_test(root: Path) -> bool:
    for name in ("GNUmakefile", "makefile", "Makefile"):
        try:
            text = (root / name).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if re.search(r"^test\s*:", text, re.MULTILINE):
            return True
    return False


def detect_test_command(root: Path) -> tuple[list[str], str] | None:
    """The test command a developer would run here, and what it was detected from; None if unknown."""
    try:
        scripts = json.loads((root / "package.json").read_text(encoding="utf-8")).get("scripts") or {}
    except (OSError, ValueError, AttributeError):
        scripts = {}
    if _has_pytest_config(root) or _has_python_tests(root):
        return [_python(root), "-m", "pytest"], "pytest (Python tests found)"
    if isinstance(scripts, dict) and scripts.get("test"):
        return ["npm", "test"], "package.json's test script"
    if (root / "Cargo.toml").is_file():
        return ["cargo", "test"], "Cargo.toml"
    if (root / "go.mod").is_file():
        return ["go", "test", "./..."], "go.mod"
    if _makefile_has_test(root):
        return ["make", "test"], "the Makefile's test target"
    return None


def resolve_test_command(root: Path, configured: str) -> tuple[list[str], str]:
    """The test command to run: the configured one, else the detected one.

    Raises:
        TestCommandError: nothing is configured and nothing was detected, or the configured line is unusable.
    """
    if configured.strip():
        return configured_argv(configured), "test_command in the configuration"
    found = detect_test_command(root)
    if found is None:
        raise TestCommandError(
            "No test command was found (no pytest tests, package.json test script, Cargo.toml, go.mod or "
            "Makefile test target). Set test_command in the configuration (ASSISTANT_TUI_TEST_COMMAND)."
        )
    return found
