"""FileSource without an engine: one matcher, however the listing thread and the event loop race.

Found through the picker's snapshot tests, which failed 3 runs in 3 when run alone: the
listing thread began creating the matcher (importing numpy), the picker's count on the
event loop saw none yet and made a second one, which then replaced the listed one, so
the picker showed no files until the next listing.
"""

from __future__ import annotations

import threading
from pathlib import Path

import core.memory.fuzzy as fuzzy
from tui.file_source import FileSource

HANG = 30.0
"""Seconds before a wait is a hang (the waits are on events, never on time)."""


def test_one_matcher_when_the_listing_and_the_loop_ask_at_once(tmp_path: Path, monkeypatch) -> None:
    for name in ("a.py", "b.py", "c.md"):
        (tmp_path / name).write_text("x\n")
    created: list[object] = []
    first_begun, release = threading.Event(), threading.Event()

    class SlowFirst(fuzzy.FuzzyMatcher):
        def __init__(self, *args, **kwargs) -> None:
            created.append(self)
            if len(created) == 1:  # the listing thread's: held while the loop asks
                first_begun.set()
                assert release.wait(HANG)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(fuzzy, "FuzzyMatcher", SlowFirst)
    source = FileSource(tmp_path)
    listing = threading.Thread(target=source.load)
    listing.start()
    assert first_begun.wait(HANG)
    assert source.count == 0  # the loop's question makes no matcher (and imports nothing)
    release.set()
    listing.join(HANG)
    assert source.count == 3 and len(created) == 1
    assert [path for path, _ in source.search("py", 10)] == ["a.py", "b.py"]
