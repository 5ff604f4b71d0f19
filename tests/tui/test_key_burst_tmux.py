"""A 2,000-key burst into the real ``assistant-tui`` in tmux: the prompt holds exactly what was typed, and the app lives on.

The keys reach the app as a terminal delivers them: typing, ctrl+j, Backspace, arrows, bracketed
pastes (a small one as text, a large one as a chip) and two resizes, each tmux invocation one
burst of writes to the pseudo-terminal. The expected text is modelled as the keys are sent; the
check is what the provider receives when the burst ends with Enter (the fake server, a real
HTTP request), then that the reply is drawn (the app is alive). Every wait is on a condition,
with a generous deadline.
"""

from __future__ import annotations

import os
import random
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pytest

from tests.fake_llm import FakeLLM, Reply
from tui.paste import is_large

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed (apt-get install tmux): the burst is replayed through a real terminal")

KEYS = 2000
DEADLINE = 120.0
"""Seconds to wait for the app to show something (a hang detector on a loaded machine, not a speed bound)."""
ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,-_=+()[]:!?<>*%"
"""What is typed: no ``/`` or ``@`` (they open the completion menu, where Up/Down choose), no ``;`` or ``\\`` (tmux's)."""
SMALL_PASTE = "first pasted line\nsecond pasted line\nthird"
LARGE_PASTE = "".join(f"log line {i}: worker-{i % 7} handled a request\n" for i in range(40))
REPLY = "Got the whole burst."
BIN = Path(sys.executable).parent / "assistant-tui"


@dataclass
class PromptModel:
    """The prompt as the keys sent so far should have left it: atoms (a character, or a paste chip's whole text) and a cursor."""

    atoms: list[str] = field(default_factory=list)
    cursor: int = 0

    @property
    def text(self) -> str:
        """What Enter sends (chips expanded)."""
        return "".join(self.atoms)

    def insert(self, atom: str) -> None:
        self.atoms.insert(self.cursor, atom)
        self.cursor += 1

    def backspace(self) -> None:
        if self.cursor:
            self.cursor -= 1
            del self.atoms[self.cursor]

    def left(self) -> None:
        self.cursor = max(0, self.cursor - 1)

    def right(self) -> None:
        self.cursor = min(len(self.atoms), self.cursor + 1)

    @property
    def one_short_line(self) -> bool:
        """Up/Down are modelled only here: on the only line, unwrapped, they go to its start/end (no history in a fresh home)."""
        return len(self.atoms) < 30 and all(len(atom) == 1 and atom != "\n" for atom in self.atoms)


class Tmux:
    """A tmux server of the test's own (its socket in the test's directory) with one session, ``t``."""

    def __init__(self, socket: Path) -> None:
        self.socket = socket

    def __call__(self, *args: str) -> str:
        done = subprocess.run(["tmux", "-S", str(self.socket), *args], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, f"tmux {' '.join(args[:3])}…: {done.stderr.strip()}"
        return done.stdout

    def screen(self) -> str:
        return self("capture-pane", "-p", "-t", "t")

    def alive(self) -> bool:
        return self("display-message", "-p", "-t", "t", "#{pane_dead}").strip() == "0"

    def wait_for(self, condition: Callable[[], bool], what: str) -> None:
        deadline = time.monotonic() + DEADLINE
        while not condition():
            assert time.monotonic() < deadline, f"not reached within {DEADLINE:g}s: {what}; the screen:\n{self.screen()}"
            time.sleep(0.1)


Command = list[str]


def plan(rng: random.Random, model: PromptModel) -> tuple[list[list[Command]], int]:
    """The bursts (each a list of tmux commands sent in one invocation), with ``model`` updated as each key is planned; returns them and the key count."""
    bursts: list[list[Command]] = []
    burst: list[Command] = []
    keys = 0
    pastes = {KEYS // 3: SMALL_PASTE, (2 * KEYS) // 3: LARGE_PASTE}
    resizes = {KEYS // 4: ("100", "30"), (3 * KEYS) // 4: ("80", "24")}

    def key(name: str, apply: Callable[[], None]) -> None:
        nonlocal keys
        burst.append(["send-keys", "-t", "t", name])
        apply()
        keys += 1

    while keys < KEYS:
        if keys in pastes:
            text = pastes.pop(keys)
            burst.append(["set-buffer", "-b", "burst", "--", text])
            burst.append(["paste-buffer", "-p", "-d", "-b", "burst", "-t", "t"])  # bracketed: the app asked for it
            if is_large(text):
                model.insert(text)
            else:
                for character in text:
                    model.insert(character)
        if keys in resizes:
            width, height = resizes.pop(keys)
            burst.append(["resize-window", "-t", "t", "-x", width, "-y", height])
        roll = rng.random()
        if roll < 0.55:
            run = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, 12)))
            run = run[: KEYS - keys]
            burst.append(["send-keys", "-t", "t", "-l", "--", run])
            for character in run:
                model.insert(character)
            keys += len(run)
        elif roll < 0.65:
            key("C-j", lambda: model.insert("\n"))
        elif roll < 0.8:
            key("BSpace", model.backspace)
        elif roll < 0.88:
            key("Left", model.left)
        elif roll < 0.96:
            key("Right", model.right)
        elif model.one_short_line:
            if roll < 0.98:
                key("Up", lambda: setattr(model, "cursor", 0))
            else:
                key("Down", lambda: setattr(model, "cursor", len(model.atoms)))
        if len(burst) >= 120:
            bursts.append(burst)
            burst = []
    bursts.append(burst)
    return bursts, keys


