"""AiderBridge: aider edits files, in-process (automatic) or in the terminal (interactive).

Automatic tasks run aider's ``Coder`` in a worker thread with an ``InputOutput``
whose output is captured (the terminal belongs to the TUI) and whose yes-to-all
answers are limited to files inside the project. Interactive sessions hand the
terminal to aider's own CLI in a child process that sends the query as its first
message. Either way the result names the files that changed and their unified diff.

aider (and litellm behind it) is imported on first use: it costs 1-2 seconds.
Nothing here may reach the internet: litellm's bundled model-cost map is used
and aider's model-info download is pre-empted, analytics and update checks are off.

The project configures nothing of aider's: the in-process ``Coder`` is built from our
settings alone (litellm's import-time ``load_dotenv`` is off: ``aider.llm`` sets
``LITELLM_MODE=PRODUCTION`` before importing it), its git runs with
:func:`core.gitutil.git_env`, and the interactive CLI starts through
:mod:`core.tools.aider_child`, which reads no ``.aider.conf.yml``, ``.env`` or model
settings file of the project's. Aider writes no protected file
(:mod:`core.tools.aider_guard`) and, automatically, only the files the approval named;
what it was refused is said in the result. Its history and tag cache live in the app's
state directory.
"""

from __future__ import annotations

import asyncio
import contextlib
import io as _stdio
import logging
import os
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Awaitable, Callable, Iterator, Sequence

from core.config import Settings
from core.gitutil import GitRefused, git_env
from core.tools.aider_child import BOOTSTRAP, REFUSALS_FILE
from core.tools.aider_guard import WritePolicy, aider_state_dir, protected_reason
from core.tools.aider_session import git_status, is_terminal, run_in_terminal
from core.tools.aider_files import (  # noqa: F401 - AiderError, resolve_in_project, unified_diff re-exported
    AiderError,
    diff_snapshots,
    read_refusals,
    read_snapshot,
    refusals_note,
    resolve_in_project,
    summarise,
    unified_diff,
)
from core.tools.aider_io import AiderStopped, capturing_io_class
from core.secrets import scrubbed_env
from core.types import TaskResult, error_result, ok_result

log = logging.getLogger(__name__)

InteractiveRunner = Callable[[Callable[[], TaskResult]], Awaitable[TaskResult]]
"""Runs a blocking terminal session; the TUI's runner wraps it in ``app.suspend()``."""

_OPENAI_PREFIXES = ("gpt-", "o1", "o3", "o4", "chatgpt-")
_ENV_NAMES = {
    "openai": (("OPENAI_API_BASE", "OPENAI_BASE_URL"), "OPENAI_API_KEY"),
    "anthropic": (("ANTHROPIC_BASE_URL", "ANTHROPIC_API_BASE"), "ANTHROPIC_API_KEY"),
}
_BASE_NAMES = frozenset(name for bases, _ in _ENV_NAMES.values() for name in bases)
_APP_DIR = str(Path(__file__).resolve().parents[2])
"""The directory holding the ``core`` package, first on the aider child's ``sys.path``."""
_INTERACTIVE_FLAGS = (
    "--no-analytics", "--no-check-update", "--no-show-release-notes", "--no-gitignore", "--no-show-model-warnings",
    "--no-auto-lint", "--no-auto-test", "--no-suggest-shell-commands", "--no-restore-chat-history",
    "--no-watch-files", "--no-copy-paste",
)
"""Answers to aider's start-up questions, and nothing run that the model or the repository names."""


async def run_in_thread(fn: Callable[[], TaskResult]) -> TaskResult:
    """Default interactive runner: the session takes the current terminal from a worker thread."""
    return await asyncio.to_thread(fn)


