"""The child process of an interactive aider session: aider's own CLI, with the project's configuration neutralised.

Started by :meth:`core.tools.aider_bridge.AiderBridge.interactive_command` as
``python -P -c <bootstrap> STATE_DIR QUERY AIDER_ARGS...`` in the project directory
(``-P``: nothing is imported from the project). Before ``aider.main.main`` runs:

- no ``.aider.conf.yml`` is read (current directory, git root or home), no ``.env``
  (aider's ``load_dotenv_files``; litellm's own is off: ``aider.llm`` sets
  ``LITELLM_MODE=PRODUCTION`` before importing it), no ``.aider.model.settings.yml`` or
  ``.aider.model.metadata.json`` (only aider's bundled model metadata): the command line
  the app built is the whole configuration;
- aider never creates a repository nor writes an identity into ``.git/config``;
- no file that :class:`core.tools.aider_guard.WritePolicy` protects is written
  (``Coder.allowed_to_edit`` says no before aider asks; ``InputOutput.write_text`` refuses
  as a last resort), whatever the model's edit names or the user added to the chat; each
  refusal is recorded in ``STATE_DIR/refused.jsonl`` for the session's result;
- the repository map's tag cache goes to ``STATE_DIR`` (the history files are given
  there on the command line);
- aider's first prompt is answered with ``QUERY``, sent as text (never an aider command such
  as ``/run``: the query may come from the model), and the process takes the terminal's
  foreground so Ctrl-C reaches aider rather than the app that started it.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path
from typing import Any, Sequence

BOOTSTRAP = "import sys; sys.path.insert(0, sys.argv.pop(1)); from core.tools.aider_child import run; run()"
"""The ``-c`` program: the app's own package directory first, then :func:`run`."""
REFUSALS_FILE = "refused.jsonl"
"""In the state directory: one JSON object (``path``, ``reason``) per write aider was refused."""


def _take_terminal() -> None:
    """Own process group in the terminal's foreground: Ctrl-C reaches aider, not the app."""
    try:
        if os.isatty(0) and os.tcgetpgrp(0) == os.getpgrp():
            os.setpgid(0, 0)
            signal.signal(signal.SIGTTOU, signal.SIG_IGN)
            os.tcsetpgrp(0, os.getpgrp())
            signal.signal(signal.SIGTTOU, signal.SIG_DFL)
    except OSError:
        pass


def neutralise_project_configuration(project_root: Path, state_dir: Path) -> None:
    """Patch aider (in this child process only) as the module docstring says."""
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    from aider import main as aider_main
    from aider import models
    from aider.coders import Coder
    from aider.io import InputOutput
    from aider.llm import litellm
    from aider import repomap
    from aider.repomap import RepoMap

    from core.tools.aider_guard import WritePolicy

    if not models.model_info_manager.content:  # no download of litellm's price list
        models.model_info_manager.content = dict(litellm.model_cost)
    models.model_info_manager._cache_loaded = True

    get_parser = aider_main.get_parser
    aider_main.get_parser = lambda default_config_files, git_root: get_parser([], git_root)
    aider_main.load_dotenv_files = lambda *args, **kwargs: []
    aider_main.generate_search_path_list = lambda *args, **kwargs: []

    def setup_git(git_root: str | None, io: Any) -> str | None:
        if not git_root:
            return None
        try:
            return aider_main.git.Repo(git_root).working_tree_dir
        except aider_main.ANY_GIT_ERROR:
            return None

    aider_main.setup_git = setup_git
    RepoMap.TAGS_CACHE_DIR = str(state_dir / f"tags.cache.v{repomap.CACHE_VERSION}")  # absolute: wins over the root

    policy = WritePolicy(project_root)
    allowed_to_edit = Coder.allowed_to_edit
    write_text = InputOutput.write_text

    def refused(path: Path, shown: str) -> str | None:
        reason = policy.refusal(path)
        if reason:
            with open(state_dir / REFUSALS_FILE, "a", encoding="utf-8") as record:
                record.write(json.dumps({"path": shown, "reason": reason}) + "\n")
        return reason

    def guarded_allowed_to_edit(self: Any, path: str) -> Any:
        if reason := refused(Path(self.root) / path, path):
            self.io.tool_error(f"Not editing {path}: {reason}; assistant-tui does not let aider write it.")
            return False
        return allowed_to_edit(self, path)

    def guarded_write_text(self: Any, filename: Any, content: str, *args: Any, **kwargs: Any) -> Any:
        if reason := refused(Path(filename), str(filename)):
            self.tool_error(f"Not writing {filename}: {reason}; assistant-tui does not let aider write it.")
            return None
        return write_text(self, filename, content, *args, **kwargs)

    Coder.allowed_to_edit = guarded_allowed_to_edit
    InputOutput.write_text = guarded_write_text


def _seed_first_prompt(seed: str) -> None:
    """Answer aider's first prompt with ``seed``, sent as a message: never run as a command (``/run``, ``!``)."""
    from aider.coders import Coder
    from aider.io import InputOutput

    ask = InputOutput.get_input
    preproc = Coder.preproc_user_input
    pending = [seed]

    def preproc_seed_as_text(self: Any, inp: str) -> Any:
        if pending and inp == pending[0]:
            pending.clear()
            if self.commands.is_command(inp):
                self.io.tool_warning("The first message is sent to the model as text, not run as an aider command.")
                return inp
        return preproc(self, inp)

    Coder.preproc_user_input = preproc_seed_as_text

    def first_input(self: Any, *args: Any, **kwargs: Any) -> str:
        InputOutput.get_input = ask
        if not seed.strip():
            return ask(self, *args, **kwargs)
        self.rule()
        self.user_input(seed, log_only=False)
        self.add_to_input_history(seed)
        return seed

    InputOutput.get_input = first_input


def run(argv: Sequence[str] | None = None) -> None:
    """``STATE_DIR QUERY AIDER_ARGS...``: run aider's CLI in the current directory (the project)."""
    args = list(sys.argv[1:] if argv is None else argv)
    state_dir, seed, aider_args = Path(args[0]), args[1], args[2:]
    _take_terminal()
    neutralise_project_configuration(Path.cwd().resolve(), state_dir)
    _seed_first_prompt(seed)
    from aider.main import main

    sys.exit(main(aider_args))
