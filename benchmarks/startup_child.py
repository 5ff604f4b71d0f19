"""Child process of the time-to-prompt benchmark: start an app, note when its prompt is focused on screen.

``python benchmarks/startup_child.py app|ui|anchor READY_FILE``

``app`` runs the real console entry point (``tui.cli.main([])``), exactly as
``assistant-tui`` does; ``ui`` (a diagnostic) launches the same app without the
command line's argument parsing and log set-up (``tui.cli.launch``); ``anchor`` runs a minimal Textual app (a Markdown and an Input). Both run with Textual's headless driver (``TEXTUAL_DRIVER``). The first
frame painted while the prompt has focus writes ``time.time()`` (and which heavy
modules were already imported) to READY_FILE, and the app exits.

This file is run as a script, not imported from the package, so it adds no
imports of its own before the app's.
"""

from __future__ import annotations

import gc
import importlib.abc
import importlib.util
import json
import sys
import time
from typing import Any

sys.path.pop(0)  # the script's directory (benchmarks/) must not shadow anything
KIND, READY_FILE = sys.argv[1], sys.argv[2]
HEAVY = (
    "anthropic", "openai", "aider", "litellm", "httpx", "pydantic", "core.config", "core.app", "core.events", "core.types", "core.session",
    "core.secrets", "core.checkpoints", "tui.widgets.chat", "tui.commands", "tui.conversation", "tui.sessions",
)
"""Modules the first frame does not need (the SDKs, the settings' pydantic, the engine, the event, session and checkpoint
types, the secret patterns; the chat's message widgets, the slash commands, the conversation and the sessions)."""

COLLECTIONS = [0]
"""Garbage collections started before the first focused frame (CPython's collector callbacks)."""


def _count_collection(phase: str, info: dict[str, int]) -> None:
    if phase == "start":
        COLLECTIONS[0] += 1


gc.callbacks.append(_count_collection)


def _display(self: Any, screen: object, renderable: object) -> None:
    _original_display(self, screen, renderable)
    if renderable is None or getattr(self, "_bench_ready", False):
        return
    focused = self.focused
    if focused is None or focused.id != "prompt" or screen is not self.screen:
        return
    from textual._compositor import CompositorUpdate

    if isinstance(renderable, CompositorUpdate):
        renderable.render_segments(self.console)  # what the terminal driver would write
    ready = time.time()
    self._bench_ready = True
    gc.callbacks.remove(_count_collection)
    with open(READY_FILE, "w", encoding="utf-8") as fh:
        json.dump({"ready": ready, "cpu": time.process_time(), "collections": COLLECTIONS[0], "imported": [m for m in HEAVY if m in sys.modules]}, fh)
    self.exit()


class _PatchOnImport(importlib.abc.MetaPathFinder):
    """Wraps ``textual.app.App._display`` once the app itself imports Textual: this script imports nothing of Textual
    first, so the app's start-up (its collector settings included) runs as it does without the benchmark."""

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name != "textual.app":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.loader is not None
        exec_module = spec.loader.exec_module

        def patched(module: Any) -> None:
            global _original_display
            exec_module(module)
            _original_display = module.App._display
            module.App._display = _display

        spec.loader.exec_module = patched  # type: ignore[method-assign]
        return spec


_original_display: Any = None
sys.meta_path.insert(0, _PatchOnImport())

if KIND == "app":
    from tui.cli import main

    main([])
elif KIND == "ui":
    # Diagnostic: the same app launched as the console script launches it, without the command line's own work
    # (argument parsing, the log file); the settings and the engine come after the first frame, as in ``app``.
    from pathlib import Path

    from tui.cli import launch

    def _load_settings() -> object:
        from core.config import load_settings

        return load_settings()

    launch(_load_settings, project_root=Path.cwd())
else:
    from textual.app import App, ComposeResult
    from textual.widgets import Input, Markdown

    class MinimalApp(App[None]):
        """The anchor: a Markdown and a focused Input."""

        def compose(self) -> ComposeResult:
            yield Markdown("# Minimal\n\nA Markdown widget and an Input.")
            yield Input(placeholder="Ask…", id="prompt")

        def on_mount(self) -> None:
            self.query_one(Input).focus()

    MinimalApp().run()
