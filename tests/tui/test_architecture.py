"""The shape docs/architecture.md describes, checked on the source: one-way imports, a small composition root.

The import graph is read with ``ast`` from every ``import`` statement, including those under
``TYPE_CHECKING`` and inside functions: a lazy import is still a dependency.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from dataclasses import fields
from pathlib import Path
from typing import Iterable

from tests import import_graph as ig

ROOT = Path(__file__).resolve().parents[2]
ENTRY_POINT = "tui.cli"
"""The console script launches the app; it is the one module above the composition root."""


def _modules(package: str) -> dict[str, Path]:
    return ig.modules(package)


def _graph(package: str) -> dict[str, set[str]]:
    return ig.graph(package)


_cycles = ig.cycles


def test_nothing_in_tui_imports_the_app() -> None:
    importers = [name for name, imported in _graph("tui").items() if "tui.app" in imported and name not in {"tui.app", ENTRY_POINT}]
    assert importers == []


def test_core_imports_neither_tui_nor_textual() -> None:
    offending = {
        name: sorted(m for m in imported if m.split(".")[0] in {"tui", "textual"})
        for name, imported in _graph("core").items()
    }
    assert {name: found for name, found in offending.items() if found} == {}


def test_the_tui_import_graph_has_no_cycle() -> None:
    graph = {name: {m for m in imported if m.startswith("tui.") or m == "tui"} for name, imported in _graph("tui").items()}
    assert _cycles(graph) == []


def test_the_rooms_of_tui_keep_their_floors() -> None:
    """docs/architecture.md's Floors of tui: every room listed, none imports a higher floor, no two import each other."""
    found = ig.violations(_graph("tui"), "tui", ig.floors("### Floors of tui"))
    assert found == {"not in the table": [], "in the table, not in the code": [], "upward": [], "cycles": []}


def test_a_widget_importing_a_screen_is_found() -> None:
    planted = {module: set(imported) for module, imported in _graph("tui").items()}
    planted["tui.widgets.pasted"].add("tui.screens.text_view")  # what the pasted message did before it posted a message
    found = ig.violations(planted, "tui", ig.floors("### Floors of tui"))
    assert found["upward"] == ["widgets (2) -> screens (3): tui.widgets.pasted -> tui.screens.text_view"]
    assert found["cycles"] == ["screens <-> widgets"]


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_app_module_is_only_the_composition_root() -> None:
    lines = (ROOT / "tui" / "app.py").read_text(encoding="utf-8").count("\n")
    assert lines < 300, f"tui/app.py has {lines} lines: move behaviour into a controller (docs/architecture.md)"


def test_each_command_uses_only_what_it_declares() -> None:
    """A command's ``needs`` names every field of the CommandContext its function reads, and only real fields."""
    from tui.commands import COMMANDS
    from tui.slash import CommandContext

    available = {field.name for field in fields(CommandContext)}
    for command in COMMANDS:
        assert command.needs <= available, command.name
        if command.run is None:
            assert not command.needs and (command.to_model or command.action), command.name
            continue
        tree = ast.parse(textwrap.dedent(inspect.getsource(command.run)))
        used = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "ctx"}
        assert used == set(command.needs), f"{command.name} uses {sorted(used)} but declares {sorted(command.needs)}"


# -- widgets never reach across to siblings -------------------------------------------------

WIDGET_PACKAGES = ("tui/widgets", "tui/screens")
SIBLING_LOOKUPS = frozenset({"query", "query_one", "query_exactly_one", "query_children", "get_widget_by_id", "get_child_by_id", "get_child_by_type", "children", "walk_children"})
"""What finds other widgets: called on ``self.app``, ``self.screen`` or ``self.parent``, it finds a sibling."""


def _widget_names() -> set[str]:
    """The names of every widget class loaded once the app is imported (Textual's and ours)."""
    import tui.app  # noqa: F401  (imports every widget and screen the app uses)
    from textual.widget import Widget

    names: set[str] = set()
    pending = [Widget]
    while pending:
        cls = pending.pop()
        names.add(cls.__name__)
        pending.extend(cls.__subclasses__())
    return names


def _widgets_taken(cls: type, widget_names: set[str]) -> list[str]:
    """The parameters of ``cls``'s constructor whose annotation names a widget (``*children`` excepted)."""
    import re

    found = []
    for name, parameter in inspect.signature(cls.__init__).parameters.items():
        if parameter.kind is inspect.Parameter.VAR_POSITIONAL or parameter.annotation is inspect.Parameter.empty:
            continue
        annotation = parameter.annotation if isinstance(parameter.annotation, str) else getattr(parameter.annotation, "__name__", str(parameter.annotation))
        if set(re.findall(r"\w+", annotation)) & widget_names:
            found.append(f"{cls.__name__}({name}: {annotation})")
    return found