@dataclass(frozen=True)
class AiderEndpoint:
    """Where aider's model lives: litellm provider, API base and key (empty = aider's own environment)."""

    provider: str
    api_base: str = ""
    api_key: str = ""

    def litellm_params(self) -> dict[str, str]:
        """Extra ``litellm.completion`` parameters for aider's ``Model.extra_params``."""
        return {name: value for name, value in (("api_base", self.api_base), ("api_key", self.api_key)) if value}

    def environment(self) -> dict[str, str]:
        """Environment variables aider's CLI reads for this endpoint."""
        if self.provider in _ENV_NAMES:
            bases, key = _ENV_NAMES[self.provider]
            env = {name: self.api_base for name in bases if self.api_base}
            return env | ({key: self.api_key} if self.api_key else {})
        prefix = self.provider.upper().replace("-", "_")  # e.g. gemini/...: pass GEMINI_API_KEY through
        names = [f"{prefix}_{suffix}" for suffix in ("API_KEY", "API_BASE", "BASE_URL")] if prefix else []
        return {name: os.environ[name] for name in names if name in os.environ}


def aider_model_name(settings: Settings) -> str:
    """The model aider uses: ``aider_model``, else the chat model in aider's naming (``openai/gpt-4o``)."""
    if settings.aider_model:
        return settings.aider_model
    return f"{settings.provider}/{settings.model_name}"


def preferred_model_name(model_name: str) -> str:
    """``anthropic/claude-x`` as aider's bare ``claude-x`` when only that has aider settings (edit format,
    weak model, output limit); anything else unchanged. Imports ``aider.models`` (not litellm)."""
    from aider.models import MODEL_SETTINGS

    provider, _, bare = model_name.partition("/")
    names = {ms.name for ms in MODEL_SETTINGS}
    if provider == "anthropic" and bare in names and model_name not in names:
        return bare
    return model_name


def aider_endpoint(settings: Settings, model_name: str) -> AiderEndpoint:
    """The endpoint for aider's model, using the configured key and base URL of its provider."""
    provider, _, bare = model_name.partition("/")
    if not bare:
        bare, provider = model_name, ""
        if bare.startswith("claude"):
            provider = "anthropic"
        elif bare.startswith(_OPENAI_PREFIXES):
            provider = "openai"
    if provider == "openai":
        key = settings.openai_api_key or ("not-needed" if settings.openai_base_url else "")
        return AiderEndpoint("openai", settings.openai_base_url, key)
    if provider == "anthropic":
        return AiderEndpoint("anthropic", settings.anthropic_base_url, settings.anthropic_api_key)
    return AiderEndpoint(provider)


def child_environment(
    endpoint: AiderEndpoint, secrets: Sequence[str] = (), project_root: Path | None = None
) -> dict[str, str]:
    """The environment of aider's CLI: credentials stripped, then exactly aider's own endpoint and key.

    No ``AIDER_*`` variable (each would set one of aider's options) and no inherited API
    base URL: the endpoint is the app's.
    With ``project_root``, git's hardening too (:func:`core.gitutil.git_env`): aider's
    git runs no program the repository names.
    """
    env = {name: value for name, value in scrubbed_env(secrets).items()
           if not name.upper().startswith("AIDER_") and name.upper() not in _BASE_NAMES}
    if project_root is not None:
        try:
            env = git_env(project_root, env)
        except GitRefused as exc:
            log.warning("aider's git: %s", exc.reason)
            env = git_env(None, env)
    for name in ("EDITOR", "VISUAL"):  # the user's editor for aider's /editor (git's own stays off)
        if name in os.environ:
            env[name] = os.environ[name]
    env.update(endpoint.environment())
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    return env


def repository_git_environment(project_root: Path) -> dict[str, str]:
    """GitPython's per-repository environment: :func:`core.gitutil.git_env`'s ``GIT_*`` variables, so
    aider's git in this process runs no hook, fsmonitor, pager or other program the repository names,
    whatever ``os.environ`` holds. (GitPython adds to the inherited environment and cannot unset a
    variable: other ``GIT_*`` variables of the app's own process are cleared at start by
    ``core.app.Application``, through :func:`core.gitutil.harden_git_environment`.)

    Raises:
        GitRefused: the repository points git outside the project.
    """
    return {key: value for key, value in git_env(project_root, base=os.environ).items() if key.startswith("GIT_")}


# -- aider, imported lazily ----------------------------------------------------

