"""A file the conversation already holds is answered with a pointer, checked against the file as it is now."""

from __future__ import annotations

import json
from pathlib import Path

from core.handlers.passthrough import PassthroughHandler
from core.handlers.rereads import holds_lines, numbered
from core.sessions import SessionRecorder, SessionStore, load_session
from core.tools.files import READ_FILE_SPEC, read_file_tool
from tests.core.conftest import assert_history_valid
from tests.core.test_cost import build, run
from tests.fake_llm import FakeLLM, Reply, Tool

SOURCE = "".join(f"def f{n}(x: int) -> int:\n    return x * {n}\n\n\n" for n in range(30))


def handler_with_reads(fake: FakeLLM, root: Path, kind: str = "anthropic") -> PassthroughHandler:
    handler = build(fake, root, kind)
    handler.register_tool(READ_FILE_SPEC, lambda params: read_file_tool(params, project_root=root, explicit_files=set(handler.pinned_files)))
    return handler


def read(path: str, **lines: int) -> Reply:
    return Reply(tools=[Tool("readFile", {"path": path, **lines})])


def results(handler: PassthroughHandler) -> list[str]:
    return [m["content"] for m in handler.conversation_history if m["role"] == "tool"]


def call_ids(handler: PassthroughHandler) -> list[str]:
    return [c["id"] for m in handler.conversation_history if m["role"] == "assistant" for c in m.get("tool_calls") or []]


async def test_a_repeated_read_and_a_range_inside_an_earlier_read_point_back_while_the_file_is_unchanged(
    fake_llm: FakeLLM, tmp_path: Path, provider_kind: str
) -> None:
    (tmp_path / "app.py").write_text(SOURCE)
    handler = handler_with_reads(fake_llm, tmp_path, provider_kind)
    fake_llm.script(read("app.py"), read("app.py", start_line=5, end_line=60), read("./app.py"), Reply(text="seen"))
    assert (await run(handler, "read it"))[-1].kind == "turn_completed"
    whole, part, again = results(handler)
    first = call_ids(handler)[0]
    assert whole.startswith("     1\tdef f0") and whole.count("\n") == SOURCE.count("\n") - 1
    assert part == f"[Not sent again: app.py lines 5-60 are unchanged since the result of readFile call {first} earlier in this conversation, which shows them with these line numbers. Use that result.]"
    assert again.startswith("[Not sent again: app.py lines 1-120") and first in again
    wire = json.dumps(fake_llm.requests[-1].body)
    assert wire.count("return x * 17") == 1  # the text went over the wire once
    assert_history_valid(handler.conversation_history)

    (tmp_path / "app.py").write_text(SOURCE.replace("x * 17", "x * 170"))
    fake_llm.script(read("app.py", start_line=60, end_line=80), Reply(text="changed"))
    await run(handler, "read it after the edit")
    assert results(handler)[-1].startswith("    60\t") and "return x * 170" in results(handler)[-1]


async def test_short_reads_other_files_with_the_same_text_and_errors_are_sent_as_they_are(fake_llm: FakeLLM, tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(SOURCE)
    (tmp_path / "b.py").write_text(SOURCE)  # same bytes, another file: the model must see it is the same
    handler = handler_with_reads(fake_llm, tmp_path)
    fake_llm.script(read("a.py"), read("b.py"), read("a.py", start_line=1, end_line=4), read("a.py", start_line=1, end_line=4),
                    read("missing.py"), read("missing.py"), Reply(text="ok"))
    await run(handler, "compare")
    a, b, short, short_again, missing, missing_again = results(handler)
    assert b.startswith("     1\tdef f0") and b == a
    assert short == short_again and short.startswith("     1\tdef f0") and len(short) < 400
    assert missing == missing_again and "missing.py" in missing


async def test_a_reset_forgets_every_earlier_copy(fake_llm: FakeLLM, tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(SOURCE)
    handler = handler_with_reads(fake_llm, tmp_path)
    fake_llm.script(read("app.py"), Reply(text="read"), read("app.py"), Reply(text="read again"))
    await run(handler, "one")
    handler.reset_conversation()
    await run(handler, "two")
    assert results(handler)[0].startswith("     1\tdef f0")


async def test_a_picked_file_and_a_whole_read_of_it_are_sent_once_either_way_round(fake_llm: FakeLLM, tmp_path: Path) -> None:
    picked, read_first = tmp_path / "picked.py", tmp_path / "read_first.py"
    picked.write_text(SOURCE)
    read_first.write_text(SOURCE.replace("def", "async def"))
    handler = handler_with_reads(fake_llm, tmp_path)
    handler.file_context.replace([str(picked)])
    fake_llm.script(read("picked.py"), read("picked.py", start_line=1, end_line=40), read("read_first.py"), Reply(text="all seen"))
    await run(handler, "look")
    whole, ranged, other = results(handler)
    assert whole.startswith("[Not sent again: picked.py is unchanged; the whole file is in this conversation as the copy the user picked")
    assert ranged.startswith("     1\tdef f0")  # a range needs its line numbers: the picked copy has none
    assert other.startswith("     1\tasync def f0")

    handler.file_context.replace([str(picked), str(read_first)])
    fake_llm.script(Reply(text="noted"))
    await run(handler, "now with both")
    context = fake_llm.requests[-1].last_user_context()
    third = call_ids(handler)[2]
    assert f"[read_first.py was picked into the context; its current text is the whole result of readFile call {third}" in context
    assert "async def f0" not in context

    read_first.write_text("changed = True\n" + SOURCE)
    fake_llm.script(Reply(text="changed"))
    await run(handler, "after an edit")
    assert '<file path="read_first.py">\nchanged = True\n' in fake_llm.requests[-1].last_user_context()


async def test_a_resumed_conversation_still_points_at_its_reads(fake_llm: FakeLLM, tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(SOURCE)
    handler = handler_with_reads(fake_llm, tmp_path)
    store = SessionStore()
    session = store.create(tmp_path)
    writer = store.writer(session, provider="anthropic", model="claude-test")
    handler.add_observer(SessionRecorder(writer))
    fake_llm.script(read("app.py"), Reply(text="read"))
    await run(handler, "one")
    writer.close()

    resumed = handler_with_reads(fake_llm, tmp_path)
    loaded = load_session(session)
    resumed.restore_conversation(loaded.messages, loaded.usage)
    fake_llm.script(read("app.py", start_line=2, end_line=50), Reply(text="again"))
    await run(resumed, "two")
    assert results(resumed)[-1].startswith("[Not sent again: app.py lines 2-50") and call_ids(resumed)[0] in results(resumed)[-1]


def test_whole_lines_only_and_the_numbering_matches_read_file(tmp_path: Path) -> None:
    assert holds_lines("     1\ta\n     2\tb", "     2\tb")
    assert not holds_lines("     1\tab\n     2\tb", "     1\ta")  # a prefix of a longer line is not that line
    assert not holds_lines("    11\tx", "     1\tx")
    for text in (SOURCE, "one\r\ntwo\r\n", "no newline at the end", "tabs\tand  spaces\n\nblank lines\n"):
        (tmp_path / "f.txt").write_bytes(text.encode())
        assert numbered(text) == read_file_tool({"path": "f.txt"}, project_root=tmp_path)["content"]
