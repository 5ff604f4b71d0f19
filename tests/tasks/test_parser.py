"""``/task`` parsing: values of every shape, and precise errors that leave everything untouched."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.tasks import AIDER_AUTOMATIC, AIDER_INTERACTIVE, TaskCommandError, parse_task_command, resolve_task_files


@pytest.mark.parametrize(
    ("text", "inputs"),
    [
        ("/task aider:automatic prompt='Add type hints' file_context=['calc.py']", {"prompt": "Add type hints", "file_context": ["calc.py"]}),
        ('/task aider:automatic prompt="Say \\"hi\\"" file_context=["a b.py", \'c.py\']', {"prompt": 'Say "hi"', "file_context": ["a b.py", "c.py"]}),
        ("/task aider:automatic prompt=Refactor", {"prompt": "Refactor"}),
        ("/task aider:automatic file_context=calc.py prompt='x'", {"file_context": ["calc.py"], "prompt": "x"}),
        ("/task   aider:automatic   prompt='tabs\tand  spaces'  ", {"prompt": "tabs\tand  spaces"}),
        ("aider_automatic prompt='by template name'", {"prompt": "by template name"}),
        ("/task aider:automatic prompt='it\\'s' file_context=('a.py',)", {"prompt": "it's", "file_context": ["a.py"]}),
        ("/task aider:automatic prompt='brackets [in] text' file_context=['x].py']", {"prompt": "brackets [in] text", "file_context": ["x].py"]}),
    ],
)
def test_values_bare_quoted_and_lists(text: str, inputs: dict) -> None:
    parsed = parse_task_command(text)
    assert parsed.template is AIDER_AUTOMATIC
    assert (parsed.task_type, parsed.subtype) == ("aider", "automatic")
    assert parsed.inputs == inputs


def test_interactive_and_list() -> None:
    parsed = parse_task_command("/task aider:interactive query='Refactor f1.py' file_context=['f1.py']")
    assert parsed.template is AIDER_INTERACTIVE and parsed.inputs["query"] == "Refactor f1.py"
    assert parse_task_command("/task list").list_only


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("/task", "usage: /task <type>:<subtype>"),
        ("/task aider:manual prompt=x", "unknown task 'aider:manual'. Known tasks: aider:automatic, aider:interactive"),
        ("/task aider:automatic", "aider:automatic needs prompt; usage: /task aider:automatic prompt=<string>"),
        ("/task aider:automatic prompt='   '", "aider:automatic needs prompt"),
        ("/task aider:automatic file_context=['calc.py']", "needs prompt"),
        ("/task aider:automatic prompt=Add type hints", "expected key=value at column 34, found 'type'"),
        ("/task aider:automatic prompt='Add type hints", "unterminated quoted string in the value of prompt starting at column 30"),
        ("/task aider:automatic prompt=x file_context=['a.py'", "unterminated list in the value of file_context starting at column 45"),
        ("/task aider:automatic prompt=x file_context=[a.py]", "cannot parse the value of file_context at column 45"),
        ("/task aider:automatic prompt=x file_context=[__import__('os')]", "cannot parse the value of file_context"),
        ("/task aider:automatic prompt=x file_context=[1, 2]", "file_context (column 45) must be a list of strings"),
        ("/task aider:automatic prompt=['a']", "prompt (column 30) takes a string, not list"),
        ("/task aider:automatic prompt=", "prompt= has no value (column 30)"),
        ("/task aider:automatic prompt='a'b", "unexpected 'b' right after the value of prompt at column 33"),
        ("/task aider:automatic prompt='it''s'", "unexpected \"'\" right after the value of prompt at column 34"),
        ("/task aider:automatic prompt=x colour=red", "unknown parameter 'colour' (column 32) for aider:automatic; it takes: prompt, file_context"),
        ("/task aider:automatic prompt=a prompt=b", "parameter prompt is given twice (column 32)"),
        ("/task aider:automatic =x", "expected key=value at column 23"),
        ("/task list all", "/task list takes no parameters"),
    ],
)
def test_bad_commands_get_precise_messages(text: str, message: str) -> None:
    with pytest.raises(TaskCommandError) as caught:
        parse_task_command(text)
    assert message in str(caught.value)


def test_file_context_resolves_inside_the_project_only(git_repo: Path) -> None:
    parsed = parse_task_command("/task aider:automatic prompt=x file_context=['calc.py', './calc.py', 'auth/login.py']")
    resolved = resolve_task_files(parsed, git_repo)
    assert resolved.inputs["file_context"] == [str(git_repo / "calc.py"), str(git_repo / "auth" / "login.py")]
    (git_repo.parent / "outside.py").write_text("x = 1\n")
    for path, message in (
        ("../outside.py", "file_context: Path '../outside.py' resolves to"),
        (str(git_repo.parent / "outside.py"), "outside the project root"),
        ("missing.py", "file_context: missing.py does not exist in the project"),
        ("auth", "file_context: auth is not a regular file"),
    ):
        with pytest.raises(TaskCommandError, match=None) as caught:
            resolve_task_files(parse_task_command(f"/task aider:automatic prompt=x file_context=['{path}']"), git_repo)
        assert message in str(caught.value)
