"""The one place that decides whether a path stays inside the project root.

Every tool that takes a path from the model (the command tool, ``readFile``)
goes through :func:`resolve_in_root`. A path is accepted only when its fully
resolved form (``..`` collapsed and every symbolic link followed) lies inside the
resolved project root. Containment compares path components, so a sibling
directory sharing the root's prefix (``/tmp/proj-evil`` next to ``/tmp/proj``)
is outside. Refusals name the resolved path so the model can correct itself.
"""

from __future__ import annotations

import os
from pathlib import Path


class PathRefused(ValueError):
    """A path argument points outside the project root; ``reason`` says where it led."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def is_inside(path: Path, root: Path) -> bool:
    """True when ``path`` is ``root`` or below it (both already resolved)."""
    return path == root or path.is_relative_to(root)


def resolve_in_root(raw: str, project_root: Path, *, root_resolved: Path | None = None) -> Path:
    """Resolve a path argument against the project root, refusing anything outside it.

    Args:
        raw: The path as the model wrote it; relative paths are taken from the root.
        project_root: The project directory.
        root_resolved: ``project_root.resolve()`` when the caller has it already.

    Returns:
        The resolved absolute path (it need not exist).

    Raises:
        PathRefused: For ``~`` paths, ``..`` escapes, absolute paths elsewhere and
            symbolic links leading out; the message names the resolved path.
    """
    root = root_resolved or project_root.resolve()
    if raw.startswith("~"):
        expanded = Path(os.path.expanduser(raw))
        raise PathRefused(
            f"Path {raw!r} starts with '~': nothing expands it here (there is no shell), and it would mean "
            f"{expanded}, which is outside the project root {root}. Use a path inside the project."
        )
    if "\x00" in raw:
        raise PathRefused(f"Path {raw!r} contains a NUL byte.")
    candidate = Path(raw) if os.path.isabs(raw) else root / raw
    try:
        resolved = candidate.resolve()
    except (OSError, RuntimeError) as exc:  # symlink loops
        raise PathRefused(f"Path {raw!r} cannot be resolved ({exc}); use a plain path inside {root}.") from None
    if is_inside(resolved, root):
        return resolved
    lexical = Path(os.path.normpath(candidate))
    if is_inside(lexical, root):
        raise PathRefused(
            f"Path {raw!r} leads through a symbolic link to {resolved}, which is outside the project root {root}. "
            "Only paths inside the project can be used."
        )
    raise PathRefused(
        f"Path {raw!r} resolves to {resolved}, which is outside the project root {root}. "
        "Only paths inside the project can be used."
    )


def relative_display(path: Path, project_root: Path) -> str:
    """``path`` relative to the resolved root for display, or as given when outside."""
    root = project_root.resolve()
    try:
        return path.relative_to(root).as_posix() or "."
    except ValueError:
        return str(path)
