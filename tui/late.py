"""The app's parts its first frame does not need, built at their first use.

The conversation, the sessions, the start-up and the slash commands import the chat's
message widgets and the command registry: a fifth of the app's own import time before
the first frame. :class:`tui.app.AssistantApp` holds each of these functions as a cached
property, so a part is built when first read: after the first frame for the console
script (``on_mount``), at once when a test's engine is already built.
"""

from __future__ import annotations

import importlib
from functools import partial
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tui.conversation import Conversation
    from tui.file_source import FileSource
    from tui.sessions import Sessions
    from tui.slash import CommandContext
    from tui.startup import StartUp
    from tui.widgets.prompt import Completion


MODULES = ("tui.widgets.chat", "tui.conversation", "tui.sessions", "tui.startup", "tui.commands")
"""What the parts below import (with Textual's Markdown and its parser): loaded by :func:`preload`."""


def preload() -> None:
    """Import :data:`MODULES` (about 100 ms), in a thread the app starts after its first frame.

    On the event loop this import held the keys typed in the first moments; in a thread it
    yields the interpreter to the loop every few milliseconds. A part read meanwhile waits
    on the import lock for the rest of its module, as it would have imported it itself.
    """
    for name in MODULES:
        importlib.import_module(name)


def conversation(app: Any) -> Conversation:
    from tui.conversation import Conversation

    built = Conversation(app.engine, chat=app.chat, trace=app.trace, status=app.status, prompt=app.prompt, files=app.file_context, host=app)
    app.file_context.on_change = built.refresh_metrics
    app.engine.connect(approve=built.approve, run_interactive=built.run_interactive)
    return built


def sessions(app: Any) -> Sessions:
    from tui.sessions import Sessions

    return Sessions(app.engine, app.conversation, app.file_context)


def startup(app: Any) -> StartUp:
    from tui.startup import StartUp

    return StartUp(app.engine, sessions=app.sessions, conversation=app.conversation, file_context=app.file_context,
                   files=app.files, status=app.status, host=app, session_request=app.session_request, send=app.submit)


def command_context(app: Any) -> CommandContext:
    from tui.commands import COMMANDS
    from tui.help import key_sections
    from tui.slash import CommandContext

    return CommandContext(engine=app.engine, chat=app.chat, prompt=app.prompt, files=app.file_context, sessions=app.sessions,
                          conversation=app.conversation, screens=app, keys=partial(key_sections, app.BINDINGS), commands=COMMANDS)


def complete(line: str, *, files: FileSource) -> tuple[int, list[Completion]] | None:
    """The prompt's completer (:func:`tui.commands.complete`); the command registry loads at its first use."""
    from tui.commands import complete as complete_line

    return complete_line(line, files=files)
