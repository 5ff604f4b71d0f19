"""What the prompt held when the app ended on an error: kept on disk, and put back at the next start in the same project.

The prompt guards its own handlers (an error there is a notice, the text stays); an error
anywhere else still ends the app (Textual's ``App._handle_exception``), and this keeps what
was typed from being lost with it.
"""

from __future__ import annotations

import hashlib
import logging
import os
from pathlib import Path

from core import paths

log = logging.getLogger(__name__)


def _path(project_root: Path) -> Path:
    digest = hashlib.sha256(str(Path(project_root).resolve()).encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return paths.data_dir() / "drafts" / f"{digest}.txt"


def keep(project_root: Path, text: str) -> None:
    """Save ``text`` for the next start in ``project_root`` (readable by the user alone); an error is logged, never raised: the app is ending."""
    path = _path(project_root)
    try:
        paths.private_dir(path.parent)
        with os.fdopen(paths.open_private(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), "w", encoding="utf-8") as out:
            out.write(text)
    except OSError:
        log.exception("could not keep the prompt's text in %s", path)
    else:
        log.warning("the app ended on an error; the prompt's text (%d characters) is kept in %s for the next start", len(text), path)


def take(project_root: Path) -> str:
    """The text kept for ``project_root``, removed from disk ('' when there is none)."""
    path = _path(project_root)
    try:
        text = path.read_text(encoding="utf-8")
        path.unlink()
    except FileNotFoundError:
        return ""
    except (OSError, UnicodeDecodeError):
        log.exception("could not read the kept prompt text in %s", path)
        return ""
    return text
