"""``editFile``: exact replacements in one file, reviewed as a diff before they land (issue 26).

The model states the change: a list of ``{old_text, new_text}`` pairs, or a unified ``patch``
(each hunk becomes one pair: its context and removed lines, then its context and added
lines). Every pair must match exactly once, in order, or nothing is written and the refusal
says where (the lines where an ambiguous text occurs, or where its first line appears when the
whole does not). The file keeps its encoding (UTF-8 with or without a BOM, UTF-16 with one),
its line endings (CRLF files are matched and written in CRLF) and its mode; it is replaced
atomically. Paths are judged like every other writer's: inside the project
(:mod:`core.tools.paths_guard`), never a protected configuration file or the app's own
directories (:func:`core.tools.aider_guard.protected_reason`), never a secret file or a
hard-linked one. Approval shows the diff; "always for this session" is given per file
(``editFile:calc.py``) or for the whole project (``editFile:*``), and
:class:`core.approvals.Approvals` remembers it; neither opens a refused path or outlasts
read-only mode.
"""

from __future__ import annotations

import codecs
import difflib
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.tools.aider_guard import protected_reason
from core.tools.paths_guard import PathRefused, relative_display, resolve_in_root
from core.secrets import is_secret_path
from core.types import TaskResult, error_result, ok_result

MAX_FILE_BYTES = 4 * 1024 * 1024

EDIT_FILE_SPEC: dict[str, Any] = {
    "name": "editFile",
    "description": (
        "Change one file by exact replacements, shown to the user as a diff before it is written. Use it for "
        "precise changes you can state exactly (a few lines, a rename in one file, a new small file); use "
        "aiderAutomatic for broad changes across many files or when you cannot quote the current text. "
        "`edits` is a list of {old_text, new_text}: each old_text must appear exactly once in the file (copy it "
        "from readFile's output without the line numbers, with enough surrounding lines to be unique); they "
        "apply in order. Or give `patch`, a unified diff of this one file. To create a file, give one edit with "
        "an empty old_text. Line endings and encoding are kept."
    ),
    "input_schema": {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "The file, relative to the project root."},
            "edits": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"old_text": {"type": "string"}, "new_text": {"type": "string"}},
                    "required": ["old_text", "new_text"],
                },
                "description": "Replacements, applied in order; each old_text must occur exactly once.",
            },
            "patch": {"type": "string", "description": "A unified diff of this file (instead of edits)."},
        },
        "required": ["path"],
    },
}


class EditRefused(ValueError):
    """The edit cannot be applied; the message says why and where."""


@dataclass(frozen=True)
class PlannedEdit:
    """An edit worked out but not written: the new bytes and the diff."""

    path: Path
    display: str
    old: bytes | None
    new: bytes
    diff: str
    added: int
    removed: int

    @property
    def summary(self) -> str:
        """``calc.py +3 −1``: the chat's one line."""
        return f"{self.display} +{self.added} −{self.removed}" if self.old is not None else f"{self.display} created (+{self.added})"


