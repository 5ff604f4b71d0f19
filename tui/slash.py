"""Slash commands that run in the app without the model: /help, /reset, /add, /drop, /files, /task …"""

from __future__ import annotations

import asyncio
import logging
import shlex
from typing import TYPE_CHECKING, Any

from textual import work
from textual.widgets import Static

from core.callables import call_sync_or_async
from core.types import is_error
from tui import sessions
from tui.format import format_tokens
from tui.help import HelpNote
from tui.widgets.chat import MarkdownNote, NoteMessage, UserMessage
from tui.widgets.command_output import CommandOutput

if TYPE_CHECKING:
    from tui.app import AssistantApp

log = logging.getLogger(__name__)


async def run(app: "AssistantApp", name: str, args: str) -> None:
    """Dispatch one command (its name includes the slash)."""
    handler = _COMMANDS.get(name)
    if handler is None:
        await app.chat.add(NoteMessage(f"{name} is not available in this version yet.", kind="warning"))
        return
    await handler(app, args)


async def _help(app: "AssistantApp", args: str) -> None:
    note = HelpNote(app.help_renderable(), classes="md-note help")
    note.border_title = "Keys and commands"
    await app.chat.add(note)


async def _quit(app: "AssistantApp", args: str) -> None:
    app.exit()


async def _reset(app: "AssistantApp", args: str) -> None:
    await sessions.new(app)
    kept = len(app.pinned)
    if kept:
        await app.chat.add(NoteMessage(f"{kept} picked file{'s' if kept != 1 else ''} stay in context (/drop to remove).", kind="info"))


async def _sessions(app: "AssistantApp", args: str) -> None:
    if not sessions.supported(app):
        await app.chat.add(NoteMessage("Sessions are not available: the engine did not start.", kind="warning"))
        return
    from core.sessions import SessionError

    from tui.screens.sessions import SessionPickerScreen

    try:
        found = await asyncio.to_thread(sessions.list_sessions, app)
    except SessionError as exc:
        await app.chat.add(NoteMessage(str(exc), kind="error", title="/sessions"))
        return
    current = getattr(getattr(app.application, "session", None), "id", None)

    async def chosen(session_id: str | None) -> None:
        if session_id and session_id != current:
            await sessions.switch(app, session_id)

    app.push_screen(SessionPickerScreen(found, current), chosen)


async def _export(app: "AssistantApp", args: str) -> None:
    await sessions.export(app, args)


async def _add(app: "AssistantApp", args: str) -> None:
    if not args:
        await app.chat.add(NoteMessage("Usage: /add <glob or path>, e.g. /add src/**/*.py", kind="warning"))
        return
    added = 0
    for pattern in args.split():
        outcome = await app.add_files(pattern)
        if not outcome.confirming:
            added += len(outcome.added)
    if added:
        await app.chat.add(NoteMessage(f"Added {added} file{'s' if added != 1 else ''} to the context.", kind="info"))


async def _drop(app: "AssistantApp", args: str) -> None:
    if not args:
        await app.chat.add(NoteMessage("Usage: /drop <glob or path>", kind="warning"))
        return
    dropped = [path for pattern in args.split() for path in app.drop_files(pattern)]
    message = f"Dropped {len(dropped)} file{'s' if len(dropped) != 1 else ''}." if dropped else f"Nothing in the context matches {args!r}."
    await app.chat.add(NoteMessage(message, kind="info" if dropped else "warning"))


async def _files(app: "AssistantApp", args: str) -> None:
    pane = app.context_pane
    picked = [entry for entry in pane.entries if entry.source == "picked"]
    if not picked:
        await app.chat.add(NoteMessage("No files in the context. Add some with @, ctrl+o or /add <glob>.", kind="info"))
        return
    rows = [f"- `{entry.display}` · {format_tokens(entry.tokens)} tokens{' · read-only' if entry.read_only else ''}" for entry in picked]
    rows.append(f"\n**{format_tokens(pane.picked_tokens)}** of {format_tokens(pane.budget)} tokens")
    await app.chat.add(MarkdownNote("\n".join(rows), title=f"Context · {len(picked)} files"))


async def _cost(app: "AssistantApp", args: str) -> None:
    from tui.cost import cost_report

    note = Static(cost_report(app.handler), classes="md-note cost")
    note.border_title = "Cost"
    await app.chat.add(note)


async def _budget(app: "AssistantApp", args: str) -> None:
    from tui.cost import budget_message

    await app.chat.add(NoteMessage(budget_message(app.handler), kind="info", title="/budget"))


async def _task(app: "AssistantApp", args: str) -> None:
    await app.chat.add(UserMessage(f"/task {args}".rstrip()))
    app.record("user", f"/task {args}".rstrip())
    run_task(app, args)


