"""Line wrapping that breaks a word too long for the line (a URL, a path) after ``/``, ``?``, ``-``…, not mid-word.

Rich and Textual wrap text at spaces and fold a word wider than the line at the
last cell that fits: ``https://docs.example.com/guides/authenticati`` / ``on/…``.
:func:`divide_line` keeps their contract and their result for everything else,
and breaks such a word after its separators instead (after ``/ ? & # =``
first, else after ``- _ . : ; , ~ +``), falling back to the cell fold only for
a piece that is itself wider than the line. :func:`install` puts it in place of
the function both libraries wrap with; ``tests/tui/test_textual_internals.py``
fails loudly if an upgrade moves it.
"""

from __future__ import annotations

import re

import rich.text
import textual.content
from rich._loop import loop_last
from rich._wrap import divide_line as rich_divide_line
from rich._wrap import words
from rich.cells import cell_len

_PRIMARY = re.compile(r"[^/?&#=]*(?:[/?&#=]+|$)")
"""Pieces of a word ending after a run of URL separators (``https://``, ``example.com/``, ``guides/``)."""
_SECONDARY = re.compile(r"[^\-_.:;,~+]*(?:[\-_.:;,~+]+|$)")
"""Pieces of a word ending after a run of word separators (``authorization-``, ``code-``)."""


def word_pieces(word: str, width: int) -> list[str]:
    """``word`` cut after its separators (joined, the pieces are ``word``).

    After ``/ ? & # =`` first; a piece still wider than ``width`` is cut after
    ``- _ . : ; , ~ +`` too. A piece may remain wider than ``width``: it is folded.
    """
    pieces: list[str] = []
    for piece in filter(None, _PRIMARY.findall(word)):
        pieces.extend([piece] if cell_len(piece) <= width else filter(None, _SECONDARY.findall(piece)))
    return pieces


def divide_line(text: str, width: int, fold: bool = True) -> list[int]:
    """Offsets at which to break ``text`` to fit ``width`` cells (``rich._wrap.divide_line``'s contract).

    Words that fit a line are placed exactly as Rich places them. A longer word starts
    a new line and is broken after its separators (:func:`word_pieces`); a piece wider
    than a line is folded at the cell that fills it, as Rich folds.
    """
    if not fold or width < 1 or not any(cell_len(word) > width for word in text.split() if 2 * len(word) > width):
        return rich_divide_line(text, width, fold)  # no word wider than the line (str.split is C: the common case costs little)
    breaks: list[int] = []
    offset = 0
    for start, _end, word in words(text):
        length = cell_len(word.rstrip())
        if width - offset >= length:
            offset += cell_len(word)
            continue
        if offset and start:
            breaks.append(start)
        offset = 0
        if length <= width:
            offset = cell_len(word)
            continue
        position = start
        for last, piece in loop_last(word_pieces(word, width)):
            needed = cell_len(piece.rstrip() if last else piece)
            if offset and width - offset < needed <= width:
                breaks.append(position)
                offset = 0
            if offset + needed <= width:
                offset += cell_len(piece)
                position += len(piece)
                continue
            for character in piece:  # wider than a line: fold it, filling the current line first
                cells = cell_len(character)
                if offset + cells > width and offset and not character.isspace():
                    breaks.append(position)
                    offset = 0
                offset += cells
                position += 1
    return breaks


def install() -> None:
    """Wrap Rich ``Text`` and Textual ``Content`` with :func:`divide_line` (idempotent)."""
    rich.text.divide_line = divide_line  # type: ignore[attr-defined]
    textual.content.divide_line = divide_line  # type: ignore[attr-defined]
