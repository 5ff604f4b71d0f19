"""A unified diff as coloured Rich text: additions green, removals red, hunk headers cyan (issue 26)."""

from __future__ import annotations

from rich.text import Text

from core.text import visible_text


def looks_like_diff(text: str) -> bool:
    """True when ``text`` holds a unified diff (a ``--- ``/``+++ `` pair or a hunk header)."""
    return "\n@@ " in text or text.startswith("@@ ") or ("\n--- " in text and "\n+++ " in text)


def diff_text(diff: str) -> Text:
    """``diff`` coloured line by line; invisible characters shown (``visible_text``), never obeyed."""
    text = Text(no_wrap=False)
    for line in diff.splitlines():
        shown = visible_text(line)
        if line.startswith(("+++", "---")):
            style = "bold"
        elif line.startswith("+"):
            style = "green"
        elif line.startswith("-"):
            style = "red"
        elif line.startswith("@@"):
            style = "cyan"
        elif line.startswith("#"):
            style = "bold yellow"
        else:
            style = ""
        text.append(shown + "\n", style=style)
    text.rstrip()
    return text