def _reaches(source: str) -> list[str]:
    """Where ``source`` looks up widgets through the app, the screen or the parent, or reads our App's attributes."""
    from textual.app import App
    from textual.screen import Screen

    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute) and isinstance(node.value.value, ast.Name)):
            continue
        if node.value.value.id != "self" or node.value.attr not in {"app", "screen", "parent"}:
            continue
        owner, name = node.value.attr, node.attr
        api = {"app": App, "screen": Screen}.get(owner)
        if name in SIBLING_LOOKUPS or (api is not None and not hasattr(api, name)):
            found.append((node.lineno, f"line {node.lineno}: self.{owner}.{name}"))
    return [text for _, text in sorted(found)]


def test_no_widget_takes_another_widget_to_drive() -> None:
    """A widget's constructor takes data and services, never another widget: what it shows, it composes."""
    import importlib

    widget_names = _widget_names()
    offending: list[str] = []
    for package in WIDGET_PACKAGES:
        for name in _modules(package):
            module = importlib.import_module(name)
            for cls in vars(module).values():
                # our constructors only: Textual's Markdown blocks are built by (and given) the Markdown they belong to
                if isinstance(cls, type) and cls.__module__ == name and cls.__name__ in widget_names and "__init__" in vars(cls):
                    offending += _widgets_taken(cls, widget_names)
    assert offending == []


def test_no_widget_looks_up_its_siblings() -> None:
    """No widget or screen queries the app, the screen or its parent for other widgets, nor reads our App's attributes."""
    offending = {
        name: found
        for package in WIDGET_PACKAGES
        for name, path in _modules(package).items()
        if (found := _reaches(path.read_text(encoding="utf-8")))
    }
    assert offending == {}


def test_the_sibling_checks_find_a_widget_that_reaches_across() -> None:
    source = textwrap.dedent('''
        from __future__ import annotations
        from textual.widget import Widget

        class Bad(Widget):
            def __init__(self, *, menu: OptionList | None, size: int) -> None:
                super().__init__()

            def on_key(self) -> None:
                self.app.query_one("#chat")
                self.parent.children
                self.app.prompt
                self.app.notify("fine")
                self.screen.focused
    ''')
    namespace: dict[str, object] = {}
    exec(compile(source, "bad.py", "exec"), namespace)
    assert _widgets_taken(namespace["Bad"], _widget_names()) == ["Bad(menu: OptionList | None)"]  # type: ignore[arg-type]
    assert _reaches(source) == ["line 10: self.app.query_one", "line 11: self.parent.children", "line 12: self.app.prompt"]


# -- no App handed down: controllers get a protocol of tui.hosts (issue 24 s3) -----------------

HOST_NAMES = frozenset({"host", "screens", "app"})
"""What a controller calls the app it was given (a parameter, a field or an attribute of that name)."""


def _protocols() -> dict[str, set[str]]:
    """Each protocol of :mod:`tui.hosts` and the names it allows."""
    import tui.hosts
    from typing import Protocol

    return {
        name: {member for member in vars(cls) if not member.startswith("_")}
        for name, cls in vars(tui.hosts).items()
        if isinstance(cls, type) and Protocol in cls.__mro__[1:] and cls.__module__ == "tui.hosts"
    }


def _annotation(node: ast.expr | None) -> str:
    if node is None:
        return ""
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else ast.unparse(node)


def host_problems(source: str, protocols: dict[str, set[str]], known: dict[str, str] | None = None) -> list[str]:
    """Where a controller's ``source`` types the app as anything but a protocol of tui.hosts, or reaches past it.

    The app is whatever a parameter or field named ``host``, ``screens`` or ``app`` holds; every
    ``<...>.host.X`` / ``host.X`` must be a member of its protocol, and ``getattr`` on it (a probe
    past the protocol) is refused. ``App`` named in any annotation or imported is refused too.
    ``known`` are the names other controllers typed (``CommandContext.screens: CommandHost`` for the commands).
    """
    import re

    tree = ast.parse(source)
    problems: list[str] = []
    given: dict[str, str] = dict(known or {})
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "textual.app" and any(alias.name == "App" for alias in node.names):
            problems.append(f"line {node.lineno}: imports textual.app.App")
        annotated = (node.arg, node.annotation) if isinstance(node, ast.arg) else (
            (node.target.id if isinstance(node.target, ast.Name) else node.target.attr if isinstance(node.target, ast.Attribute) else "", node.annotation)
            if isinstance(node, ast.AnnAssign) else ("", None))
        name, annotation = annotated[0], _annotation(annotated[1])
        if re.search(r"\b(App|AssistantApp)\b", annotation):
            problems.append(f"line {node.lineno}: {name}: {annotation} (the App)")
        elif name in HOST_NAMES:
            if annotation not in protocols:
                problems.append(f"line {node.lineno}: {name}: {annotation or 'no annotation'} (not a protocol of tui.hosts)")
            else:
                given[name] = annotation
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            holder = node.value.attr if isinstance(node.value, ast.Attribute) else node.value.id if isinstance(node.value, ast.Name) else ""
            if holder in given and node.attr not in protocols[given[holder]]:
                problems.append(f"line {node.lineno}: {holder}.{node.attr} (not in {given[holder]})")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in {"getattr", "hasattr"} and node.args:
            target = node.args[0]
            held = target.attr if isinstance(target, ast.Attribute) else target.id if isinstance(target, ast.Name) else ""
            if held in HOST_NAMES:
                problems.append(f"line {node.lineno}: {node.func.id}({held}, ...) (a probe past the protocol)")
    return sorted(set(problems), key=lambda text: (int(text.split(":")[0].split()[1]), text))


