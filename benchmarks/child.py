"""Running a benchmark function in a fresh process.

Each benchmark (and each configuration that measures memory) runs in its own
process, so imports, memory and event loops do not leak between them. The
child gets HOME and the XDG dirs in a temporary directory and no real keys.

``python -m benchmarks.child MODULE FUNCTION RESULT_FILE ARGS_JSON`` calls
``benchmarks.MODULE.FUNCTION(**ARGS)`` and writes its JSON result (or the error).
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path
from typing import Any

from benchmarks import paths


class ChildFailed(RuntimeError):
    """The child process crashed or timed out; the message says how."""


def run_child(module: str, function: str, args: dict[str, Any] | None = None, *, timeout: float = 900.0) -> Any:
    """Run ``benchmarks.<module>.<function>(**args)`` in a new process and return its JSON result.

    Raises:
        ChildFailed: the process failed, timed out or raised (the child's traceback is in the message).
    """
    with tempfile.TemporaryDirectory(prefix="atui-bench-") as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        result_file = Path(tmp) / "result.json"
        command = [sys.executable, "-m", "benchmarks.child", module, function, str(result_file), json.dumps(args or {})]
        try:
            done = subprocess.run(
                command,
                cwd=tmp,
                env=paths.isolated_environment(home),
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=timeout,
            )
        except subprocess.TimeoutExpired:
            raise ChildFailed(f"{module}.{function} did not finish within {timeout:g} s") from None
        if not result_file.exists():
            tail = (done.stderr or done.stdout).strip()[-2000:]
            raise ChildFailed(f"{module}.{function} exited with status {done.returncode} without a result:\n{tail}")
        payload = json.loads(result_file.read_text(encoding="utf-8"))
    if "error" in payload:
        raise ChildFailed(payload["error"])
    return payload["result"]


def _main(argv: list[str]) -> int:
    module_name, function, result_file, raw_args = argv
    out = Path(result_file)
    try:
        from benchmarks.whatif import apply_from_environment
        from tui import runtime

        runtime.apply()  # the process-wide tuning the console entry point applies (frame rate, collector)
        from tui import wrap

        wrap.install()  # and its line wrapping
        apply_from_environment()
        module = importlib.import_module(f"benchmarks.{module_name}")
        value = getattr(module, function)(**json.loads(raw_args))
        if hasattr(value, "to_json"):
            value = value.to_json()
        out.write_text(json.dumps({"result": value}), encoding="utf-8")
    except BaseException:  # noqa: BLE001 - reported to the parent, which never fails
        out.write_text(json.dumps({"error": traceback.format_exc()}), encoding="utf-8")
        return 1
    return 0


if __name__ == "__main__":
    status = _main(sys.argv[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)  # do not wait for stray non-daemon threads of the code under test
