"""Deterministic text the fake model sends: mixed prose, code and tables, and past conversation turns."""

from __future__ import annotations

import random
from typing import Any

CHARS_PER_TOKEN = 4
"""The fake server's token accounting: one token is about four characters."""

_WORDS = (
    "the handler streams each delta into the chat while the trace shows every tool call as it starts and finishes "
    "configuration comes from one place so the terminal client and the headless command behave the same way "
    "when a request would exceed the context window it is not sent and the user is told which resource ran out"
).split()

_CODE = '''```python
async def stream_query(self, query: str) -> AsyncIterator[Event]:
    """Run one user turn, yielding every step."""
    self.add_message("user", query)
    async for item in self.provider.stream_message(self.history, self.system):
        if isinstance(item, TextChunk):
            yield TextDelta(text=item.text)
        elif isinstance(item, ToolCallReady):
            result = await self.run_tool(item.call)
            self.answer(item.call, result)
```
'''

_TABLE = """| file | lines | status | owner |
|------|------:|--------|-------|
| core/handlers/passthrough.py | 483 | stable | engine |
| core/providers/anthropic.py | 232 | stable | engine |
| tui/widgets/chat.py | 202 | changing | ui |
| tui/widgets/trace.py | 215 | changing | ui |
| core/memory/fuzzy.py | 307 | new | memory |
"""


def _sentence(rng: random.Random) -> str:
    words = rng.choices(_WORDS, k=rng.randint(8, 18))
    text = " ".join(words)
    if rng.random() < 0.3:
        text += f" (see `{rng.choice(['core/app.py', 'tui/turn.py', 'core/cli.py'])}`)"
    return text[0].upper() + text[1:] + "."


def mixed_markdown(chars: int, seed: int = 0) -> str:
    """About ``chars`` characters of Markdown: headings, prose, lists, fenced code and tables."""
    rng = random.Random(seed)
    parts: list[str] = []
    size = 0
    section = 0
    while size < chars:
        roll = rng.random()
        if roll < 0.08:
            section += 1
            block = f"## Part {section}: {rng.choice(_WORDS)} and {rng.choice(_WORDS)}\n"
        elif roll < 0.5:
            block = " ".join(_sentence(rng) for _ in range(rng.randint(2, 5))) + "\n"
        elif roll < 0.68:
            block = "\n".join(f"- {_sentence(rng)}" for _ in range(rng.randint(2, 5))) + "\n"
        elif roll < 0.86:
            block = _CODE
        else:
            block = _TABLE
        parts.append(block)
        size += len(block) + 1
    return "\n".join(parts)[:chars]


def text_for(tokens_per_second: float, seconds: float, seed: int = 0) -> str:
    """Enough Markdown to stream for ``seconds`` at ``tokens_per_second``."""
    return mixed_markdown(int(tokens_per_second * seconds * CHARS_PER_TOKEN), seed)


def past_turn(index: int) -> dict[str, Any]:
    """One earlier turn: a question, a tool call and its result, a Markdown answer."""
    rng = random.Random(index)
    answer = mixed_markdown(rng.randint(250, 700), seed=index)
    return {
        "query": f"Turn {index}: where does the handler {rng.choice(_WORDS)} the {rng.choice(_WORDS)}?",
        "intro": "Let me look for the relevant files first.",
        "tool": {"name": "executeFilePathCommand", "parameters": {"command": f"git grep -l {rng.choice(_WORDS)}"}},
        "result": "3 file(s):\ncore/handlers/passthrough.py\ncore/app.py\ntui/turn.py",
        "answer": answer,
    }
