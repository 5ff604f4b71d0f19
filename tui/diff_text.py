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


def diff_preview(result: str, limit: int) -> Text:
    """The first ``limit`` changed or hunk lines of an editFile result's diff, coloured, with how many more there are.

    The result reads ``Edited calc.py +3 −1`` then the unified diff; its ``---``/``+++`` headers
    and unchanged context lines are left out (the trace's line above names the file).
    """
    lines = [line for line in result.splitlines()[1:] if line.startswith(("+", "-", "@@")) and not line.startswith(("+++", "---"))]
    text = diff_text("\n".join(lines[:limit]))
    text.no_wrap, text.overflow = True, "ellipsis"
    if len(lines) > limit:
        text.append(f"\n… {len(lines) - limit} more lines · Enter expands", style="dim")
    return text