def joined(commands: list[Command]) -> list[str]:
    """One tmux invocation running ``commands`` in order."""
    args: list[str] = []
    for command in commands:
        args += [*command, ";"]
    return args[:-1]


def test_a_2000_key_burst_leaves_exactly_what_was_typed(tmp_path: Path) -> None:
    assert BIN.exists(), f"{BIN} is missing: install the project (pip install -e .)"
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    (project / "notes.txt").write_text("a project\n")
    model = PromptModel(atoms=list("BEGIN "), cursor=len("BEGIN "))  # typed before the burst
    bursts, keys = plan(random.Random(23), model)
    # After it: Down to the end of the text (on the last line, Down goes to its end), then " END" and Enter,
    # so the message neither starts nor ends with white space.
    downs = model.text.count("\n") + len(model.text) // 20 + 5
    expected = model.text + " END"
    with FakeLLM() as fake:
        fake.script(Reply(text=REPLY))
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_STATE_HOME": str(home / ".local/state"),
            "XDG_DATA_HOME": str(home / ".local/share"),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "ANTHROPIC_API_KEY": "sk-ant-test-not-a-real-key",
            "ANTHROPIC_BASE_URL": fake.anthropic_url,
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        }
        command = shlex.join(["env", "-i", *(f"{name}={value}" for name, value in env.items()), str(BIN), "-C", str(project)])
        tmux = Tmux(tmp_path / "tmux.sock")
        tmux("-f", "/dev/null", "new-session", "-d", "-x", "80", "-y", "24", "-s", "t", "-c", str(project), command, ";", "set-option", "-t", "t", "remain-on-exit", "on")
        try:
            tmux.wait_for(lambda: "Ask anything" in tmux.screen() and "ready" in tmux.screen(), "the prompt, ready")
            tmux("send-keys", "-t", "t", "-l", "BEGIN ")
            for burst in bursts:
                tmux(*joined(burst))
            tmux("send-keys", "-t", "t", "-N", str(downs), "Down", ";", "send-keys", "-t", "t", "-l", " END", ";", "send-keys", "-t", "t", "Enter")
            tmux.wait_for(lambda: bool(fake.requests) or not tmux.alive(), "the message sent to the provider")
            assert tmux.alive(), f"the app ended; the screen:\n{tmux.screen()}"
            sent = fake.requests[0].last_user_text()
            assert keys == KEYS
            assert sent == expected, _difference(sent, expected)
            tmux.wait_for(lambda: REPLY in tmux.screen(), "the reply drawn")
            assert tmux.alive()
        finally:
            subprocess.run(["tmux", "-S", str(tmux.socket), "kill-server"], capture_output=True, timeout=30)


def _difference(sent: str, expected: str) -> str:
    at = next((i for i, (a, b) in enumerate(zip(sent, expected)) if a != b), min(len(sent), len(expected)))
    return f"sent {len(sent)} characters, expected {len(expected)}; first difference at {at}: sent {sent[at - 20:at + 20]!r}, expected {expected[at - 20:at + 20]!r}"