def plan_edit(params: dict[str, Any], project_root: Path) -> PlannedEdit:
    """Work out an edit without writing anything.

    Raises:
        EditRefused: The path is not allowed, the file cannot be edited as text, or an old text
            is missing or ambiguous.
    """
    root = project_root.resolve()
    raw = params.get("path")
    if not isinstance(raw, str) or not raw.strip():
        raise EditRefused("`path` must name a file in the project.")
    try:
        path = resolve_in_root(raw, root, root_resolved=root)
    except PathRefused as exc:
        raise EditRefused(exc.reason) from None
    display = relative_display(path, root)
    if reason := protected_reason(path, root):
        raise EditRefused(f"{display} may not be edited: {reason}")
    if reason := is_secret_path(path):
        raise EditRefused(f"{display} may not be edited: {reason}")
    pairs = _pairs(params)
    if path.is_dir():
        raise EditRefused(f"{display} is a directory.")
    if not path.exists():
        if len(pairs) == 1 and pairs[0][0] == "":
            new = pairs[0][1].encode("utf-8")
            diff = "\n".join(difflib.unified_diff([], pairs[0][1].splitlines(), "/dev/null", f"b/{display}", lineterm=""))
            return PlannedEdit(path, display, None, new, diff, len(pairs[0][1].splitlines()), 0)
        raise EditRefused(f"{display} does not exist; to create it give one edit with an empty old_text.")
    info = os.stat(path)
    if info.st_nlink > 1:
        raise EditRefused(f"{display} is hard-linked elsewhere ({info.st_nlink} names): it is not edited in place.")
    if info.st_size > MAX_FILE_BYTES:
        raise EditRefused(f"{display} is {info.st_size:,} bytes; editFile handles files up to {MAX_FILE_BYTES:,}.")
    data = path.read_bytes()
    encoding, bom, text = _decode(data, display)
    crlf = "\r\n" in text and text.count("\r\n") == text.count("\n")
    work = text.replace("\r\n", "\n") if crlf else text
    for number, (old, new) in enumerate(pairs, start=1):
        if crlf:
            old, new = old.replace("\r\n", "\n"), new.replace("\r\n", "\n")
        if old == "":
            raise EditRefused(f"Edit {number}: old_text is empty, but {display} exists; quote the text to replace.")
        work = _replace_once(work, old, new, number, display)
    out = work.replace("\n", "\r\n") if crlf else work
    new_bytes = bom + out.encode(encoding)
    before, after = text.replace("\r\n", "\n").splitlines(), work.splitlines()
    lines = list(difflib.unified_diff(before, after, f"a/{display}", f"b/{display}", lineterm=""))
    added = sum(1 for line in lines if line.startswith("+") and not line.startswith("+++"))
    removed = sum(1 for line in lines if line.startswith("-") and not line.startswith("---"))
    if new_bytes == data:
        raise EditRefused(f"The edit changes nothing in {display} (new_text equals old_text).")
    return PlannedEdit(path, display, data, new_bytes, "\n".join(lines), added, removed)


