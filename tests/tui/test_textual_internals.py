"""Textual and Rich internals the TUI leans on: each is checked here, so an upgrade that changes one fails loudly.

Textual offers no public extension point for what these do (a table or list drawn by
one widget, a code block that folds, knowing whether the chat's anchor was released,
a footer that leaves keys out whole, where text is wrapped). Every private name the
TUI uses is listed in :data:`INTERNALS` with the module that uses it; a failure
names the internal, what changed and where it is used. After a Textual or Rich
upgrade: fix the code named in the failure, then update ``VERIFIED_WITH`` and
``constraints.txt`` together.
"""

from __future__ import annotations

import inspect
import tomllib
from dataclasses import dataclass
from importlib import import_module
from importlib.metadata import version
from pathlib import Path
from typing import Any, Callable

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]

VERIFIED_WITH = {"textual": "8.2.8", "rich": "14.3.2"}
"""The versions whose internals were read and checked against the code that uses them."""


@dataclass(frozen=True)
class Internal:
    """A private name, what we rely on about it, and who relies on it."""

    name: str
    """Dotted path: ``module:attribute.attribute``."""
    used_by: str
    expect: Callable[[Any], str | None]
    """Returns what is wrong (None: as expected)."""


def resolve(name: str) -> Any:
    module, _, path = name.partition(":")
    obj: Any = import_module(module)
    for part in filter(None, path.split(".")):
        obj = getattr(obj, part)
    return obj


def params(*names: str, coroutine: bool = False) -> Callable[[Any], str | None]:
    """The callable takes exactly these parameters (and is a coroutine function when asked)."""

    def check(obj: Any) -> str | None:
        found = list(inspect.signature(obj).parameters)
        if found != list(names):
            return f"its parameters are now {found}, expected {list(names)}"
        if coroutine and not inspect.iscoroutinefunction(obj):
            return "it is no longer a coroutine function"
        return None

    return check


def subclass_of(base: str) -> Callable[[Any], str | None]:
    return lambda obj: None if inspect.isclass(obj) and issubclass(obj, resolve(base)) else f"it is no longer a subclass of {base}"


def source_has(*fragments: str) -> Callable[[Any], str | None]:
    """Its source still contains these fragments (how it uses a name we replace or an id we keep)."""

    def check(obj: Any) -> str | None:
        source = inspect.getsource(obj)
        missing = [fragment for fragment in fragments if fragment not in source]
        return f"its source no longer contains {missing}" if missing else None

    return check


MARKDOWN = "textual.widgets._markdown"
LISTS_AND_TABLES = "tui/widgets/markdown_table.py (CompactTable, CompactBulletList, CompactOrderedList)"

INTERNALS = [
    Internal(f"{MARKDOWN}:MarkdownTable", LISTS_AND_TABLES, subclass_of("textual.widgets.markdown:MarkdownBlock")),
    Internal(f"{MARKDOWN}:MarkdownBulletList", LISTS_AND_TABLES, subclass_of("textual.widgets.markdown:MarkdownBlock")),
    Internal(f"{MARKDOWN}:MarkdownOrderedList", LISTS_AND_TABLES, subclass_of("textual.widgets.markdown:MarkdownBlock")),
    Internal(f"{MARKDOWN}:MarkdownListItem.__init__", LISTS_AND_TABLES + ": bullet", params("self", "markdown", "token", "bullet")),
    Internal(f"{MARKDOWN}:MarkdownParagraph", LISTS_AND_TABLES, subclass_of("textual.widgets.markdown:MarkdownBlock")),
    Internal(f"{MARKDOWN}:MarkdownBlock._update_from_block", LISTS_AND_TABLES, params("self", "block", coroutine=True)),
    Internal(f"{MARKDOWN}:MarkdownTable._get_headers_and_rows", "tui/widgets/markdown_table.py (CompactTable)", params("self")),
    Internal(f"{MARKDOWN}:MarkdownBlock.__init__", LISTS_AND_TABLES + ": _blocks, _content", source_has("self._blocks", "self._content")),
    Internal(f"{MARKDOWN}:Markdown._parse_markdown", LISTS_AND_TABLES + ": children in the parent's _blocks", source_has("stack[-1]._blocks.append(block)")),
    Internal(
        f"{MARKDOWN}:MarkdownFence",
        "tui/widgets/markdown_code.py (FoldingFence: _highlighted_code, the #code-content Label)",
        source_has("self._highlighted_code", 'query_one("#code-content", Label)'),
    ),
    Internal(
        "textual.widget:Widget.release_anchor",
        "tui/widgets/chat_view.py (ChatView.following reads _anchor_released)",
        source_has("self._anchor_released = True"),
    ),
    Internal("textual.widgets._footer:FooterKey.__init__", "tui/widgets/footer.py (fit_keys, key_width)", params("self", "key", "key_display", "description", "action", "disabled", "tooltip", "classes")),
    Internal("textual.widgets._footer:Footer", "tui/widgets/footer.py (KeyFooter: _bindings_ready, the -command-palette key)", source_has("_bindings_ready", '"-command-palette"')),
    Internal("textual.content:Content._wrap_and_format", "tui/wrap.py (install: Content wraps with textual.content.divide_line)", source_has("divide_line(")),
    Internal("rich.text:Text.wrap", "tui/wrap.py (install: Text wraps with rich.text.divide_line)", source_has("divide_line(")),
    Internal("rich._wrap:divide_line", "tui/wrap.py (divide_line keeps its contract, delegates to it)", params("text", "width", "fold")),
    Internal("rich._wrap:words", "tui/wrap.py (the same word segmentation)", params("text")),
    Internal("rich._loop:loop_last", "tui/wrap.py", params("values")),
    Internal("textual.message_pump:MessagePump._on_message", "tui/widgets/prompt.py (PromptInput guards every handler by wrapping it)", params("self", "message", coroutine=True)),
    Internal("textual.message_pump:MessagePump._dispatch_message", "tui/widgets/prompt.py (events and messages both reach _on_message)", source_has("await self.on_event(message)", "await self._on_message(message)")),
    Internal("textual.dom:DOMNode.__init__", "tui/widgets/prompt.py (PromptInput runs its own bindings from _bindings.key_to_bindings)", source_has("self._bindings = (")),
    Internal("textual.message_pump:MessagePump.on_event", "tui/widgets/prompt.py (events reach _on_message)", source_has("await self._on_message(event)")),
]


