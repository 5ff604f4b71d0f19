"""The Task System: templates, programmatic executors and ``/task`` commands."""

from core.tasks.command import ParsedTask, TaskCommandError, parse_task_command, resolve_task_files, run_task_command
from core.tasks.system import TaskSystem, task_failure, wrap_result
from core.tasks.templates import AIDER_AUTOMATIC, AIDER_INTERACTIVE, BUILTIN_TEMPLATES, TaskParam, TaskTemplate

__all__ = [
    "AIDER_AUTOMATIC",
    "AIDER_INTERACTIVE",
    "BUILTIN_TEMPLATES",
    "ParsedTask",
    "TaskCommandError",
    "TaskParam",
    "TaskSystem",
    "TaskTemplate",
    "parse_task_command",
    "resolve_task_files",
    "run_task_command",
    "task_failure",
    "wrap_result",
]