_prepare_lock = threading.Lock()
_prepared = False


@contextlib.contextmanager
def _streams_with_encoding() -> Iterator[None]:
    """Give sys.stdout/sys.stderr an ``encoding`` while aider is imported.

    Inside the TUI they are Textual's print captures, which have none, and aider reads
    ``sys.stdout.encoding`` at import time. A throwaway sink stands in for the import only.
    """
    saved = sys.stdout, sys.stderr
    sink = _stdio.TextIOWrapper(_stdio.BytesIO(), encoding="utf-8")
    if not getattr(sys.stdout, "encoding", None):
        sys.stdout = sink
    if not getattr(sys.stderr, "encoding", None):
        sys.stderr = sink
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved


def prepare_aider() -> None:
    """Import aider (and litellm) with everything that would reach the internet turned off."""
    global _prepared
    with _prepare_lock:
        if _prepared:
            return
        os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # litellm reads it at import
        with _streams_with_encoding():
            from aider import models
            from aider.llm import litellm
            import aider.coders  # noqa: F401 - aider.run_cmd reads sys.stdout.encoding at import

        manager = models.model_info_manager
        if not manager.content:
            # aider otherwise downloads litellm's price list from GitHub on first Model().
            manager.content = dict(litellm.model_cost)
        manager._cache_loaded = True
        _prepared = True


