"""The issue-12 battery: 400+ attacks and everyday commands, each run twice.

1. Approval asked and denied: the policy decision (in-process, no process started)
   must be the expected one (allowed / asked / refused).
2. Everything approved (``approval_mode="allow"``, i.e. ``--yes``): what would run
   runs for real against a hostile repository (:mod:`tests.security.hostile_git`) with
   canary secrets inside and outside the project. Checked: the repository's sentinel
   never ran, no file outside the project was read (access times) or changed, no
   canary reached what the model is shown, content searches name no secret file, and
   nothing connected to a loopback listener.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Iterator

import pytest

from core.tools.command_policy import CommandRefused, plan_command
from core.tools.safe_exec import run_file_path_command
from tests.security.battery_cases import (
    ALLOWED, ASKED, CANARIES, HOME_CANARY, OUTSIDE_CANARY, PEM, PROJECT_FILES, REFUSED, SECRET_NAMES, all_cases,
)
from tests.security.conftest import loopback_listener
from tests.security.hostile_git import GIT_IDENTITY, build_hostile_repo
from tests.tools.support import tree_snapshot

CASES = all_cases()
OLD = 1_000_000_000  # an access time well before every modification time (relatime then records reads)


def test_the_battery_is_big_and_every_case_names_its_source() -> None:
    assert len(CASES) >= 400, len(CASES)
    assert all(source for _, _, source in CASES)
    assert {kind for _, kind, _ in CASES} == {ALLOWED, ASKED, REFUSED}


@pytest.fixture(scope="module")
def battery_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("battery")
    repo = build_hostile_repo(base, PROJECT_FILES)
    (repo / "env_link").symlink_to(".env")
    (repo / "proc_link").symlink_to("/proc/self")
    with (repo / ".git" / "config").open("a") as config:
        config.write("[remote \"creds\"]\n\turl = https://user:CANARY-GITCONFIG-PW-99@example.invalid/r.git\n")
    evil = base / "proj-evil"
    evil.mkdir()
    (evil / "secret.txt").write_text(f"{OUTSIDE_CANARY}\n")
    home = base / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text(PEM.format(HOME_CANARY))
    (repo / "home_link").symlink_to(home)
    return base


@pytest.fixture(scope="module")
def listener() -> Iterator[list[bytes]]:
    """A loopback listener that records every connection."""
    with loopback_listener(read=False) as (_, received):
        yield received


_OUTSIDE: dict[Path, list[Path]] = {}


def _outside_files(base: Path) -> list[Path]:
    """The files next to the project (its sibling, the fake HOME, the hooks and sentinel), listed once per copy."""
    if base not in _OUTSIDE:
        _OUTSIDE[base] = [p for p in base.rglob("*") if p.is_file() and not p.is_relative_to(base / "repo")]
    return _OUTSIDE[base]


def _copy(battery_template: Path, base: Path) -> Path:
    shutil.copytree(battery_template, base, symlinks=True)
    for path in [base / "sentinel", base / "repo/.git/config", base / "repo/included.cfg",
                 *(base / "hostile-hooks").iterdir(), *(base / "repo/.git/hooks").iterdir()]:
        path.write_text(path.read_text().replace(str(battery_template), str(base)))
    (base / "repo" / "home_link").unlink()
    (base / "repo" / "home_link").symlink_to(base / "home")
    return base / "repo"


@pytest.fixture(scope="module")
def shared(battery_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One copy for the cases that change nothing (refused, or allowed: read-only); asked ones get their own."""
    return _copy(battery_template, tmp_path_factory.mktemp("shared") / "b")


def _decision(command: str, root: Path) -> str:
    try:
        plan = plan_command(command, root)
    except CommandRefused:
        return REFUSED
    return ASKED if plan.approvals else ALLOWED


@pytest.mark.parametrize(("command", "expected", "source"), CASES, ids=[f"{i}:{c[0][:40]}" for i, c in enumerate(CASES)])
async def test_case(shared: Path, battery_template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                    listener: list[bytes], command: str, expected: str, source: str) -> None:
    project = _copy(battery_template, tmp_path / "b") if expected == ASKED else shared
    monkeypatch.setenv("HOME", str(project.parent / "home"))
    for key, value in GIT_IDENTITY.items():
        monkeypatch.setenv(key, value)
    # Run 1: approval asked and denied. The decision, in-process; a denied or refused command never runs.
    assert _decision(command, project) == expected, (command, source)
    # Run 2: everything approved (--yes).
    base = project.parent
    outside_before = tree_snapshot(base / "proj-evil", base / "home")  # reads them: access times reset below
    for path in _outside_files(base):
        os.utime(path, (OLD, path.stat().st_mtime))
    result = await run_file_path_command({"command": command}, project_root=project, approval_mode="allow",
                                         timeout=10)
    shown = repr(result)
    status = result.get("metadata", {}).get("command_status", "refused")  # an empty command never gets that far
    if expected == REFUSED:
        assert status == "refused", (command, shown[:300])
    else:
        assert status != "refused", (command, shown[:500])
    assert not (base / "sentinel.log").exists(), (command, (base / "sentinel.log").read_text())
    for canary in CANARIES:
        assert canary not in shown, (command, canary)
    if status != "refused" and "--files" not in command and any(w in command for w in ("grep", "rg -", "rg C")):
        for name in SECRET_NAMES:
            named = re.search(rf"(^|[/\s'\"]){re.escape(name)}($|[:\s'\"\\-])", result["content"])
            assert named is None, (command, name, result["content"][:300])
    read = [p for p in _outside_files(base) if p.stat().st_atime != OLD and p.name != "sentinel"]
    assert read == [], (command, read)
    assert tree_snapshot(base / "proj-evil", base / "home") == outside_before
    assert listener == [], command


def test_access_times_record_reads_here(tmp_path: Path) -> None:
    """The access-time check above means something: this filesystem records a read after an old atime."""
    probe = tmp_path / "probe"
    probe.write_text("x")
    os.utime(probe, (OLD, probe.stat().st_mtime))
    probe.read_text()
    assert probe.stat().st_atime != OLD
