"""Task templates: what structured tasks exist and which parameters they take."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Mapping

ParamKind = Literal["string", "list"]


@dataclass(frozen=True, kw_only=True)
class TaskParam:
    """One parameter of a task template."""

    name: str
    kind: ParamKind = "string"
    """``string`` or ``list`` (a list of strings)."""
    required: bool = False
    description: str = ""
    is_file_list: bool = False
    """The values are project file paths, checked and resolved before the task runs."""

    def usage(self) -> str:
        """``name=<string>`` or ``[name=<list>]``."""
        text = f"{self.name}=<{'list of paths' if self.is_file_list else self.kind}>"
        return text if self.required else f"[{text}]"


@dataclass(frozen=True, kw_only=True)
class TaskTemplate:
    """A kind of structured task, e.g. ``aider:automatic``."""

    name: str
    """Registry name, e.g. ``aider_automatic``."""
    type: str
    subtype: str
    description: str
    params: tuple[TaskParam, ...] = field(default_factory=tuple)

    @property
    def key(self) -> str:
        """``type:subtype``, the key of programmatic executors and of ``/task``."""
        return f"{self.type}:{self.subtype}"

    def param(self, name: str) -> TaskParam | None:
        return next((p for p in self.params if p.name == name), None)

    @property
    def required(self) -> list[str]:
        return [p.name for p in self.params if p.required]

    def usage(self) -> str:
        """``/task aider:automatic prompt=<string> [file_context=<list of paths>]``."""
        return " ".join(["/task", self.key, *(p.usage() for p in self.params)])

    def as_dict(self) -> dict[str, object]:
        """A JSON-friendly description (for ``/task list`` shown to a model)."""
        return {
            "name": self.name,
            "type": self.type,
            "subtype": self.subtype,
            "description": self.description,
            "parameters": {
                p.name: {"type": p.kind, "required": p.required, "description": p.description} for p in self.params
            },
        }


def missing_inputs(template: TaskTemplate, inputs: Mapping[str, Any]) -> list[str]:
    """Required parameters of ``template`` that are absent or blank in ``inputs``."""
    missing = []
    for name in template.required:
        value = inputs.get(name)
        if value is None or (isinstance(value, str) and not value.strip()) or (isinstance(value, list) and not value):
            missing.append(name)
    return missing


_FILE_CONTEXT = TaskParam(
    name="file_context",
    kind="list",
    description="Files to work on, relative to the project root.",
    is_file_list=True,
)

AIDER_AUTOMATIC = TaskTemplate(
    name="aider_automatic",
    type="aider",
    subtype="automatic",
    description="aider makes the change described by `prompt` to the files, without asking.",
    params=(TaskParam(name="prompt", required=True, description="The change to make."), _FILE_CONTEXT),
)

AIDER_INTERACTIVE = TaskTemplate(
    name="aider_interactive",
    type="aider",
    subtype="interactive",
    description="An interactive aider session in the terminal, starting with `query`.",
    params=(TaskParam(name="query", required=True, description="What to work on first."), _FILE_CONTEXT),
)

BUILTIN_TEMPLATES: tuple[TaskTemplate, ...] = (AIDER_AUTOMATIC, AIDER_INTERACTIVE)
