"""The ``assistant-tui`` command: the TUI by default, one headless turn with ``-p``.

Headless mode prints the final answer (or one JSON event per line with
``--output-format jsonl``). Nobody can answer approval prompts there, so tool calls
that need approval are denied (and the model told why) unless ``--yes`` is given.
Failures print one human line on stderr and exit non-zero; never a traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import sys
from functools import partial
from typing import TYPE_CHECKING, Any, Callable, Sequence

if TYPE_CHECKING:  # imported where a headless turn runs: its dataclasses are not on the TUI's path to the first frame
    from core import events as ev

from core.exit_codes import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE

log = logging.getLogger(__name__)



def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="assistant-tui",
        description="A terminal coding assistant. Without -p it opens the full-screen app.",
        epilog="assistant-tui rewind --list / rewind N undoes turns (see assistant-tui rewind --help). assistant-tui acp runs it as an Agent Client Protocol agent on stdio (for Zed, Toad...); see assistant-tui acp --help.",
    )
    parser.add_argument("-p", "--print", dest="query", metavar="QUERY", help="run one turn headless and print the answer ('-' reads stdin)")
    parser.add_argument("--output-format", choices=("text", "jsonl"), default="text", help="headless output: the final answer, or one JSON event per line")
    parser.add_argument("--provider", choices=("anthropic", "openai"), help="model provider")
    parser.add_argument("--model", help="chat model name")
    parser.add_argument("--max-tool-calls", type=int, metavar="N", help="most tool calls per user turn")
    parser.add_argument("--context-window", type=int, metavar="TOKENS", help="context window in tokens")
    parser.add_argument("--approval-mode", choices=("ask", "allow", "deny"), help="what to do with tool calls that change things")
    parser.add_argument("--aider-model", help="model aider uses, in aider's naming")
    parser.add_argument("--thinking", metavar="BUDGET", help="Anthropic extended thinking: off, or a token budget (at least 1024)")
    parser.add_argument("--sandbox-auto", action="store_true", help="run the model's commands in the sandbox without asking (network still asks)")
    parser.add_argument("-y", "--yes", action="store_true", help="approve every tool call (headless)")
    parser.add_argument("-C", "--project", metavar="DIR", help="project directory (default: the current directory)")
    parser.add_argument("-c", "--continue", dest="continue_session", action="store_true", help="continue the most recent session of this project")
    parser.add_argument("--resume", metavar="ID", help="resume the session with this id")
    parser.add_argument("--trust", action="store_true",
                        help="trust this project (remembered): its .env and .mcp.json apply; until then they are ignored")
    parser.add_argument("--mcp-config", metavar="FILE", help="also start the MCP servers of FILE (.mcp.json format, or TOML with [mcp_servers.NAME])")
    parser.add_argument("--no-mcp", action="store_true", help="start no MCP server")
    parser.add_argument("--max-cost", type=float, metavar="USD", help="session budget in US dollars: the loop stops before a request that would exceed it")
    parser.add_argument("--max-turn-cost", type=float, metavar="USD", help="budget of one user turn in US dollars")
    parser.add_argument("--no-prompt-cache", action="store_true", help="send no Anthropic cache_control breakpoints")
    parser.add_argument("--cache-ttl", choices=("5m", "1h"), help="Anthropic prompt-cache lifetime (1h writes cost 2x input instead of 1.25x)")
    parser.add_argument("--debug", action="store_true", help="log debug details to the log file")
    parser.add_argument("--version", action="version", version="assistant-tui 0.1.0")
    return parser


def _overrides(args: argparse.Namespace) -> dict[str, Any]:
    overrides: dict[str, Any] = {
        "provider": args.provider,
        "model": args.model,
        "max_tool_calls": args.max_tool_calls,
        "context_window": args.context_window,
        # --approval-mode deny is read-only whatever --yes says: deny wins.
        "approval_mode": "allow" if args.yes and args.approval_mode != "deny" else args.approval_mode,
        "aider_model": args.aider_model,
        "mcp_config": args.mcp_config,
        "mcp_enabled": False if args.no_mcp else None,
        "thinking": args.thinking,
        "max_cost": args.max_cost,
        "max_turn_cost": args.max_turn_cost,
        "prompt_cache": False if args.no_prompt_cache else None,
        "cache_ttl": args.cache_ttl,
        "command_approval": "sandbox-auto" if args.sandbox_auto else None,
    }
    if args.project:
        overrides["project_root"] = args.project
    return overrides


def _error(message: str) -> None:
    """One line on stderr (an error or a notice); text from outside is shown, never obeyed by the terminal."""
    from core.text import for_terminal

    sys.stderr.write(f"assistant-tui: {for_terminal(message)}\n")


STOP_NOTES = {
    "max_tokens": "the answer stopped at the model's output limit (max_tokens); run `assistant-tui -c -p /continue` for the rest",
    "refusal": "the model refused to answer",
    "content_filter": "the provider's content filter stopped the answer",
}
"""What plain headless output adds on stderr when the answer ended for one of these reasons."""

TUILauncher = Callable[..., "int | None"]
"""``launch_tui(load_settings, project_root=, continue_session=, resume=)``: runs the app; returns its exit status.

