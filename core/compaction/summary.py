"""The summary request: the older part of the conversation as text, and what the summary must keep.

The messages being replaced are sent as one plain-text transcript in one user message
(no tool calls, no thinking blocks), so the request is valid for any provider whatever
the history holds. Long tool results are cut in it: the summary needs what was found,
not every line (a file can be read again).
"""

from __future__ import annotations

import json
from typing import Any, Sequence

SUMMARY_SYSTEM = """\
You are compacting the conversation of a coding session so that it can go on within the model's context window.
You are given the older part of the conversation. Write the summary that will replace it; the newest messages are kept as they are.
The assistant that continues the session will see only your summary in place of these messages, so keep everything it needs:

1. User requests: every question and instruction the user gave, with its exact names, numbers, values and wording where short.
2. Facts established: values, names, identifiers, figures and findings, exactly as written.
3. Decisions made and why.
4. Files touched or read, and why (paths).
5. Open items: what is unanswered or unfinished.
6. Plan state: the current plan's steps and which are done.

Write plain Markdown under those six headings. Do not invent anything; do not address the user."""

RESULT_CHARS = 1_500
"""Characters of one tool result kept in the summary request."""


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[... {len(text) - limit:,} more characters not shown here]"


def render_transcript(messages: Sequence[dict[str, Any]], originals: dict[str, str], budget_chars: int) -> str:
    """``messages`` as a plain-text transcript of at most about ``budget_chars`` characters.

    Pruned results are shown from their original text (cut); when the whole is still
    too long, the oldest tool results go first, then the oldest messages (an earlier
    summary is always kept).
    """
    blocks: list[tuple[int, str]] = []  # (priority to keep: 2 summary/user, 1 assistant, 0 tool), text
    for message in messages:
        role = message.get("role")
        content = str(message.get("content") or "")
        if role == "user":
            label = "EARLIER SUMMARY" if message.get("compaction") else "USER"
            blocks.append((2, f"{label}:\n{content}"))
        elif role == "assistant":
            lines = [f"ASSISTANT:\n{content}" if content else "ASSISTANT:"]
            for call in message.get("tool_calls") or []:
                lines.append(f"  -> calls {call.get('name')}({json.dumps(call.get('parameters') or {}, ensure_ascii=False)[:500]})")
            blocks.append((1, "\n".join(lines)))
        elif role == "tool":
            text = originals.get(str(message.get("tool_call_id")), content)
            status = " (error)" if message.get("is_error") else ""
            blocks.append((0, f"RESULT of {message.get('name')}{status}:\n{_cut(text, RESULT_CHARS)}"))
    total = sum(len(text) + 2 for _, text in blocks)
    for priority in (0, 1, 2):
        index = 0
        while total > budget_chars and index < len(blocks):
            keep, text = blocks[index]
            if keep == priority and not text.startswith("EARLIER SUMMARY"):
                short = text.split("\n", 1)[0] + "\n[left out: the summary request had to fit the window]"
                total -= len(text) - len(short)
                blocks[index] = (keep, short)
            index += 1
    return "\n\n".join(text for _, text in blocks)


def summary_request(transcript: str, focus: str = "") -> str:
    """The one user message of the summary request."""
    focus_line = f"\n\nThe user asked the summary to focus on: {focus.strip()}" if focus.strip() else ""
    return (
        "<conversation>\n" + transcript + "\n</conversation>\n\n"
        "Write the summary of the conversation above, under the six headings." + focus_line
    )
