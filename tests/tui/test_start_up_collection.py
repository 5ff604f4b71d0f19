"""Start-up's full garbage collection comes before the SDK's import, never while the user types in the picker (issue 23)."""

from __future__ import annotations

import gc
import threading
from typing import Any

import pytest

from tests.tui.conftest import SIZE, wait_for
from tui import runtime
from tui.app import AssistantApp


async def test_start_up_collects_before_the_sdk_import_not_in_the_picker(real_app: AssistantApp, monkeypatch: pytest.MonkeyPatch) -> None:
    """The SDK's import (prewarm, in a thread) is held until the user types in the file picker; a full collection
    then would hold the GIL in the middle of the search. Seen from outside: CPython's own collector callbacks."""
    monkeypatch.setattr(runtime, "_applied", True)  # as tui.runtime.apply() leaves it in the console script
    provider: Any = real_app.handler.model_provider
    importing, go, imported = threading.Event(), threading.Event(), threading.Event()
    real_prewarm = provider.prewarm

    def slow_import() -> None:  # the real import, later: as on a machine where it takes seconds
        importing.set()
        go.wait(60)
        real_prewarm()
        imported.set()

    monkeypatch.setattr(provider, "prewarm", slow_import)
    picker_open = threading.Event()
    full_in_picker: list[int] = []
    full_before: list[int] = []

    def watch(phase: str, info: dict[str, int]) -> None:
        if phase == "start" and info["generation"] == 2:
            (full_in_picker if picker_open.is_set() else full_before).append(1)

    gc.callbacks.append(watch)
    try:
        async with real_app.run_test(size=SIZE) as pilot:
            await wait_for(pilot, lambda: real_app.files.count >= 3 and importing.is_set())
            await pilot.press("ctrl+o")
            await wait_for(pilot, lambda: type(real_app.screen).__name__ == "FilePickerScreen")
            picker_open.set()
            await pilot.press("a", "p")
            go.set()
            await wait_for(pilot, lambda: imported.is_set() and not [w for w in real_app.workers if w.group == "prewarm"])
            await pilot.press("p")
            await pilot.press("escape")
            await wait_for(pilot, lambda: type(real_app.screen).__name__ != "FilePickerScreen")
            picker_open.clear()
    finally:
        gc.callbacks.remove(watch)
        go.set()
        gc.unfreeze()  # what the app froze stays collectable for the rest of the suite
    assert full_before, "start-up ran no full collection before the SDK's import"
    assert not full_in_picker, f"{len(full_in_picker)} full collection(s) while the user typed in the picker"