``load_settings()`` returns the settings or raises :class:`StartupError`; the app calls it after its first frame
and, when it failed, raises that error again once the terminal is restored."""


def main(argv: Sequence[str] | None = None, *, launch_tui: TUILauncher | None = None) -> int:
    """Entry point of the console script; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["acp"]:  # `assistant-tui acp`: an Agent Client Protocol agent on stdio
        from core.acp import main as acp_main

        return acp_main(argv[1:])
    if argv[:1] == ["rewind"]:  # `assistant-tui rewind`: issue 26
        from core.checkpoints.cli import rewind_main

        return rewind_main(argv[1:])
    args = build_parser().parse_args(argv)
    try:
        return _main(args, launch_tui)
    except KeyboardInterrupt:
        _error("interrupted")
        return EXIT_INTERRUPTED
    except Exception as exc:  # noqa: BLE001 - the user never sees a traceback
        log.exception("fatal error")
        _error(f"{exc.__class__.__name__}: {exc}. Details are in the log file.")
        return EXIT_FAILED


def _main(args: argparse.Namespace, launch_tui: TUILauncher | None = None) -> int:
    from pathlib import Path

    from core.logging_setup import setup_logging

    if args.project and not Path(args.project).is_dir():
        _error(f"project directory {args.project!r} does not exist")
        return EXIT_USAGE
    if args.max_tool_calls is not None and args.max_tool_calls < 0:
        _error("--max-tool-calls must be 0 or more")
        return EXIT_USAGE
    if args.mcp_config and not Path(args.mcp_config).expanduser().is_file():
        _error(f"--mcp-config {args.mcp_config!r}: no such file")
        return EXIT_USAGE
    setup_logging((), level=logging.DEBUG if args.debug else logging.INFO)  # the settings' secrets join it once loaded
    if args.trust:  # the only way -p trusts a project: it never does by itself
        from core.trust import TrustError, trust_project

        try:
            trust_project(Path(args.project or ".").resolve())
        except TrustError as exc:
            _error(str(exc))
            return EXIT_FAILED
    overrides = _overrides(args)

    if args.query is None:
        if launch_tui is None:  # core knows no UI; the console script (tui.cli) passes the app
            _error("no user interface is available here; use -p QUERY for headless mode")
            return EXIT_USAGE
        # The app paints its prompt first and loads the configuration (pydantic: ~0.1 s of start-up) after the first frame.
        try:
            status = launch_tui(partial(_load_settings, overrides), project_root=Path(args.project or ".").resolve(),
                                continue_session=args.continue_session, resume=args.resume)
        except StartupError as exc:  # the app has closed: the same line as without it
            _error(str(exc))
            return exc.status
        return status or EXIT_OK

    try:
        settings = _load_settings(overrides)
    except StartupError as exc:
        _error(str(exc))
        return exc.status
    for notice in settings.notices:
        _error(notice)
    query = sys.stdin.read() if args.query == "-" else args.query
    if not query.strip():
        _error("the query is empty")
        return EXIT_USAGE
    return asyncio.run(run_headless(settings, query, args.output_format, continue_session=args.continue_session, resume=args.resume))


