"""The handler has no public mutable attribute (issue 24 s1): what others read is a read-only property.

Built for real (the Application's handler, every tool registered), then every public name
of the instance and its classes is tried: an attribute in ``vars()``, a class attribute or a
property with a setter fails, and assigning any public name (a new one too) raises.
"""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from core.app import Application
from core.compat import PassthroughHandler as SpecHandler
from core.config import Settings
from core.handlers.passthrough import PassthroughHandler


def _public_data(handler: PassthroughHandler) -> list[str]:
    """Public names that hold data and could be assigned (not methods, not read-only properties)."""
    found = [name for name in vars(handler) if not name.startswith("_")]
    for name in dir(type(handler)):
        if name.startswith("_"):
            continue
        member = inspect.getattr_static(handler, name)
        if isinstance(member, property):
            if member.fset is not None or member.fdel is not None:
                found.append(f"{name} (a property with a setter)")
        elif not callable(member) and not isinstance(member, (staticmethod, classmethod)):
            found.append(f"{name} (a class attribute)")
    return found


@pytest.fixture
def application(tmp_path: Path) -> Application:
    return Application(Settings(project_root=tmp_path, anthropic_api_key="test", mcp_enabled=False))


def test_the_handler_has_no_public_mutable_attribute(application: Application) -> None:
    handler = application.handler
    assert _public_data(handler) == []
    for name in [n for n in dir(handler) if not n.startswith("_")]:
        with pytest.raises(AttributeError):
            setattr(handler, name, None)
    with pytest.raises(AttributeError, match="pacing="):
        handler.clock = lambda: 0.0  # a test that used to fix the clock this way fails loudly, not silently


def test_the_specs_handler_too(tmp_path: Path) -> None:
    handler = SpecHandler(None, None, None, Settings(project_root=tmp_path, anthropic_api_key="test"))
    assert _public_data(handler) == []
    handler.set_debug_mode(True)
    handler.prime_data_context(initial_files=[])
    assert handler.debug_mode and handler.data_context is not None and _public_data(handler) == []


def test_what_others_read_cannot_be_changed_through_it(application: Application) -> None:
    handler = application.handler
    with pytest.raises(TypeError):
        handler.registered_tools["planted"] = {"name": "planted"}  # type: ignore[index]
    with pytest.raises(TypeError):
        handler.tool_executors["planted"] = print  # type: ignore[index]
    assert "planted" not in handler.registered_tools
    handler.unregister_tool("readFile")
    assert "readFile" not in handler.registered_tools and "readFile" not in handler.tool_executors


def test_the_scan_is_not_vacuous() -> None:
    class Planted(PassthroughHandler):
        visible = 3

        @property
        def writable(self) -> int:
            return 1

        @writable.setter
        def writable(self, value: int) -> None:
            pass

    handler = Planted(None, None, object(), Settings(project_root=Path("."), anthropic_api_key="test"))
    object.__setattr__(handler, "exposed", 1)
    assert sorted(_public_data(handler)) == ["exposed", "visible (a class attribute)", "writable (a property with a setter)"]
