"""editFile on its own: what it refuses (and says where), what it keeps (encoding, line endings, mode)."""

from __future__ import annotations

import codecs
import os
from pathlib import Path

import pytest

from core.tools.edit_file import edit_file, parse_patch
from core.types import is_error

ROOT_TEXT = "def f():\n    return 1\n\n\ndef g():\n    return 1\n"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "a.py").write_text(ROOT_TEXT)
    return tmp_path


def test_ambiguous_old_text_is_refused_naming_the_lines(root: Path) -> None:
    result = edit_file({"path": "a.py", "edits": [{"old_text": "    return 1\n", "new_text": "    return 2\n"}]}, root)
    assert is_error(result) and "occurs 2 times" in result["content"] and "lines 2, 6" in result["content"]
    assert (root / "a.py").read_text() == ROOT_TEXT


def test_missing_old_text_is_refused_naming_where_its_first_line_is(root: Path) -> None:
    result = edit_file({"path": "a.py", "edits": [{"old_text": "def g():\n  return 1\n", "new_text": "x"}]}, root)
    assert "not found" in result["content"] and "line(s) 5" in result["content"]
    assert (root / "a.py").read_text() == ROOT_TEXT


def test_all_or_nothing_when_a_later_edit_fails(root: Path) -> None:
    edits = [{"old_text": "def f():", "new_text": "def f2():"}, {"old_text": "nowhere", "new_text": "x"}]
    assert "Edit 2" in edit_file({"path": "a.py", "edits": edits}, root)["content"]
    assert (root / "a.py").read_text() == ROOT_TEXT


def test_crlf_bom_and_mode_are_kept(root: Path) -> None:
    path = root / "w.txt"
    path.write_bytes(codecs.BOM_UTF8 + "héllo\r\nworld\r\n".encode())
    os.chmod(path, 0o751)
    result = edit_file({"path": "w.txt", "edits": [{"old_text": "world\n", "new_text": "there\nworld\n"}]}, root)
    assert result["metadata"]["edit_summary"] == "w.txt +1 −0", result["content"]
    assert path.read_bytes() == codecs.BOM_UTF8 + "héllo\r\nthere\r\nworld\r\n".encode()
    assert os.stat(path).st_mode & 0o777 == 0o751


def test_utf16_file_is_edited_in_utf16(root: Path) -> None:
    path = root / "u.txt"
    path.write_bytes(codecs.BOM_UTF16_LE + "one\ntwo\n".encode("utf-16-le"))
    edit_file({"path": "u.txt", "edits": [{"old_text": "two", "new_text": "deux"}]}, root)
    assert path.read_bytes() == codecs.BOM_UTF16_LE + "one\ndeux\n".encode("utf-16-le")


def test_a_unified_patch_applies_by_its_text(root: Path) -> None:
    patch = "--- a/a.py\n+++ b/a.py\n@@ -4,3 +4,3 @@\n \n def g():\n-    return 1\n+    return 3\n"
    result = edit_file({"path": "a.py", "patch": patch}, root)
    assert not is_error(result), result["content"]
    assert (root / "a.py").read_text() == ROOT_TEXT.replace("def g():\n    return 1", "def g():\n    return 3")
    assert parse_patch(patch) == [("\ndef g():\n    return 1\n", "\ndef g():\n    return 3\n")]


@pytest.mark.parametrize("path", [".git/config", ".envrc", ".env", "../outside.py", "/etc/passwd"])
def test_protected_secret_and_outside_paths_are_refused(root: Path, path: str) -> None:
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("[core]\n")
    (root / ".envrc").write_text("x\n")
    (root / ".env").write_text("KEY=1\n")
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    result = edit_file({"path": path, "edits": [{"old_text": "", "new_text": "pwned\n"}]}, root)
    assert is_error(result), result["content"]
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} == before
    assert not (root.parent / "outside.py").exists()


def test_a_hard_linked_file_is_not_edited(root: Path) -> None:
    os.link(root / "a.py", root / "b.py")
    result = edit_file({"path": "b.py", "edits": [{"old_text": "def f", "new_text": "def h"}]}, root)
    assert "hard link" in result["content"] and (root / "a.py").read_text() == ROOT_TEXT
