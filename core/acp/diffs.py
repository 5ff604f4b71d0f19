"""aider's unified diffs as ACP diff content: each file's old and new text.

The aider bridge reports one combined git-style diff (``metadata["diff"]``, made
by ``difflib.unified_diff`` in ``core/tools/aider_bridge.py``). ACP's diff content
wants the whole old and new text of a file; the new text is on disk, and the old
one is the new one with the hunks undone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_NO_NEWLINE = "\\"


@dataclass
class _Hunk:
    new_start: int
    new_count: int
    lines: list[str] = field(default_factory=list)


@dataclass
class FileDiff:
    """One file of a unified diff: paths as written (``None`` for /dev/null) and hunks."""

    old_path: str | None
    new_path: str | None
    hunks: list[_Hunk] = field(default_factory=list)

    @property
    def path(self) -> str:
        """The file's project-relative path."""
        return self.new_path or self.old_path or ""


def parse_unified_diff(diff: str) -> list[FileDiff]:
    """The files of a (possibly multi-file) unified diff, in order."""
    files: list[FileDiff] = []
    lines = diff.splitlines(keepends=True)
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            files.append(FileDiff(_diff_path(line[4:]), _diff_path(lines[i + 1][4:])))
            i += 2
            continue
        match = _HUNK.match(line)
        if match and files:
            old_left = int(match.group(2) or "1")
            new_left = int(match.group(4) or "1")
            hunk = _Hunk(new_start=int(match.group(3)), new_count=new_left)
            i += 1
            while i < len(lines) and (old_left > 0 or new_left > 0 or lines[i].startswith(_NO_NEWLINE)):
                body = lines[i]
                if body.startswith(" "):
                    old_left, new_left = old_left - 1, new_left - 1
                elif body.startswith("-"):
                    old_left -= 1
                elif body.startswith("+"):
                    new_left -= 1
                elif not body.startswith(_NO_NEWLINE):
                    break
                hunk.lines.append(body)
                i += 1
            files[-1].hunks.append(hunk)
            continue
        i += 1
    return files


def old_text(new_text: str, file_diff: FileDiff) -> str:
    """The file's text before the change: ``new_text`` with the hunks undone."""
    new_lines = new_text.splitlines(keepends=True)
    out: list[str] = []
    position = 0
    for hunk in file_diff.hunks:
        start = hunk.new_start - 1 if hunk.new_count else hunk.new_start
        out.extend(new_lines[position:start])
        previous = ""
        for body in hunk.lines:
            if body.startswith(_NO_NEWLINE):
                if previous in (" ", "-") and out:
                    out[-1] = out[-1].removesuffix("\n")
                continue
            previous = body[0]
            if previous in (" ", "-"):
                out.append(body[1:])
        position = start + hunk.new_count
    out.extend(new_lines[position:])
    return "".join(out)


def file_changes(diff: str, project_root: Path) -> list[tuple[Path, str | None, str]]:
    """``(absolute path, old text or None for a new file, new text)`` for each file in ``diff``."""
    changes: list[tuple[Path, str | None, str]] = []
    for file_diff in parse_unified_diff(diff):
        if not file_diff.path:
            continue
        path = (project_root / file_diff.path).resolve()
        try:
            new = path.read_text(encoding="utf-8", errors="replace") if file_diff.new_path else ""
        except OSError:
            continue
        old = old_text(new, file_diff) if file_diff.old_path else None
        changes.append((path, old, new))
    return changes


def _diff_path(header: str) -> str | None:
    name = header.rstrip("\n").split("\t", 1)[0]
    if name == "/dev/null":
        return None
    return name[2:] if name[:2] in ("a/", "b/") else name
