"""What the chat's Markdown draws: long code lines fold with a marker, inline code keeps its spaces."""

from __future__ import annotations

from typing import Any

from textual.app import App
from textual.content import Content
from textual.geometry import Offset
from textual.selection import Selection

from tests.tui.conftest import refreshed, wait_for
from tui.widgets.markdown_code import CONTINUATION, FoldedCode, fold_line
from tui.widgets.markdown_table import ChatMarkdown

LONG = "x = compute_the_thing(alpha_parameter, beta_parameter, gamma_parameter, delta_parameter)  # end"
ANSWER = f"""The fix:

```python
def f():
\treturn 1
    {LONG}
```

- `login(user)` returns the user
- the `session` is `kept`, then `dropped`

1. `a(b)` returns c

| call | result |
|---|---|
| `login(user)` returns | the user |

The `login(user)` returns the user.
"""


class MarkdownApp(App[None]):
    def compose(self) -> Any:
        yield ChatMarkdown(ANSWER)


def screen_lines(app: App[Any]) -> list[str]:
    """The text of each screen row (what a terminal shows)."""
    return [strip.text.rstrip() for strip in app.screen._compositor.render_strips()]


def test_fold_line_keeps_every_character() -> None:
    line = Content(LONG)
    rows = fold_line(line, 30)
    assert [len(text.plain) for _, text in rows][0] == 30
    assert all(text.cell_length <= 30 - len(CONTINUATION) for _, text in rows[1:])
    assert "".join(text.plain for _, text in rows) == LONG
    assert [offset for offset, _ in rows] == [0, 30, 58, 86]
    assert fold_line(Content("short"), 30) == [(0, Content("short"))]
    wide = Content("日本語" * 10)  # double-width characters are never split
    assert "".join(text.plain for _, text in fold_line(wide, 11)) == wide.plain
    assert all(text.cell_length <= 11 for _, text in fold_line(wide, 11))


async def test_long_code_lines_fold_and_inline_code_keeps_its_spaces() -> None:
    """At the chat pane's width in an 80x24 terminal (48) and in a wide one: code folds, nothing is cut.

    Inline code: a terminal shows "login(user) returns"; snapshot PNGs made with rsvg-convert
    show "login(user)returns" because rsvg drops a text run's leading no-break space, not the app.
    """
    for width in (48, 120):
        app = MarkdownApp()
        async with app.run_test(size=(width, 40)) as pilot:
            await wait_for(pilot, lambda: any(line.strip() == "return 1" for line in screen_lines(app)), what="the answer rendered")
            await refreshed(pilot)
            lines = screen_lines(app)
            code = [line.strip() for line in lines if line.strip().startswith(("x = ", CONTINUATION.strip()))]
            assert all(len(line) <= width for line in lines)
            shown = code[0] + "".join(line.removeprefix(CONTINUATION.strip()).removeprefix(" ") for line in code[1:])
            if width - 8 < len(LONG) + 4:  # Markdown and fence padding: 8 cells
                assert len(code) > 1, lines  # folded, each continuation marked
            assert shown == LONG, lines  # nothing cut
            assert any(line.strip() == "return 1" for line in lines)  # a tab is drawn as spaces
            fence = app.query_one(FoldedCode)
            assert fence.get_selection(Selection(None, None)) == (f"def f():\n        return 1\n    {LONG}", "\n")
            assert fence.get_selection(Selection(Offset(4, 2), Offset(len(LONG) + 4, 2)))[0] == LONG  # copies the line as written

            text = "\n".join(lines)
            assert "• login(user) returns the user" in text
            assert "• the session is kept, then dropped" in text
            assert "1. a(b) returns c" in text
            assert "│ login(user) returns │" in text
            assert "The login(user) returns the user." in text