def _typed_hosts(sources: Iterable[str], protocols: dict[str, set[str]]) -> dict[str, str]:
    """Names typed with a protocol in a field or a parameter of any controller that uses one name for one protocol
    (``screens: CommandHost`` in the CommandContext): commands reach ``ctx.screens`` in other modules."""
    typed: dict[str, set[str]] = {}
    for source in sources:
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id in HOST_NAMES:
                if (annotation := _annotation(node.annotation)) in protocols:
                    typed.setdefault(node.target.id, set()).add(annotation)
    return {name: next(iter(found)) for name, found in typed.items() if len(found) == 1}


CONTROLLER_FLOOR = 4
"""The controllers' floor in docs/architecture.md's Floors of tui."""
WIDGET_HOSTS = frozenset({"palette"})
"""Controllers that are Textual objects themselves (the palette is a command Provider: ``self.app`` is its own)."""


def test_no_controller_is_handed_the_app() -> None:
    """Every controller types the app it is given as a protocol of tui.hosts and uses only what that names."""
    protocols = _protocols()
    controllers = [room for room, floor in ig.floors("### Floors of tui").items() if floor == CONTROLLER_FLOOR and room not in WIDGET_HOSTS]
    sources = {room: path.read_text(encoding="utf-8") for room in controllers if (path := ROOT / "tui" / f"{room}.py").exists()}
    assert {"conversation", "context_ops", "slash", "startup", "model_commands", "rewinding"} <= set(sources)
    known = _typed_hosts(sources.values(), protocols)
    assert known.get("screens") == "CommandHost", known
    offending = {room: found for room, source in sources.items() if (found := host_problems(source, protocols, known))}
    assert offending == {}


def test_a_controller_typed_with_the_app_or_reaching_past_its_protocol_is_found() -> None:
    source = textwrap.dedent('''
        from textual.app import App

        class Bad:
            def __init__(self, host: "TurnHost", screens: App[Any], app: Any) -> None:
                self.host = host

            def leak(self) -> None:
                self.host.notify("fine")
                self.host.exit()
                status = getattr(self.app, "status", None)

        async def command(ctx, args: str) -> None:
            ctx.screens.suspend()
    ''')
    assert host_problems(source, _protocols(), {"screens": "CommandHost"}) == [
        "line 2: imports textual.app.App",
        "line 5: app: Any (not a protocol of tui.hosts)",
        "line 5: screens: App[Any] (the App)",
        "line 10: host.exit (not in TurnHost)",
        "line 11: getattr(app, ...) (a probe past the protocol)",
        "line 14: screens.suspend (not in CommandHost)",
    ]


# -- one place words how a conversation reads (issue 24 s2/s3) --------------------------------

def _narration_words() -> set[str]:
    """The phrases core/narration.py owns: stop notes, error and warning titles, interruptions."""
    from core import narration

    return ({stop.words for stop in narration.STOPS.values()} | {stop.hint for stop in narration.STOPS.values() if stop.hint}
            | set(narration.ERROR_TITLES.values()) | {narration.ERROR_TITLE} | set(narration.WARNING_TITLES.values())
            | set(narration.INTERRUPTIONS.values())) - {"interrupted"}  # one word is not a copy


def narration_copies(source: str, words: set[str]) -> list[str]:
    """String literals of ``source`` that spell one of narration's phrases (a second place deciding how a stop reads)."""
    return [f"line {node.lineno}: {node.value!r}" for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and any(word in node.value for word in words)]


def test_tui_words_stops_errors_and_interruptions_through_core_narration() -> None:
    words = _narration_words()
    copies = {str(path.relative_to(ROOT)): found for path in sorted((ROOT / "tui").rglob("*.py"))
              if (found := narration_copies(path.read_text(encoding="utf-8"), words))}
    assert copies == {}


def test_a_label_copied_into_the_tui_is_found_and_the_chat_and_export_agree() -> None:
    from core import narration

    planted = 'LABELS = {"max_tokens": ("▲ output limit reached: the answer stops here", "cut")}\n'
    assert narration_copies(planted, _narration_words()) == ["line 1: '▲ output limit reached: the answer stops here'"]
    for reason in narration.STOPS:
        label, _ = narration.stop_label(reason)
        assert narration.stop_note(reason) in label, reason  # the chat's line carries the export's words
    assert narration.stop_label("pause_turn_x") == ("■ stopped: pause_turn_x", "cut")