class AiderBridge:
    """Runs aider on project files and reports what changed.

    Args:
        settings: the application settings (project root, aider model, auto-commit, endpoints).
        edit_format: aider edit format to force ("diff", "whole", ...); None lets aider choose per model.
        map_tokens: size of aider's repository map; 0 (the default) turns it off, since
            our memory system picks the files and the map writes a tag cache into the project.
    """

    def __init__(
        self, settings: Settings, *, edit_format: str | None = None, map_tokens: int = 0, interactive_runner: InteractiveRunner | None = None
    ) -> None:
        self.settings = settings
        self.project_root = Path(settings.project_root).resolve()
        self.edit_format = edit_format
        self.map_tokens = map_tokens
        self.interactive_runner = interactive_runner
        """How an interactive session takes the terminal (the TUI suspends itself around it), given once by
        whoever builds the bridge (``core.app.Application``); None runs it in a thread in this terminal."""
        self._lock = threading.Lock()

    @property
    def model_name(self) -> str:
        """aider's model as configured (see :func:`aider_model_name`)."""
        return aider_model_name(self.settings)

    @property
    def endpoint(self) -> AiderEndpoint:
        return aider_endpoint(self.settings, self.model_name)

    def resolve_files(self, file_paths: Sequence[str], *, editable: bool = False) -> list[Path]:
        """Resolved, de-duplicated paths (raises AiderError naming the first bad one).

        With ``editable``, a file aider may never write (:func:`protected_reason`) is refused too.
        """
        seen: dict[Path, None] = {}
        for raw in file_paths:
            path = resolve_in_project(raw, self.project_root)
            if editable and (reason := protected_reason(raw, self.project_root)):
                raise AiderError(f"{raw} may not be edited by aider: {reason}")
            seen.setdefault(path, None)
        return list(seen)

    # -- automatic -------------------------------------------------------------

    async def execute_automatic_task(self, prompt: str, file_paths: Sequence[str], read_only_paths: Sequence[str] = ()) -> TaskResult:
        """Have aider make the change described by ``prompt`` to ``file_paths``, without asking anyone.

        Returns:
            A success result with a summary and the unified diff (metadata ``edited_files``,
            ``diff``, ``aider_output``), a success noting that nothing changed, or an error.
        """
        if not prompt.strip():
            return error_result("aider needs a prompt describing the change")
        try:
            files = self.resolve_files(file_paths, editable=True)
            read_only = [path for path in self.resolve_files(read_only_paths) if path not in files]
        except AiderError as exc:
            return error_result(f"aider cannot edit that: {exc}")
        cancelled = threading.Event()
        try:
            return await asyncio.to_thread(self._run_automatic, prompt, files, cancelled, read_only)
        except asyncio.CancelledError:
            cancelled.set()  # the thread finishes its request but writes nothing more
            raise

    def _run_automatic(self, prompt: str, files: list[Path], cancelled: threading.Event, read_only: Sequence[Path] = ()) -> TaskResult:
        with self._lock:
            started = time.perf_counter()
            before = {path: read_snapshot(path) for path in files}
            try:
                io, coder = self._create_coder(files, cancelled, read_only)
            except Exception as exc:  # noqa: BLE001 - aider raises many kinds; report, never crash
                log.exception("aider could not start")
                return error_result(f"aider could not start: {exc}", model=self.model_name)
            try:
                coder.run(with_message=prompt, preproc=False)
            except AiderStopped as exc:
                io.errors.append(str(exc))
            except Exception as exc:  # noqa: BLE001
                log.exception("aider failed")
                io.errors.append(f"{type(exc).__name__}: {exc}")
            for path, original in io.originals.items():
                before.setdefault(path, original)
            edited, diff = diff_snapshots(before, self.project_root)
            output = io.buffer.getvalue()
            meta = {
                "edited_files": edited,
                "diff": diff,
                "aider_output": output,
                "refused_files": dict(io.refused),
                "model": self.model_name,
                "seconds": round(time.perf_counter() - started, 3),
            }
            log.info("aider automatic: %d file(s) edited in %.2fs", len(edited), meta["seconds"])
            refused = refusals_note(io.refused)
            if edited:
                return ok_result(summarise(edited, diff, "aider") + refused, **meta)
            reply = (coder.partial_response_content or "").strip()
            errors = [error for error in io.errors if not any(path in error for path in io.refused)]
            if errors:
                return error_result("aider made no changes; it reported: " + "\n".join(errors[-5:]) + refused, **meta)
            note = "aider made no changes." + refused
            if reply:
                note += f"\n\nIts reply:\n{reply[:4000]}"
            return ok_result(note, **meta)

    def _create_coder(self, files: list[Path], cancelled: threading.Event, read_only: Sequence[Path] = ()) -> tuple[Any, Any]:
        prepare_aider()
        from aider.coders import Coder
        from aider.models import Model
        from aider.repo import GitRepo

        model = Model(preferred_model_name(self.model_name))
        params = {**self.endpoint.litellm_params(), "max_retries": 0}  # aider retries, counted by our IO
        for each in {id(m): m for m in (model, model.weak_model, model.editor_model) if m is not None}.values():
            each.extra_params = {**(each.extra_params or {}), **params}
        policy = WritePolicy(self.project_root, frozenset(files))
        io = capturing_io_class()(policy, cancelled, self.settings.max_retries)
        io.read_only = {Path(path).resolve() for path in read_only}
        fnames = [str(path) for path in files]
        repo = None
        try:
            git_environment = repository_git_environment(self.project_root)
            repo = GitRepo(io, fnames, str(self.project_root), models=model.commit_message_models())
            repo.repo.git.update_environment(**git_environment)
        except FileNotFoundError:
            pass
        except GitRefused as exc:
            log.warning("aider runs without git here: %s", exc.reason)
        if self.map_tokens:
            from aider import repomap

            repomap.RepoMap.TAGS_CACHE_DIR = str(aider_state_dir(self.project_root) / f"tags.cache.v{repomap.CACHE_VERSION}")
        coder = Coder.create(
            main_model=model,
            edit_format=self.edit_format,
            io=io,
            repo=repo,
            use_git=repo is not None,
            fnames=fnames,
            read_only_fnames=[str(path) for path in read_only],
            auto_commits=self.settings.aider_auto_commit,
            dirty_commits=False,
            suggest_shell_commands=False,
            detect_urls=False,
            stream=False,
            map_tokens=self.map_tokens,
            auto_lint=False,
            auto_test=False,
        )
        if repo is None:
            coder.root = str(self.project_root)
        return io, coder

    # -- interactive -----------------------------------------------------------

    def interactive_command(self, query: str, files: Sequence[Path], read_only: Sequence[Path] = ()) -> list[str]:
        """The command line of an interactive aider session seeded with ``query`` (:mod:`core.tools.aider_child`).

        ``-P`` keeps the project directory off the child's ``sys.path``: a ``signal.py`` or an
        ``aider/`` package in the project is never imported. The history files go to the app's
        state directory; aider's start-up questions are answered (:data:`_INTERACTIVE_FLAGS`).
        """
        state = aider_state_dir(self.project_root)
        command = [sys.executable, "-P", "-c", BOOTSTRAP, _APP_DIR, str(state), query]
        command += ["--model", preferred_model_name(self.model_name), *_INTERACTIVE_FLAGS]
        command += ["--chat-history-file", str(state / "chat.history.md"),
                    "--input-history-file", str(state / "input.history"), "--aiderignore", os.devnull]
        command += ["--auto-commits" if self.settings.aider_auto_commit else "--no-auto-commits"]
        try:
            git_env(self.project_root)
        except GitRefused as exc:  # e.g. a .git file pointing at another repository: aider runs no git at all
            log.warning("aider runs without git here: %s", exc.reason)
            command += ["--no-git"]
        if self.edit_format:
            command += ["--edit-format", self.edit_format]
        for path in read_only:
            command += ["--read", str(path)]
        command += ["--", *(str(path) for path in files)]
        return command

    async def run_interactive(self, query: str, file_paths: Sequence[str], read_only_paths: Sequence[str] = ()) -> TaskResult:
        """Run :meth:`start_interactive_session` through :attr:`interactive_runner` (else in a thread)."""
        run = self.interactive_runner or run_in_thread
        return await run(lambda: self.start_interactive_session(query, file_paths, read_only_paths=read_only_paths))

    def start_interactive_session(
        self,
        query: str,
        file_paths: Sequence[str],
        *,
        stdin: Any = None,
        stdout: Any = None,
        stderr: Any = None,
        read_only_paths: Sequence[str] = (),
    ) -> TaskResult:
        """Hand the terminal to aider's own CLI with these files, sending ``query`` first.

        Blocks until the user leaves aider. The TUI calls this inside ``app.suspend()``;
        ``stdin``/``stdout``/``stderr`` default to the current terminal.

        Returns:
            Which files changed during the session and their diff, or an error.
        """
        try:
            files = self.resolve_files(file_paths, editable=True)
            read_only = [path for path in self.resolve_files(read_only_paths) if path not in files]
        except AiderError as exc:
            return error_result(f"aider cannot edit that: {exc}")
        if stdin is None and not is_terminal(0):
            return error_result(
                "interactive aider needs a terminal; use aiderAutomatic (or /task aider:automatic) instead"
            )
        before = {path: read_snapshot(path) for path in files}
        status_before = git_status(self.project_root)
        try:
            refusals = aider_state_dir(self.project_root) / REFUSALS_FILE
            refusals.unlink(missing_ok=True)
        except OSError as exc:
            return error_result(f"could not prepare aider's state directory: {exc}")
        command = self.interactive_command(query, files, read_only)
        env = child_environment(self.endpoint, self.settings.secrets(), self.project_root)
        log.info("starting interactive aider on %d file(s)", len(files))
        try:
            code = run_in_terminal(command, self.project_root, env, stdin=stdin, stdout=stdout, stderr=stderr)
        except OSError as exc:
            return error_result(f"could not start aider: {exc}")
        edited, diff = diff_snapshots(before, self.project_root)
        others = sorted(set(git_status(self.project_root)) - set(status_before) - set(edited))
        refused = read_refusals(refusals)
        meta = {"edited_files": edited, "diff": diff, "other_changed_files": others, "exit_code": code,
                "refused_files": refused}
        note = refusals_note(refused)
        if edited or others:
            text = summarise(edited, diff, "the aider session") if edited else "the aider session left the given files alone."
            if others:
                text += f"\nOther files changed during the session: {', '.join(others)}"
            return ok_result(text + note, **meta)
        if code not in (0, 130):
            return error_result(f"aider exited with status {code} and changed nothing" + note, **meta)
        return ok_result("the aider session ended without changing any files" + note, **meta)
