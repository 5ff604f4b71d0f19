"""The command palette finds actions by the words people use for them (transcript, history, files, context…).

Through the palette itself (ctrl+p, a synonym, Enter): ``test_flows.test_palette_offers_the_actions_and_commands``.
"""

from __future__ import annotations

from pathlib import Path

from tests.tui.conftest import SIZE, ScriptedHandler
from tui.app import make_app
from tui.palette import AssistantCommands

EXPECTED_FIRST = {
    "transcript": "Show the whole conversation",
    "history": "Show the whole conversation",
    "conversation": "Show the whole conversation",
    "save": "/export [path]",
    "tokens": "/cost",
    "exit": "Quit",
}

FILE_ENTRIES = {"Pick files into the context", "Focus the context pane", "/files", "/add <glob or path>", "/drop <glob or path>"}


async def test_the_palette_matches_what_users_call_things(project: Path, settings) -> None:
    app = make_app(settings, handler=ScriptedHandler([], project_root=project, settings=settings))
    async with app.run_test(size=SIZE):
        provider = AssistantCommands(app.screen)
        ranked: dict[str, list[tuple[str, str]]] = {}
        for query in [*EXPECTED_FIRST, "files", "context"]:
            hits = sorted([hit async for hit in provider.search(query)], key=lambda hit: -hit.score)
            ranked[query] = [(hit.text, str(hit.match_display)) for hit in hits]
        assert {query: ranked[query][0][0] for query in EXPECTED_FIRST} == EXPECTED_FIRST
        assert "/sessions" in [name for name, _ in ranked["history"][:3]], "saved sessions are history too"
        for query in ("files", "context"):
            assert {name for name, _ in ranked[query][:4]} <= FILE_ENTRIES, ranked[query]
            assert {"/files", "/add <glob or path>"} <= {name for name, _ in ranked[query]}
        assert ranked["transcript"][0][1] == "Show the whole conversation  · transcript", "the word that matched is shown"
        assert ranked["save"][0][1] == "/export [path]  · save", "arguments in brackets are shown, not read as markup"
