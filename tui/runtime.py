"""Process-wide tuning of the console app, in one place, applied only by its entry point.

:func:`apply` is called by ``tui.cli`` before Textual is imported (and by
``tests/conftest.py`` the same way, so the suite runs as the app does). Nothing
here happens at import, in ``core/`` or when an :class:`~tui.app.AssistantApp`
is built: an embedder or a test that does not call :func:`apply` gets stock
Python and Textual, and the hooks below do nothing.

What it changes, and why:

- **Frame rate** (``TEXTUAL_FPS``, 240; a user's own setting wins). Textual
  paints at most that many frames a second on a timer that, once a frame
  overran its slot, skips to the slot after next: at the default 60 a key
  pressed just after a streamed write's frame waited up to two slots (33 ms)
  for its own frame. At 240 that wait is at most 8 ms; frames are still painted
  only when something changed (measured: no more CPU while streaming and typing).
- **Collector thresholds.** Streaming keeps promoting render caches to the old
  generation, which set off a full collection every few hundred milliseconds;
  a full collection is made rarer (every :data:`FULL_COLLECTION_EVERY` middle
  ones) and one runs after each turn instead (:func:`after_turn`), when the
  answer is on screen and nobody waits.
- **gc.freeze after start-up** (:func:`collect_start_up`, then :func:`freeze_start_up`):
  the few hundred thousand objects of start-up (modules, classes, the SDK, a
  resumed session) cost 100-300 ms per full collection; frozen, later collections
  skip them. What start-up left dead (the resumed chat's pruned widgets) is
  collected first, before the SDK is imported: that collection walks the app
  alone, and it lands before the user can open the file picker, not in the
  middle of a search (a full collection in the prewarm thread holds the GIL).
  Turns are not frozen: what a turn leaves (pruned chat widgets die in cycles)
  is reclaimed by the next turn's collection instead of staying frozen.
- **The file index is built with the collector paused** (:func:`tune_memory`):
  ~160,000 acyclic lists and dicts for 80,000 files set off full collections in
  the indexing thread that held the GIL 30-55 ms at a time; once built they are
  frozen.
- **No full collection while the file picker is open** (:func:`defer_full_collections`):
  one stopped the loop for ~50 ms, the slowest keystroke of a search.
- **No collection before the first frame** (:func:`pause_collector_until_first_frame`,
  then :func:`first_frame`): the console script's imports, stylesheets and widgets
  are ~65,000 objects that live for the whole run; young and middle collections
  walked them again and again before the first frame (about 10 % of the CPU to the
  prompt). The first frame turns the collector back on.
- **malloc_trim after a turn** (:func:`release_free_memory`, in a thread): a tool result of
  megabytes passes through a few transient copies; freed, they stayed in the C
  heap (24 MB resident for a 100,000-line result nothing kept). Likewise after
  start-up's collection: a resumed session's transient peak.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import os
import sys
import threading
import time
from typing import Any, Callable, Iterator, MutableMapping

log = logging.getLogger(__name__)

FRAME_RATE = 240
"""Frames a second Textual may paint (``TEXTUAL_FPS``) unless the user set it."""
FULL_COLLECTION_EVERY = 100
"""Middle-generation collections between full ones (CPython's default is 10)."""
NO_FULL_COLLECTION = 2**31 - 1
"""The full-collection threshold while full collections are deferred (:func:`defer_full_collections`)."""

_applied = False
_paused = False
"""The collector is off until the first frame (:func:`pause_collector_until_first_frame`)."""
_malloc_trim: Callable[[int], int] | None = None
_trim_loaded = False

def apply(environ: MutableMapping[str, str] | None = None) -> None:
    """Tune this process for the full-screen app. Call before Textual is imported.

    Args:
        environ: where ``TEXTUAL_FPS`` is set (default ``os.environ``, which Textual reads at import).
    """
    global _applied
    set_frame_rate(environ)
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, FULL_COLLECTION_EVERY)
    _applied = True  # libc's malloc_trim is looked up at the first trim: ctypes is not on the path to the first frame

def set_frame_rate(environ: MutableMapping[str, str] | None = None) -> None:
    """Let Textual paint up to :data:`FRAME_RATE` frames a second (unless ``TEXTUAL_FPS`` is set). Before Textual's import."""
    (os.environ if environ is None else environ).setdefault("TEXTUAL_FPS", str(FRAME_RATE))


