"""Running commands in a bubblewrap sandbox (issue 13).

``Preflight`` checks once whether the machine can; ``run_command`` runs one argv
with live output and limits; ``Limits`` holds those limits.
"""

from core.sandbox.limits import Limits
from core.sandbox.preflight import INSTALL_COMMAND, Preflight, SandboxStatus, check_sandbox
from core.sandbox.runner import RunResult, run_command

__all__ = ["INSTALL_COMMAND", "Limits", "Preflight", "RunResult", "SandboxStatus", "check_sandbox", "run_command"]