@work(group="task", exit_on_error=False)
async def run_task(app: "AssistantApp", args: str) -> None:
    """Run ``/task`` through the task system, off the event loop when it blocks."""
    runner = getattr(app.application, "run_task_command", None)
    if runner is None:
        await app.chat.add(NoteMessage("The task system is not available: the engine did not start (see the message above).", kind="error", title="/task"))
        return
    try:
        outcome: Any = await call_sync_or_async(runner, f"/task {args}".rstrip())
    except Exception as exc:  # a failing task is a message, not a crash
        log.exception("/task failed")
        await app.chat.add(NoteMessage(f"/task failed: {exc}", kind="error", title="/task"))
        return
    content = outcome.get("content", "") if isinstance(outcome, dict) else str(outcome)
    failed = isinstance(outcome, dict) and is_error(outcome)
    app.record("task", content, failed=failed)
    metadata = outcome.get("metadata") or {} if isinstance(outcome, dict) else {}
    title = "/task failed" if failed else "/task"
    if failed or "templates" in metadata or "```" not in content:
        # plain text: usage lines such as prompt=<string> must show as typed
        await app.chat.add(NoteMessage(content or "(no output)", kind="error" if failed else "info", title=title))
    else:
        await app.chat.add(MarkdownNote(content, title=title, classes="task-result"))
    diff = metadata.get("diff")
    if isinstance(diff, str) and diff.strip() and "```" not in content:
        await app.chat.add(MarkdownNote(f"```diff\n{diff}\n```", title="diff"))
    app.refresh_context()


async def _mcp(app: "AssistantApp", args: str) -> None:
    manager = app.mcp
    if manager is None:
        await app.chat.add(NoteMessage("MCP servers are not available: the engine did not start.", kind="warning"))
        return
    from tui.screens.mcp import McpScreen

    app.push_screen(McpScreen(manager))


async def _test(app: "AssistantApp", args: str) -> None:
    from core.tools.testcmd import TestCommandError

    try:
        argv = app.application.test_argv() + shlex.split(args)
    except (AttributeError, TestCommandError, ValueError) as exc:
        message = str(exc) if not isinstance(exc, AttributeError) else "The engine did not start (see the message above)."
        await app.chat.add(NoteMessage(message, kind="error", title="/test"))
        return
    await _start_command(app, argv, f"/test {args}".rstrip())


async def _run(app: "AssistantApp", args: str) -> None:
    try:
        argv = shlex.split(args)
    except ValueError as exc:
        await app.chat.add(NoteMessage(f"/run: {exc}. Quote arguments like a shell would.", kind="warning"))
        app.prompt.restore(f"/run {args}")
        return
    if not argv:
        await app.chat.add(NoteMessage("Usage: /run <command>, e.g. /run pytest -q tests/test_calc.py (no shell; "
                                       "use /run sh -c '...' for one)", kind="warning"))
        return
    await _start_command(app, argv, f"/run {args}")


async def _start_command(app: "AssistantApp", argv: list[str], label: str) -> None:
    if app.turn_running:
        app.notify("A reply is still running: Esc cancels it.", severity="warning")
        app.prompt.restore(label)
        return
    if getattr(app.application, "run_user_command", None) is None:
        await app.chat.add(NoteMessage("Commands cannot run: the engine did not start.", kind="error", title=label))
        return
    await app.chat.add(UserMessage(label))
    app.record("user", label)
    output = CommandOutput(f"{shlex.join(argv)} · sandbox")
    await app.chat.add(output)
    app._turn = run_user_command(app, argv, output)
    app.refresh_bindings()


@work(exclusive=True, group="turn", exit_on_error=False)
async def run_user_command(app: "AssistantApp", argv: list[str], output: CommandOutput) -> None:
    """Run the user's command in the sandbox, its output live; Esc kills its whole process tree."""
    app.status.set_state(f"running {argv[0]}…")
    try:
        result = await app.application.run_user_command(argv, on_output=lambda text, stream: output.append(text))
    except asyncio.CancelledError:
        output.finish("Stopped (Esc): the command and every process it started were killed.", failed=True)
        raise
    except Exception as exc:  # a failing command is a message, not a crash
        log.exception("/run failed")
        output.finish(f"Could not run it: {exc}", failed=True)
        return
    finally:
        app.status.set_state("ready")
        app.call_later(app.refresh_bindings)
    output.finish(result.get("content", ""), failed=is_error(result))
    app.record("command", result.get("content", ""), failed=is_error(result))


_COMMANDS = {
    "/help": _help,
    "/quit": _quit,
    "/reset": _reset,
    "/new": _reset,
    "/sessions": _sessions,
    "/export": _export,
    "/add": _add,
    "/drop": _drop,
    "/files": _files,
    "/task": _task,
    "/test": _test,
    "/run": _run,
    "/mcp": _mcp,
    "/cost": _cost,
    "/budget": _budget,
}