def write_edit(edit: PlannedEdit) -> None:
    """Write the planned bytes atomically, keeping the file's mode.

    Raises:
        EditRefused: The file changed since the edit was planned.
    """
    current = edit.path.read_bytes() if edit.path.exists() else None
    if current != edit.old:
        raise EditRefused(f"{edit.display} changed while the edit was waiting; read it again and redo the edit.")
    edit.path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{edit.path.name}.", suffix=".edit", dir=edit.path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(edit.new)
            handle.flush()
            os.fsync(handle.fileno())
        if edit.old is not None:
            os.chmod(tmp, os.stat(edit.path).st_mode & 0o7777)
        else:
            mask = os.umask(0)
            os.umask(mask)
            os.chmod(tmp, 0o666 & ~mask)
        os.replace(tmp, edit.path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def edit_file(params: dict[str, Any], project_root: Path) -> TaskResult:
    """The tool: plan, write, and report the diff (blocking: run it in a thread)."""
    try:
        edit = plan_edit(params, project_root)
        write_edit(edit)
    except EditRefused as exc:
        return error_result(f"editFile: {exc}", reason="edit_refused")
    except OSError as exc:
        return error_result(f"editFile: {params.get('path')}: {exc.strerror or exc}", reason="edit_failed")
    return ok_result(f"Edited {edit.summary}\n{edit.diff}", edit_summary=edit.summary, path=edit.display,
                     lines_added=edit.added, lines_removed=edit.removed)


PROJECT_KEY = "editFile:*"
"""What "always for the project" remembers: every file editFile may edit (refused paths stay refused)."""


def edit_key(params: dict[str, Any], project_root: Path) -> str:
    """Under which key "always for this session" is remembered: the file (``editFile:calc.py``)."""
    raw = params.get("path")
    try:
        path = resolve_in_root(str(raw), project_root.resolve())
    except (PathRefused, OSError):
        return ""
    return f"editFile:{relative_display(path, project_root)}"


def _pairs(params: dict[str, Any]) -> list[tuple[str, str]]:
    edits, patch = params.get("edits"), params.get("patch")
    if edits and patch:
        raise EditRefused("Give either `edits` or `patch`, not both.")
    if isinstance(patch, str) and patch.strip():
        return parse_patch(patch)
    if not isinstance(edits, list) or not edits:
        raise EditRefused("Give `edits` (a list of {old_text, new_text}) or a unified `patch`.")
    pairs = []
    for number, item in enumerate(edits, start=1):
        if not isinstance(item, dict) or not isinstance(item.get("old_text"), str) or not isinstance(item.get("new_text"), str):
            raise EditRefused(f"Edit {number} must be an object with string old_text and new_text.")
        pairs.append((item["old_text"], item["new_text"]))
    return pairs


_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@")


def parse_patch(patch: str) -> list[tuple[str, str]]:
    """Each hunk of a one-file unified diff as an (old text, new text) pair."""
    pairs: list[tuple[str, str]] = []
    old: list[str] | None = None
    new: list[str] = []
    for line in patch.splitlines():
        if _HUNK.match(line):
            if old is not None:
                pairs.append(("".join(old), "".join(new)))
            old, new = [], []
        elif old is None or line.startswith(("--- ", "+++ ", "diff ", "index ")):
            continue
        elif line.startswith("\\"):
            continue  # "\ No newline at end of file"
        elif line.startswith("+"):
            new.append(line[1:] + "\n")
        elif line.startswith("-"):
            old.append(line[1:] + "\n")
        else:
            text = (line[1:] if line.startswith(" ") else line) + "\n"
            old.append(text)
            new.append(text)
    if old is not None:
        pairs.append(("".join(old), "".join(new)))
    if not pairs:
        raise EditRefused("The patch has no hunk (lines starting with @@).")
    return pairs


def _replace_once(text: str, old: str, new: str, number: int, display: str) -> str:
    count = text.count(old)
    if count == 1:
        return text.replace(old, new, 1)
    if count == 0 and old.endswith("\n") and text.count(old[:-1]) == 1 and text.endswith(old[:-1]):
        return text[: -len(old) + 1] + new.removesuffix("\n")  # a hunk at the end of a file without a final newline
    if count > 1:
        lines = _lines_of(text, old)
        raise EditRefused(f"Edit {number}: old_text occurs {count} times in {display} (at lines {lines}); "
                          "include more surrounding lines so it matches once.")
    first = next((line for line in old.splitlines() if line.strip()), "")
    near = [str(i) for i, line in enumerate(text.splitlines(), start=1) if first and line.strip() == first.strip()]
    hint = (f" Its first line appears at line(s) {', '.join(near[:10])}: check indentation and the lines after it."
            if near else " Read the file again and quote its current text.")
    raise EditRefused(f"Edit {number}: old_text was not found in {display}.{hint}")


def _lines_of(text: str, old: str) -> str:
    found, start = [], 0
    while (index := text.find(old, start)) != -1 and len(found) < 10:
        found.append(str(text.count("\n", 0, index) + 1))
        start = index + 1
    return ", ".join(found)


def _decode(data: bytes, display: str) -> tuple[str, bytes, str]:
    """``(encoding, bom, text)`` of a text file.

    Raises:
        EditRefused: Binary or not in a known encoding.
    """
    for bom, encoding in ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be")):
        if data.startswith(bom):
            try:
                return encoding, bom, data[len(bom):].decode(encoding)
            except UnicodeDecodeError:
                break
    if b"\0" in data[:8192]:
        raise EditRefused(f"{display} is a binary file; editFile edits text.")
    try:
        return "utf-8", b"", data.decode("utf-8")
    except UnicodeDecodeError:
        raise EditRefused(f"{display} is not UTF-8 text; use aiderAutomatic for it.") from None


def register_edit_file(handler: Any) -> bool:
    """Register ``editFile`` on the handler: approval by its diff, "always" per file or for the project."""
    import asyncio

    from core.tools.commands import Verdict

    root = Path(handler.project_root)

    async def policy(params: dict[str, Any]) -> Verdict:
        if handler.approvals.mode == "allow":
            return Verdict("allow")
        key = edit_key(params, root)
        if {key, PROJECT_KEY} & handler.approvals.allowed:  # Approvals will rule "always": no diff to work out
            return Verdict("ask", session_key=key, project_key=PROJECT_KEY)
        try:
            edit = await asyncio.to_thread(plan_edit, params, root)
        except (EditRefused, OSError):
            return Verdict("allow")  # nothing will be written: the tool reports why
        return Verdict("ask", session_key=key, project_key=PROJECT_KEY, detail=f"{edit.summary}\n\n{edit.diff}",
                       title=f"Edit {edit.display}?")

    async def execute(params: dict[str, Any]) -> TaskResult:
        return await asyncio.to_thread(edit_file, params, root)

    def writes(params: dict[str, Any]) -> list[str] | None:
        raw = params.get("path")
        return [raw] if isinstance(raw, str) and raw.strip() else None

    spec = {**EDIT_FILE_SPEC, "approval_policy": policy, "writes": writes}
    return bool(handler.register_tool(spec, execute))
