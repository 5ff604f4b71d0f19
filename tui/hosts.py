"""What each controller may ask of the running app, by name (issue 24 s3, "no App handed down").

The controllers (the conversation, the file context, the slash commands) are given the
app typed as one of these protocols, never as ``App``: each names exactly what its
controller does with it, and ``tests/tui/test_hosts.py`` fails when a controller reaches
for anything else (quitting, suspending or pushing screens from a place not meant to).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, ContextManager, Protocol

if TYPE_CHECKING:
    from textual.message import Message
    from textual.screen import Screen
    from textual.widget import Widget
    from textual.worker import Worker, WorkerManager


class CommandHost(Protocol):
    """What a slash command may ask of the app: show a screen (a picker, the MCP list), quit (``/quit``)."""

    def push_screen(self, screen: "Screen[Any]", callback: Callable[[Any], Any] | None = None) -> Any:
        """Show ``screen``; ``callback`` gets what it is dismissed with."""

    def exit(self) -> None:
        """End the app."""


class FileHost(Protocol):
    """What the file context may ask of the app: tell the user something, ask a question (a screen)."""

    def notify(self, message: str, *, severity: str = "information") -> None:
        """A toast."""

    def push_screen(self, screen: "Screen[Any]", callback: Callable[[Any], Any] | None = None) -> Any:
        """Show ``screen``; ``callback`` gets what it is dismissed with."""


class TurnHost(Protocol):
    """What the conversation may ask of the app: run the turn worker, ask for approval, lend the terminal to aider."""

    @property
    def screen(self) -> "Screen[Any]":
        """The screen on top (an approval being answered)."""

    @property
    def workers(self) -> "WorkerManager":
        """The app's workers (to wait for a cancelled turn)."""

    def notify(self, message: str, *, severity: str = "information") -> None:
        """A toast."""

    def push_screen(self, screen: "Screen[Any]", callback: Callable[[Any], Any] | None = None) -> Any:
        """Show ``screen`` (a tool call's whole result)."""

    async def push_screen_wait(self, screen: "Screen[Any]") -> Any:
        """Show ``screen`` and wait for its answer (an approval)."""

    def run_worker(self, work: Any, *, group: str = "default", exclusive: bool = False, exit_on_error: bool = True) -> "Worker[Any]":
        """Run ``work`` in a worker (the one turn worker, a /task)."""

    def refresh_bindings(self) -> None:
        """Bindings that depend on a running turn changed."""

    def call_later(self, callback: Callable[..., Any], *args: Any) -> bool:
        """Run ``callback`` after the messages waiting now."""

    def post_message(self, message: "Message") -> bool:
        """A turn's report to the app (a query given back, files suggested)."""

    def suspend(self) -> ContextManager[None]:
        """Give the terminal to an interactive program (aider)."""

    def refresh(self, *, layout: bool = False) -> Any:
        """Redraw everything (after the terminal comes back)."""


class StartHost(Protocol):
    """What the start-up may ask of the app: ask whether to trust the project (a screen), run its background work,
    say that a message waits for the engine, and end the app when the settings are invalid."""

    def push_screen(self, screen: "Screen[Any]", callback: Callable[[Any], Any] | None = None) -> Any:
        """Show ``screen`` (the trust question); ``callback`` gets the answer."""

    def notify(self, message: str, *, severity: str = "information") -> None:
        """A toast (a message kept until the engine is ready)."""

    def run_worker(self, work: Any, *, thread: bool = False, group: str = "default", exit_on_error: bool = True) -> "Worker[Any]":
        """Run ``work`` in a worker (the file list, the SDK's prewarm, the sandbox notice)."""

    def call_later(self, callback: Callable[..., Any], *args: Any) -> bool:
        """Run ``callback`` after the messages waiting now (an MCP server's failure, heard from its task)."""

    def call_after_refresh(self, callback: Callable[..., Any], *args: Any) -> bool:
        """Run ``callback`` once the screen is drawn (the onboarding shown from its top)."""

    def exit(self, result: Any = None, return_code: int = 0) -> None:
        """End the app (the settings are invalid: the command prints why)."""


class FocusHost(Protocol):
    """What the pane focus may ask of the app: the screen on top and what has the focus there, and a toast."""

    @property
    def screen(self) -> "Screen[Any]":
        """The screen on top (the focus moves only on the main one)."""

    @property
    def focused(self) -> "Widget | None":
        """The widget with the focus."""

    def notify(self, message: str, *, severity: str = "information") -> None:
        """A toast ("No tool calls yet.")."""