@pytest.mark.parametrize("internal", INTERNALS, ids=[i.name for i in INTERNALS])
def test_internal_is_as_the_code_expects(internal: Internal) -> None:
    try:
        obj = resolve(internal.name)
    except (ImportError, AttributeError) as exc:
        pytest.fail(f"{internal.name} is gone ({exc}); used by {internal.used_by}")
    problem = internal.expect(obj)
    assert problem is None, f"{internal.name} changed: {problem}; used by {internal.used_by}"


def test_the_blocks_have_the_shape_the_compact_widgets_read() -> None:
    """Parsed blocks: list items hold paragraphs with ``_content`` and a ``bullet``; tables give headers and rows; fences keep their code."""
    from textual.app import App
    from textual.content import Content
    from textual._context import active_app

    from tui.widgets.markdown_table import ChatMarkdown, CompactBulletList, CompactTable

    token = active_app.set(App())  # a fence reads the app's colour settings when built
    try:
        blocks = ChatMarkdown()._build_from_source("- a\n- b\n\n| h | i |\n|---|---|\n| 1 | 2 |\n\n```py\nx = 1\n```\n")
    finally:
        active_app.reset(token)
    bullets, table, fence = blocks
    assert isinstance(bullets, CompactBulletList) and isinstance(table, CompactTable), [type(b).__name__ for b in blocks]
    item = bullets._blocks[0]
    assert item.bullet.strip() == "•" and [child._content.plain for child in item._blocks] == ["a"]
    headers, rows = table._get_headers_and_rows()
    assert [h.plain for h in headers] == ["h", "i"] and [[c.plain for c in row] for row in rows] == [["1", "2"]]
    assert isinstance(fence._highlighted_code, Content) and fence._highlighted_code.plain.strip() == "x = 1"


@pytest.mark.parametrize("package", sorted(VERIFIED_WITH))
def test_the_installed_version_is_the_verified_one_and_constraints_and_bounds_agree(package: str) -> None:
    installed = version(package)
    pins = [Requirement(line.split("#")[0]) for line in (ROOT / "constraints.txt").read_text().splitlines() if line.split("#")[0].strip()]
    pinned = {str(r.specifier).removeprefix("==") for r in pins if r.name.lower() == package}
    assert pinned == {installed}, f"constraints.txt pins {package} {pinned or 'nowhere'}, but {installed} is installed"
    assert installed == VERIFIED_WITH[package], (
        f"{package} {installed} is installed, but the internals listed here were verified with {VERIFIED_WITH[package]}: "
        "read the changes of the names in INTERNALS, fix their users, then update VERIFIED_WITH and constraints.txt"
    )
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    (requirement,) = [r for r in map(Requirement, dependencies) if r.name == package]
    assert installed in requirement.specifier, f"pyproject.toml's {requirement} does not allow the tested {package} {installed}"
    next_major = f"{int(installed.split('.')[0]) + 1}.0.0"
    assert next_major not in requirement.specifier, (
        f"pyproject.toml's {requirement} allows {package} {next_major}, whose internals were never checked: bound it below the next major"
    )