def pause_collector_until_first_frame() -> None:
    """The console script, before it imports the app: no garbage collection until :func:`first_frame`.

    Only the entry point calls this (an app run without it never calls :func:`first_frame`
    with the collector paused, so it changes nothing there).
    """
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def first_frame() -> None:
    """The first frame is on screen: turn the collector back on (when :func:`pause_collector_until_first_frame` paused it).

    Not frozen here: what start-up left dead (a few thousand objects) would stay for good.
    One young collection then walks start-up's objects once, after the frame; start-up's
    own collection (:func:`collect_start_up`) and freeze follow in the prewarm thread.
    """
    global _paused
    if _paused:
        _paused = False
        gc.enable()


def collect_start_up() -> None:
    """Start-up is done (a session resumed): collect what it left dead, before the SDK is imported.

    Then :func:`freeze_start_up`. Collecting before the freeze matters: widgets a resumed
    chat pruned die in reference cycles, and frozen they stayed in memory for good. Before
    the SDK's import the collection walks the app alone (the SDK adds ~140k objects), and it
    comes at once, not seconds later while the user may be typing in the file picker.
    """
    if _applied:
        began = time.perf_counter()
        found = gc.collect()
        _trim_now()  # (already in a thread) the resume's peak (records read back, widgets built and pruned) leaves the C heap
        log.debug("after start-up: gc and trim took %.1f ms, %d unreachable", (time.perf_counter() - began) * 1000, found)


def freeze_start_up() -> None:
    """Freeze what is alive now (start-up, a resumed session, the SDK once imported): later full collections skip it.

    No collection here: :func:`collect_start_up` ran before the import, and what the import
    left dead is a few objects, not worth a pause that holds the GIL while the user types.
    """
    if _applied:
        gc.freeze()

def after_turn() -> None:
    """A turn ended and its answer is on screen: collect what it left now, not in the middle of the next reply."""
    if not _applied:
        return
    began = time.perf_counter()
    found = gc.collect()
    log.debug("after a turn: gc took %.1f ms, %d unreachable", (time.perf_counter() - began) * 1000, found)

def defer_full_collections() -> Callable[[], None]:
    """No full collection until the returned function is called (young and middle ones still run); when :func:`apply` ran.

    For a modal the user types in (the file picker): a full collection walks every tracked
    object (100,000 or more with a large project indexed) and stopped the loop ~50 ms, the
    slowest keystroke of a search. Nothing is frozen, so nothing is leaked: the deferred
    collection comes with the next full one after :func:`resume <defer_full_collections>`.
    """
    if not _applied:
        return lambda: None
    young, middle, previous = gc.get_threshold()
    gc.set_threshold(young, middle, NO_FULL_COLLECTION)
    resumed = False

    def resume() -> None:
        nonlocal resumed
        if not resumed:
            resumed = True
            young, middle, _ = gc.get_threshold()
            gc.set_threshold(young, middle, previous)

    return resume

@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """No automatic collection inside (acyclic data is still freed by reference counting); freeze after."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.freeze()
            gc.enable()

def tune_memory(memory_system: Any) -> None:
    """Have ``memory_system`` build its index with the collector paused (when :func:`apply` ran)."""
    if _applied and hasattr(memory_system, "build_guard"):
        memory_system.build_guard = collector_paused

def _load_trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        return ctypes.CDLL("libc.so.6").malloc_trim  # CDLL: the call releases the GIL
    except (OSError, AttributeError):  # not glibc: nothing to trim
        return None


def _trim_now() -> None:
    global _malloc_trim, _trim_loaded
    if not _trim_loaded:
        _malloc_trim, _trim_loaded = _load_trim(), True
    if _malloc_trim is not None:
        _malloc_trim(0)


_trim_state = threading.Lock()
_trimming = False
_trim_again = False


def _trim_in_thread() -> None:
    global _trimming, _trim_again
    while True:
        try:
            _trim_now()
        except Exception:  # returning memory is best effort
            log.exception("malloc_trim failed")
        with _trim_state:
            if not _trim_again:
                _trimming = False
                return
            _trim_again = False


def release_free_memory() -> None:
    """Give the C heap's free pages back to the system (glibc ``malloc_trim``) when :func:`apply` ran; in a thread.

    Called on the event loop when a turn ends: the trim walks the whole heap (milliseconds
    at 1,000 turns), so it runs in a thread of its own (ctypes releases the GIL during the
    call). One trim at a time; a request that comes while one runs makes it run once more.
    """
    global _trimming, _trim_again
    if not _applied:
        return
    with _trim_state:
        if _trimming:
            _trim_again = True
            return
        _trimming = True
    threading.Thread(target=_trim_in_thread, name="malloc-trim", daemon=True).start()