class StartupError(Exception):
    """The settings could not be loaded: ``str(error)`` is the line to show, :attr:`status` the exit status."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


def _load_settings(overrides: dict[str, Any]) -> Any:
    """The settings from every source (``core.config.load_settings``), their secrets redacted from the log from now on.

    Raises:
        StartupError: the configuration is invalid (exit status 2) or could not be read (1).
    """
    from core.config import ConfigError, load_settings
    from core.logging_setup import add_secrets

    try:
        settings = load_settings(overrides)
    except ConfigError as exc:
        raise StartupError(f"configuration error: {exc}", EXIT_USAGE) from exc
    except Exception as exc:  # e.g. an unreadable config file: one human line, the details in the log
        log.exception("could not load the settings")
        raise StartupError(f"{exc.__class__.__name__}: {exc}. Details are in the log file.", EXIT_FAILED) from exc
    add_secrets(settings.secrets())
    log.info("starting (provider %s, project %s)", settings.provider, settings.project_root)
    return settings


async def run_headless(
    settings: Any, query: str, output_format: str = "text", *, continue_session: bool = False, resume: str | None = None
) -> int:
    """One turn without the TUI, recorded in the project's session; returns the exit status."""
    from core.app import Application
    from core.sessions import SessionError

    application = Application(settings)
    try:
        for notice in application.session_state.start(continue_latest=continue_session, resume=resume, fork_if_locked=True):
            _error(notice)
    except SessionError as exc:
        _error(str(exc))
        return EXIT_USAGE
    try:
        if not query.lstrip().startswith("/task"):
            await application.start_mcp_and_wait()
            for line in _mcp_failures(application):
                _error(line)  # an MCP server's stderr tail among them
        return await _run_headless_turn(application, settings, query, output_format)
    finally:
        await application.aclose()


def _mcp_failures(application: Any) -> list[str]:
    """One line per MCP server that could not start or configuration entry that could not be used."""
    lines = [f"MCP configuration: {problem}" for problem in application.mcp.errors + application.mcp.config.skipped]
    for row in application.mcp.status():
        if row["state"] == "failed":
            lines.append(f"MCP server {row['name']} failed: {row['last_error']}")
    return lines


async def _run_headless_turn(application: Any, settings: Any, query: str, output_format: str) -> int:
    if query.lstrip().startswith("/task"):
        from core.tasks import TaskCommandError

        try:
            result = await application.session_state.run_task(query.strip())
        except TaskCommandError as exc:
            _error(str(exc))
            return EXIT_USAGE
        if (result.get("metadata") or {}).get("error") == "invalid_task_command":
            _error(str(result.get("content")))
            return EXIT_USAGE
        return _emit_task_result(result, output_format)

    if not settings.provider_configured:
        from core.config import provider_missing_message

        _error(provider_missing_message(settings))
        return EXIT_USAGE

    commands = getattr(application, "commands", None)
    if commands is not None and not (status := await commands.status()).available:
        _error(status.problem)  # once: commands are refused (or ask) without it
    from core import events as ev

    final: ev.TurnCompleted | ev.TurnFailed | None = None
    async with contextlib.aclosing(application.session_state.stream_query(query)) as events:
        async for event in events:
            if output_format == "jsonl":
                sys.stdout.write(json.dumps(ev.event_to_dict(event), default=str) + "\n")
                sys.stdout.flush()
            if isinstance(event, (ev.TurnCompleted, ev.TurnFailed)):
                final = event
    if isinstance(final, ev.TurnCompleted):
        if output_format == "text":
            from core.text import for_terminal

            sys.stdout.write(for_terminal(final.result.get("content", "")).rstrip("\n") + "\n")
            sys.stdout.flush()
            note = STOP_NOTES.get((final.result.get("metadata") or {}).get("stop_reason", ""))
            if note:
                _error(note)
        return EXIT_OK
    _error(final.message if final else "the turn ended without a result")
    return EXIT_FAILED


def _emit_task_result(result: dict[str, Any], output_format: str) -> int:
    from core.types import is_error

    if output_format == "jsonl":
        sys.stdout.write(json.dumps({"kind": "task_result", "result": result}, default=str) + "\n")
    elif not is_error(result):
        from core.text import for_terminal

        sys.stdout.write(for_terminal(str(result.get("content", ""))).rstrip("\n") + "\n")
    sys.stdout.flush()
    if is_error(result):
        _error(str(result.get("content", "the task failed")))
        return EXIT_FAILED
    return EXIT_OK


if __name__ == "__main__":
    raise SystemExit(main())
