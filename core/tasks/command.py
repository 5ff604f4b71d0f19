"""``/task`` commands: parse ``/task <type>:<subtype> key=value ...`` and run it, bypassing the model.

Values are bare words, quoted strings (``'...'`` or ``"..."``, Python escapes) or
Python-literal lists of strings (read with ``ast.literal_eval``, never ``eval``).
Every mistake raises :class:`TaskCommandError` with a message that says what and
where (1-based column), and nothing runs.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from core.tasks.system import TaskSystem
from core.tasks.templates import BUILTIN_TEMPLATES, TaskTemplate, missing_inputs
from core.tools.aider_bridge import AiderError, resolve_in_project
from core.types import TaskResult, error_result, ok_result

_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_HINT = "values with spaces need quotes, e.g. prompt='Add type hints'"


class TaskCommandError(ValueError):
    """A ``/task`` command that cannot run; the message is meant for the user."""


@dataclass(frozen=True)
class ParsedTask:
    """A parsed ``/task`` command: a template and its inputs, or a request for the list."""

    template: TaskTemplate | None
    inputs: dict[str, Any] = field(default_factory=dict)
    list_only: bool = False

    @property
    def task_type(self) -> str:
        return self.template.type if self.template else "list"

    @property
    def subtype(self) -> str:
        return self.template.subtype if self.template else ""


def _known(templates: Iterable[TaskTemplate]) -> str:
    return ", ".join(sorted(t.key for t in templates)) or "none"


def _find(name: str, templates: list[TaskTemplate]) -> TaskTemplate | None:
    for template in templates:
        if name in (template.key, template.name):
            return template
    return None


def _closing(text: str, start: int, opener: str) -> int:
    """Index of the character closing the quote or bracket at ``start``, or -1."""
    if opener in "'\"":
        i = start + 1
        while i < len(text):
            if text[i] == "\\":
                i += 2
                continue
            if text[i] == opener:
                return i
            i += 1
        return -1
    depth, i, quote = 0, start, ""
    while i < len(text):
        char = text[i]
        if quote:
            if char == "\\":
                i += 1
            elif char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char in "[(":
            depth += 1
        elif char in "])":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


def _read_value(text: str, start: int, key: str) -> tuple[Any, int]:
    """The value starting at ``start`` and the index just after it."""
    column = start + 1
    if start >= len(text) or text[start].isspace():
        raise TaskCommandError(f"{key}= has no value (column {column}); {_HINT}")
    opener = text[start]
    if opener in "'\"[(":
        end = _closing(text, start, opener)
        if end < 0:
            what = "quoted string" if opener in "'\"" else "list"
            raise TaskCommandError(f"unterminated {what} in the value of {key} starting at column {column}")
        literal = text[start : end + 1]
        try:
            value = ast.literal_eval(literal)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            raise TaskCommandError(
                f"cannot parse the value of {key} at column {column}: {literal!r} is not a quoted string "
                "or a list of quoted strings"
            ) from None
        after = end + 1
        if after < len(text) and not text[after].isspace():
            raise TaskCommandError(
                f"unexpected {text[after]!r} right after the value of {key} at column {after + 1}; "
                "separate parameters with spaces"
            )
        return value, after
    end = start
    while end < len(text) and not text[end].isspace():
        end += 1
    return text[start:end], end


def _coerce(template: TaskTemplate, key: str, value: Any, column: int) -> Any:
    param = template.param(key)
    assert param is not None
    if param.kind == "list":
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
            raise TaskCommandError(f"{key} (column {column}) must be a list of strings, e.g. {key}=['calc.py']")
        return list(value)
    if not isinstance(value, str):
        raise TaskCommandError(f"{key} (column {column}) takes a string, not {type(value).__name__}; {_HINT}")
    return value


def parse_task_command(text: str, templates: Iterable[TaskTemplate] | None = None) -> ParsedTask:
    """Parse ``/task <type>:<subtype> key=value ...`` (the leading ``/task`` is optional).

    Args:
        text: the command as typed.
        templates: the known templates (default: the built-in ones).

    Returns:
        The template and its inputs (file paths not yet checked; see :func:`resolve_task_files`),
        or ``ParsedTask(None, list_only=True)`` for ``/task list``.

    Raises:
        TaskCommandError: unknown task, unknown or repeated parameter, unparseable value,
            missing required parameter; the message says which and where.
    """
    known = list(BUILTIN_TEMPLATES if templates is None else templates)
    body = text.strip()
    offset = len(text) - len(text.lstrip())
    if body == "/task" or body.startswith(("/task ", "/task\t")):
        offset += 5
    rest = text[offset:]
    start = offset + len(rest) - len(rest.lstrip())
    if start >= len(text):
        raise TaskCommandError(f"usage: /task <type>:<subtype> key=value ...  (/task list shows the tasks: {_known(known)})")
    end = start
    while end < len(text) and not text[end].isspace():
        end += 1
    name = text[start:end]
    if name == "list":
        if text[end:].strip():
            raise TaskCommandError("/task list takes no parameters")
        return ParsedTask(None, list_only=True)
    template = _find(name, known)
    if template is None:
        raise TaskCommandError(f"unknown task {name!r}. Known tasks: {_known(known)} (/task list shows their parameters)")

    inputs: dict[str, Any] = {}
    i = end
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            break
        match = _KEY.match(text, i)
        if not match or not text.startswith("=", match.end()):
            word = text[i:].split(None, 1)[0]
            raise TaskCommandError(f"expected key=value at column {i + 1}, found {word!r}; {_HINT}")
        key = match.group()
        if template.param(key) is None:
            params = ", ".join(p.name for p in template.params)
            raise TaskCommandError(f"unknown parameter {key!r} (column {i + 1}) for {template.key}; it takes: {params}")
        if key in inputs:
            raise TaskCommandError(f"parameter {key} is given twice (column {i + 1})")
        value_start = match.end() + 1
        value, i = _read_value(text, value_start, key)
        inputs[key] = _coerce(template, key, value, value_start + 1)

    if missing := missing_inputs(template, inputs):
        raise TaskCommandError(f"{template.key} needs {', '.join(missing)}; usage: {template.usage()}")
    return ParsedTask(template, inputs)


def resolve_task_files(parsed: ParsedTask, project_root: Path) -> ParsedTask:
    """``parsed`` with its file-list parameters resolved to absolute paths inside the project.

    Raises:
        TaskCommandError: a file is outside the project, missing or not a regular file.
    """
    if parsed.template is None:
        return parsed
    inputs = dict(parsed.inputs)
    for param in parsed.template.params:
        if not param.is_file_list or param.name not in inputs:
            continue
        resolved: list[str] = []
        for raw in inputs[param.name]:
            try:
                path = str(resolve_in_project(raw, project_root))
            except AiderError as exc:
                raise TaskCommandError(f"{param.name}: {exc}") from None
            if path not in resolved:
                resolved.append(path)
        inputs[param.name] = resolved
    return ParsedTask(parsed.template, inputs)


async def run_task_command(text: str, task_system: TaskSystem, project_root: Path) -> TaskResult:
    """Parse, check and run a ``/task`` command without involving the chat model.

    Returns:
        ``/task list``'s text, the task's result, or an error result (status ``error``,
        metadata ``error="invalid_task_command"``) whose content says what is wrong.
    """
    try:
        parsed = parse_task_command(text, task_system.list_templates())
        if parsed.list_only:
            templates = task_system.list_templates()
            return ok_result(task_system.format_template_list(), templates=[t.as_dict() for t in templates])
        parsed = resolve_task_files(parsed, Path(project_root))
    except TaskCommandError as exc:
        return error_result(str(exc), error="invalid_task_command")
    assert parsed.template is not None
    return await task_system.execute_task(parsed.task_type, parsed.subtype, parsed.inputs)
