"""What the matcher's long scans found for the last query, so a query extending it only re-checks those lines.

A line matching ``q + c`` matches ``q``: when a scan for ``q`` ran to its end over
a region, the scan for ``q + c`` over the same region finds exactly the lines of
the first that still match, in the same order. Testing those few lines one by one
replaces reading the region again (600,000 characters for the whole-path tier).
"""

from __future__ import annotations

import re
from typing import Callable, Hashable, Iterator

Scan = Callable[[], Iterator[int]]


class ScanMemo:
    """The last complete scan of each tier: its region, query and lines (path or directory indices)."""

    def __init__(self) -> None:
        self._kept: dict[str, tuple[Hashable, str, list[int]]] = {}

    def clear(self) -> None:
        """Forget every scan (the paths changed)."""
        self._kept.clear()

    def lines(self, tier: str, region: Hashable, query: str, scan: Scan, test: str, text: Callable[[int], str]) -> Iterator[int]:
        """The lines of ``tier``'s scan for ``query`` over ``region``, in order.

        Args:
            tier: Which scan.
            region: What it reads (equal regions read the same texts).
            query: The lowercase query.
            scan: Reads the region (when nothing kept applies).
            test: The pattern a line, preceded by a newline, must match from its start.
            text: A line's text as the scan sees it.
        """
        kept = self._kept.get(tier)
        if kept is not None and kept[0] == region and query.startswith(kept[1]):
            match = re.compile(test).match
            found = [line for line in kept[2] if match("\n" + text(line))]
            self._kept[tier] = (region, query, found)
            return iter(found)
        return self._recorded(tier, region, query, scan())

    def _recorded(self, tier: str, region: Hashable, query: str, lines: Iterator[int]) -> Iterator[int]:
        found: list[int] = []
        for line in lines:
            found.append(line)
            yield line
        self._kept[tier] = (region, query, found)  # only a scan read to its end is kept
