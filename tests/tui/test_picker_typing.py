"""The file picker while the user types: no full garbage collection meanwhile (issue 23)."""

from __future__ import annotations

import gc

import pytest

from tests.tui.conftest import SIZE, wait_for
from tui import runtime
from tui.app import AssistantApp


async def test_no_full_collection_while_the_picker_is_open(real_app: AssistantApp, monkeypatch: pytest.MonkeyPatch) -> None:
    """A full collection walks every tracked object (~50 ms with a large project indexed): deferred while the picker is open."""
    monkeypatch.setattr(runtime, "_applied", True)  # as tui.runtime.apply() leaves it in the console script
    before = gc.get_threshold()
    try:
        async with real_app.run_test(size=SIZE) as pilot:
            await wait_for(pilot, lambda: real_app.files.count >= 3)
            await pilot.press("ctrl+o")
            await wait_for(pilot, lambda: type(real_app.screen).__name__ == "FilePickerScreen")
            await wait_for(pilot, lambda: gc.get_threshold() == (*before[:2], runtime.NO_FULL_COLLECTION))
            await pilot.press("escape")
            await wait_for(pilot, lambda: type(real_app.screen).__name__ != "FilePickerScreen")
            await wait_for(pilot, lambda: gc.get_threshold() == before)
    finally:
        gc.set_threshold(*before)
