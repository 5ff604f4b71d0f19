"""``auto_test``: after an ``aiderAutomatic`` edit, run the tests; hand failures back to aider.

The test run streams into the edit's own live output. When the tests fail, aider
gets the end of the output and is asked to fix the code, at most ``attempts``
times; the tool result then says how the last run ended, so the model sees the
edit and its test outcome together.
"""

from __future__ import annotations

import logging
from typing import Any

from core.tools.commands import CommandTools, describe
from core.tools.live_output import emit
from core.tools.testcmd import TestCommandError
from core.types import TaskResult, is_error

log = logging.getLogger(__name__)

FAILURE_CHARS = 6_000
"""Characters of failing test output given to aider (the end, where the failures are summarised)."""


class AutoTest:
    """The ``after_edit`` hook of :func:`core.tools.aider_tools.register_aider_tools`."""

    def __init__(self, commands: CommandTools, bridge: Any, attempts: int = 2) -> None:
        self.commands = commands
        self.bridge = bridge
        self.attempts = attempts

    async def __call__(self, instruction: str, files: list[str], result: TaskResult) -> TaskResult:
        if is_error(result):
            return result
        try:
            argv, _ = self.commands.test_command()
        except TestCommandError as exc:
            return _with(result, f"\n\nauto_test: {exc}", {"tests": "not run"})
        if (await self.commands.status()).available is False and not self.commands.settings.allow_unsandboxed:
            return _with(result, f"\n\nauto_test: tests not run: {(await self.commands.status()).problem}", {"tests": "not run"})
        runs: list[dict[str, Any]] = []
        fixes = 0
        while True:
            emit(f"\n$ {' '.join(argv)}   (auto_test{f', after fix {fixes}' if fixes else ''})\n")
            outcome = describe(await self.commands.run(argv), tests=True)
            passed = not is_error(outcome)
            runs.append({"passed": passed, "returncode": outcome["metadata"].get("returncode")})
            if passed or fixes >= self.attempts:
                break
            fixes += 1
            failure = outcome["content"][-FAILURE_CHARS:]
            emit(f"\nauto_test: tests failed; asking aider to fix them (attempt {fixes} of {self.attempts})\n")
            fix = await self.bridge.execute_automatic_task(
                f"The tests fail after the last change. Fix the code so they pass.\n\n{failure}", files
            )
            if is_error(fix):
                outcome["content"] += f"\n\naider could not fix it: {fix.get('content', '')}"
                break
            diff = (fix.get("metadata") or {}).get("diff")
            if isinstance(diff, str) and diff:
                old = (result.get("metadata") or {}).get("diff") or ""
                result.setdefault("metadata", {})["diff"] = (old + "\n" + diff).strip("\n")
        verdict = "passed" if runs[-1]["passed"] else "FAIL"
        note = f"\n\nauto_test: tests {verdict} after the edit" + (f" and {fixes} fix attempt(s)" if fixes else "")
        final = _with(result, f"{note}:\n{outcome['content']}", {"tests": verdict, "test_runs": runs})
        if not runs[-1]["passed"]:
            final["metadata"]["tests_failed"] = True
        return final


def _with(result: TaskResult, text: str, metadata: dict[str, Any]) -> TaskResult:
    return {**result, "content": str(result.get("content", "")) + text, "metadata": {**(result.get("metadata") or {}), **metadata}}
