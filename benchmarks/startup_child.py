"""Child process of the time-to-prompt benchmark: start an app, note when its prompt is focused on screen.

``python benchmarks/startup_child.py app|ui|anchor READY_FILE``

``app`` runs the real console entry point (``tui.cli.main([])``), exactly as
``assistant-tui`` does; ``ui`` (a diagnostic) builds the same app without its
engine; ``anchor`` runs a minimal Textual app (a Markdown and an Input). Both run with Textual's headless driver (``TEXTUAL_DRIVER``). The first
frame painted while the prompt has focus writes ``time.time()`` (and which heavy
modules were already imported) to READY_FILE, and the app exits.

This file is run as a script, not imported from the package, so it adds no
imports of its own before the app's.
"""

from __future__ import annotations

import json
import sys
import time

sys.path.pop(0)  # the script's directory (benchmarks/) must not shadow anything
KIND, READY_FILE = sys.argv[1], sys.argv[2]
HEAVY = ("anthropic", "openai", "aider", "litellm", "httpx", "pydantic", "core.config", "core.app", "core.events", "core.session", "core.secrets", "core.checkpoints")
"""Modules the first frame does not need (the SDKs, the settings' pydantic, the engine, the event, session and checkpoint types, the secret patterns)."""

from textual.app import App  # noqa: E402 - both apps import it first thing anyway

_original_display = App._display


def _display(self: App, screen: object, renderable: object) -> None:
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
    self._bench_ready = True  # type: ignore[attr-defined]
    with open(READY_FILE, "w", encoding="utf-8") as fh:
        json.dump({"ready": ready, "imported": [m for m in HEAVY if m in sys.modules]}, fh)
    self.exit()


App._display = _display  # type: ignore[method-assign]

if KIND == "app":
    from tui.cli import main

    main([])
elif KIND == "ui":
    # Diagnostic: the same app with no engine built before the first frame.
    from core.config import load_settings
    from tui.app import make_app

    class _Approvals:  # what core.session.Session asks of a handler's approvals when the app connects
        allowed: frozenset[str] = frozenset()
        mode = "ask"

        def set_approver(self, approve: object) -> None:
            pass

        def set_mode(self, mode: str) -> None:
            pass

    class _NoEngine:
        approvals = _Approvals()
        approve = None
        pinned_files: list[str] = []
        project_root = None

        def get_resource_metrics(self) -> dict[str, object]:
            return {}

        def get_provider_identifier(self) -> str:
            return "anthropic:claude-sonnet-4-5"

    make_app(load_settings(), handler=_NoEngine()).run()
else:
    from textual.app import ComposeResult
    from textual.widgets import Input, Markdown

    class MinimalApp(App[None]):
        """The anchor: a Markdown and a focused Input."""

        def compose(self) -> ComposeResult:
            yield Markdown("# Minimal\n\nA Markdown widget and an Input.")
            yield Input(placeholder="Ask…", id="prompt")

        def on_mount(self) -> None:
            self.query_one(Input).focus()

    MinimalApp().run()
