"""The Task System: templates, programmatic executors and ``/task`` commands."""

from core.tasks.command import ParsedTask, TaskCommandError, parse_task_command, resolve_task_files, run_task_command
from core.tasks.system import PROGRAMMATIC_EXECUTOR_KEYS, TaskSystem, format_template_list, task_failure, wrap_result
from core.tasks.templates import AIDER_AUTOMATIC, AIDER_INTERACTIVE, BUILTIN_TEMPLATES, TaskParam, TaskTemplate

__all__ = [
    "AIDER_AUTOMATIC",
    "AIDER_INTERACTIVE",
    "BUILTIN_TEMPLATES",
    "PROGRAMMATIC_EXECUTOR_KEYS",
    "ParsedTask",
    "TaskCommandError",
    "TaskParam",
    "TaskSystem",
    "TaskTemplate",
    "format_template_list",
    "parse_task_command",
    "resolve_task_files",
    "run_task_command",
    "task_failure",
    "wrap_result",
]
