"""Listing many sessions through the cached index stays correct: appends, a corrupt index.

The timings are printed for the record; speed is reported by the benchmark suite, not asserted.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from core.sessions import SessionStore, SessionWriter
from core.sessions.index import INDEX_NAME


def _timed(store: SessionStore, project: Path) -> tuple[float, list]:
    start = time.perf_counter()
    infos = store.list(project)
    return (time.perf_counter() - start) * 1000, infos


@pytest.mark.slow
def test_listing_1000_sessions(store: SessionStore, project: Path) -> None:
    for i in range(1000):
        with SessionWriter(store.create(project), durable=False) as writer:
            for turn in range(5):
                writer.user(f"prompt {i}.{turn} " + "u" * 150)
                writer.assistant("a" * 300)

    index = store.project_dir(project) / INDEX_NAME
    index.unlink(missing_ok=True)
    cold_ms, infos = _timed(store, project)
    warm_ms, again = _timed(store, project)
    with SessionWriter(store.open(infos[-1].id)) as writer:
        writer.user("one more")
    after_append_ms, updated = _timed(store, project)
    index.write_text("{ not json")
    corrupt_index_ms, rebuilt = _timed(store, project)

    print(f"\nlist 1000 sessions: cold {cold_ms:.0f} ms, warm {warm_ms:.0f} ms, "
          f"after an append {after_append_ms:.0f} ms, corrupt index {corrupt_index_ms:.0f} ms")
    assert len(infos) == len(again) == len(rebuilt) == 1000
    assert all(info.turn_count == 5 for info in infos)
    assert updated[0].id == infos[-1].id and updated[0].turn_count == 6
    assert rebuilt == updated
