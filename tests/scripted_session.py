"""A scripted long coding session for the scripted model server (issue 27's compaction test and benchmark).

The scripted model (:class:`ScriptedModel`) plays a long coding session: it reads large
files, writes long answers, and is asked, late in the session, for facts the user planted
at its start. It answers from what the request it receives holds, and its summaries
carry only what the summary request holds: a fact that compaction lost cannot be answered.
It also checks each request the way the vendor's API would (:func:`anthropic_problems`,
:func:`openai_problems`) and keeps what it found in :attr:`ScriptedModel.problems`.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

from core.compaction.summary import SUMMARY_SYSTEM
from tests.fake_llm import Reply, Request, Tool

WINDOW = 16_000
FACTS = {"launch code": "AZURE-7741", "owner": "Priya Natarajan", "deadline": "March 3rd"}
PLANT = "Remember these for later: the launch code is AZURE-7741, the owner is Priya Natarajan, the deadline is March 3rd."

# Recorded from Anthropic's API (anthropics/claude-code#59696, the body of its 400 answer, request id kept).
PROMPT_TOO_LONG = (
    b'{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 203284 tokens > 200000 maximum"},'
    b'"request_id":"req_011Cb691naMZfUYHaJNPd2Xh"}'
)


def request_tokens(request: Request) -> int:
    """The request's size as the fake server counts input tokens (its JSON body, 4 bytes a token)."""
    return math.ceil(len(json.dumps(request.body)) / 4)


def request_text(request: Request) -> str:
    return json.dumps(request.body, ensure_ascii=False)


def anthropic_problems(request: Request) -> list[str]:
    """What Anthropic's API would refuse in this request: roles, tool_use/tool_result pairing, ids."""
    problems = []
    messages = request.messages
    if messages and messages[0]["role"] != "user":
        problems.append("first message is not the user's")
    previous_calls: set[str] = set()
    for index, message in enumerate(messages):
        if index and messages[index - 1]["role"] == message["role"]:
            problems.append(f"messages.{index}: two {message['role']} messages in a row")
        blocks = message["content"] if isinstance(message["content"], list) else []
        if message["role"] == "user":
            results = {b["tool_use_id"] for b in blocks if b.get("type") == "tool_result"}
            if results - previous_calls:
                problems.append(f"messages.{index}: tool_result without its tool_use: {sorted(results - previous_calls)}")
            if previous_calls - results:
                problems.append(f"messages.{index}: tool_use without its tool_result: {sorted(previous_calls - results)}")
            previous_calls = set()
        else:
            previous_calls = {b["id"] for b in blocks if b.get("type") == "tool_use"}
            problems += [f"bad tool_use id {i!r}" for i in previous_calls if not re.fullmatch(r"[a-zA-Z0-9_-]+", i)]
    return problems


def openai_problems(request: Request) -> list[str]:
    """What an OpenAI-compatible API would refuse: tool messages not answering the assistant's calls, ids."""
    problems = []
    open_calls: set[str] = set()
    for index, message in enumerate(request.messages):
        if message["role"] == "tool":
            if message["tool_call_id"] not in open_calls:
                problems.append(f"messages[{index}]: tool message without a preceding tool_calls entry")
            open_calls.discard(message["tool_call_id"])
            continue
        if open_calls:
            problems.append(f"messages[{index}]: tool_calls without results: {sorted(open_calls)}")
        open_calls = {c["id"] for c in message.get("tool_calls") or []}
        problems += [f"tool call id too long: {i!r}" for i in open_calls if len(i) > 40]
    return problems


class ScriptedModel:
    """The model of a 60-turn session: it reads files, answers at length, and recalls planted facts from its request."""

    def __init__(self) -> None:
        self.summaries: list[str] = []
        self.problems: list[str] = []

    def __call__(self, request: Request) -> Any:
        problems = anthropic_problems(request) if request.api == "anthropic" else openai_problems(request)
        self.problems += problems
        text = request_text(request)
        if SUMMARY_SYSTEM[:40] in request.system:
            kept = [f"- The {name} is {value}." for name, value in FACTS.items() if value in text]
            summary = "## User requests\n" + "\n".join(kept) + "\n\n## Files touched\nbig_*.py were read.\n"
            self.summaries.append(summary)
            return Reply(text=summary)
        last = request.messages[-1]
        if request.api == "anthropic" and isinstance(last["content"], list) and last["content"][-1].get("type") == "tool_result":
            return Reply(text="I read it. " + "The module defines helpers. " * 40)
        if request.api == "openai" and last["role"] == "tool":
            return Reply(text="I read it. " + "The module defines helpers. " * 40)
        query = request.last_user_text()
        if query.startswith("read "):
            return Reply(text="Reading.", tools=[Tool("readFile", {"path": query.split()[1]})])
        if query.startswith("what is the"):
            name = query.removeprefix("what is the").strip(" ?")
            value = FACTS[name]
            return Reply(text=f"The {name} is {value}." if value in text else f"I do not know the {name}.")
        return Reply(text="Here is a long answer. " + "Consider the design carefully. " * 60)


def project(root: Path) -> Path:
    for n in range(8):
        lines = [f"def helper_{n}_{i}(value):\n    return value * {i}  # line {i} of big_{n}.py\n" for i in range(220)]
        (root / f"big_{n}.py").write_text("".join(lines))
    return root


def session_script(turn: int) -> str:
    if turn == 1:
        return PLANT
    if turn in (30, 45, 60):
        return "what is the launch code?" if turn != 45 else "what is the owner?"
    if turn % 3 == 0:
        return f"read big_{turn % 8}.py"
    return f"Tell me about step {turn} of the refactoring, at length."
