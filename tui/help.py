"""Texts the app shows: ``/help`` (generated from the real bindings) and the onboarding panel."""

from __future__ import annotations

from typing import Iterable

from textual.binding import Binding

from core import paths
from core.config import Settings
from tui.commands import SLASH_COMMANDS


def _key_label(keys: str) -> str:
    return " / ".join(key.strip() for key in keys.split(","))


def help_markdown(sections: Iterable[tuple[str, list[Binding]]]) -> str:
    """Keys (by where they work) and slash commands, as Markdown."""
    lines = ["| Key | Action | Where |", "| --- | --- | --- |"]
    for where, bindings in sections:
        for binding in bindings:
            if binding.description:
                lines.append(f"| `{_key_label(binding.key)}` | {binding.description} | {where} |")
    lines += ["", "| Command | What it does |", "| --- | --- |"]
    lines += [f"| `{command.usage}` | {command.help} |" for command in SLASH_COMMANDS]
    lines += ["", "`ctrl+p` opens the command palette with the same actions."]
    return "\n".join(lines)


def onboarding_markdown(settings: Settings) -> str:
    """One screen on how to configure a provider."""
    config = paths.config_file()
    return f"""\
**No model provider is configured yet.** Chat needs one; file context, `/task` and the trace work without.

Pick one of these, then restart `assistant-tui`:

- **Environment**: `export ANTHROPIC_API_KEY=sk-ant-...` (Claude, the default), or `OPENAI_API_KEY` with `--provider openai`.
- **Local or compatible server** (Ollama, vLLM, LM Studio, a gateway): `OPENAI_BASE_URL=http://localhost:11434/v1 assistant-tui --provider openai --model llama3.1` (no key needed).
- **Project `.env`** in `{settings.project_root}`: the same variables, one per line.
- **User config** `{config}`: `provider = "anthropic"`, `model = "claude-sonnet-4-5"`, `anthropic_api_key = "..."`.
- **Flags**: `--provider anthropic|openai`, `--model NAME`.

Type `/help` for keys and commands.
"""
