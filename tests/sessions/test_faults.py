"""Faults of the disk and of concurrency: a clear error, nothing in memory lost, no corruption."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Callable

import pytest

from core.sessions import StoredSession, SessionLocked, SessionStore, SessionWriteError, SessionWriter, load_session
from tests.sessions.conftest import remount


def _contents(session: StoredSession) -> list[str]:
    loaded = load_session(session)
    assert loaded.warnings == []
    return [m["content"] for m in loaded.messages]


def test_directory_blocked_by_a_file_keeps_records_until_it_is_fixed(tmp_path: Path, project: Path) -> None:
    blocker = tmp_path / "data"
    blocker.write_text("not a directory")
    store = SessionStore(blocker / "sessions")
    session = store.create(project)
    writer = SessionWriter(session)

    with pytest.raises(SessionWriteError) as caught:
        writer.user("first prompt")
    assert "a file is in the way" in str(caught.value)
    assert "kept in memory (1 record is waiting)" in str(caught.value)
    with pytest.raises(SessionWriteError) as caught:
        writer.assistant("first answer")
    assert caught.value.pending == 2 and caught.value.errno == errno.ENOTDIR
    assert [r["content"] for r in writer.pending] == ["first prompt", "first answer"]

    blocker.unlink()
    assert writer.flush_pending() == 3, "the meta line and both records"
    writer.user("second prompt")
    writer.close()
    assert _contents(session) == ["first prompt", "first answer", "second prompt"]


def _make_read_only(tmpfs: Callable[[int], Path], tmp_path: Path) -> tuple[Path, Callable[[], None]]:
    """A data directory that refuses writes, even to root; returns it and a function undoing that."""
    if os.geteuid() != 0:
        data = tmp_path / "ro-data"
        data.mkdir()
        data.chmod(0o500)
        return data, lambda: data.chmod(0o700)
    data = tmpfs(1 << 20)  # chmod does not stop root; a read-only mount does
    remount(data, "ro")
    return data, lambda: remount(data, "rw")


def test_read_only_data_directory(tmpfs: Callable[[int], Path], tmp_path: Path, project: Path) -> None:
    data, make_writable = _make_read_only(tmpfs, tmp_path)
    store = SessionStore(data / "sessions")
    session = store.create(project)
    writer = SessionWriter(session)  # cannot lock yet: it will when the directory is writable

    with pytest.raises(SessionWriteError) as caught:
        writer.user("hello")
    message = str(caught.value)
    assert ("read-only" in message or "permission denied" in message) and str(session.path) in message
    assert writer.pending[0]["content"] == "hello"
    assert store.list(project) == [] and store.latest(project) is None

    make_writable()
    writer.user("still here")
    writer.close()
    assert _contents(session) == ["hello", "still here"]


def test_full_disk_keeps_records_and_resumes_a_half_written_line(tmpfs: Callable[[int], Path], project: Path) -> None:
    data = tmpfs(256 * 1024)
    store = SessionStore(data / "sessions")
    session = store.create(project)
    writer = SessionWriter(session)
    writer.user("before the disk filled")

    filler = data / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        with pytest.raises(OSError) as full:
            while True:
                os.write(fd, b"\0" * 4096)
        assert full.value.errno == errno.ENOSPC
        # Leave room for part of the next record only, so its write stops half-way.
        os.ftruncate(fd, max(0, os.fstat(fd).st_size - 16 * 1024))
    finally:
        os.close(fd)

    big = "z" * 100_000
    with pytest.raises(SessionWriteError) as caught:
        writer.assistant(big)
    assert caught.value.errno == errno.ENOSPC and "disk is full" in str(caught.value)
    assert caught.value.pending == 1 and writer.pending[0]["content"] == big
    assert not session.path.read_bytes().endswith(b"\n"), "the record was written only in part"
    with pytest.raises(SessionWriteError):
        writer.user("typed while the disk was full")
    with pytest.raises(SessionWriteError):
        writer.flush_pending()

    filler.unlink()
    assert writer.flush_pending() == 2
    writer.close()
    assert _contents(session) == ["before the disk filled", big, "typed while the disk was full"]


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_enospc_from_dev_full_needs_no_root(store: SessionStore, project: Path) -> None:
    session = store.create(project)
    writer = SessionWriter(session)
    writer.user("saved")
    # The transcript's descriptor now writes to /dev/full: every write fails with ENOSPC, as on a full disk.
    # (A symlink to /dev/full no longer works: transcripts are never opened through a link.)
    full = os.open("/dev/full", os.O_WRONLY)
    os.dup2(full, writer._fd)
    os.close(full)
    with pytest.raises(SessionWriteError) as caught:
        writer.user("nowhere to go")
    assert caught.value.errno == errno.ENOSPC
    assert "disk is full" in str(caught.value) and "kept in memory" in str(caught.value)
    with pytest.raises(SessionWriteError):
        writer.close()
    assert [r["kind"] for r in writer.pending] == ["user"], "close() keeps what it could not write"
    assert _contents(session) == ["saved"]


def test_a_transcript_path_that_is_a_symlink_is_refused(store: SessionStore, project: Path, tmp_path: Path) -> None:
    session = store.create(project)
    session.path.parent.mkdir(parents=True, exist_ok=True)
    session.path.symlink_to("/dev/full")
    writer = SessionWriter(session)
    with pytest.raises(SessionWriteError) as caught:
        writer.user("kept")
    assert caught.value.errno == errno.ELOOP and "kept in memory" in str(caught.value)
    assert [r["kind"] for r in writer.pending] == ["user"]


def test_second_writer_is_refused_and_can_fork(store: SessionStore, session: StoredSession) -> None:
    first = store.writer(session)
    first.user("from the first instance")
    with pytest.raises(SessionLocked) as caught:
        store.writer(store.open(session.id))
    assert "open in another assistant-tui" in str(caught.value) and "fork" in str(caught.value)
    assert caught.value.holder_pid == os.getpid()

    store.set_title(session, "Work")
    forked = store.fork(session)
    with store.writer(forked) as second:
        second.user("continued in the fork")
    first.user("first instance goes on")
    first.close()

    assert _contents(session) == ["from the first instance", "first instance goes on"]
    loaded = load_session(forked)
    assert [m["content"] for m in loaded.messages] == ["from the first instance", "continued in the fork"]
    assert loaded.meta["forked_from"] == session.id and loaded.meta["id"] == forked.id
    assert store.title(forked) == "Work (fork)"
    store.writer(session).close()  # released by close()


_HOLDER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from core.sessions import StoredSession, SessionWriter

    path, project, session_id = sys.argv[1:4]
    writer = SessionWriter(StoredSession(id=session_id, path=Path(path), project_root=Path(project), created=0.0))
    writer.user("held by another process")
    print("ready", flush=True)
    sys.stdin.read()
    """
)


@pytest.mark.parametrize("ending", ["exit", "kill -9"])
def test_lock_held_by_another_process(store: SessionStore, session: StoredSession, tmp_path: Path, ending: str) -> None:
    script = tmp_path / "holder.py"
    script.write_text(_HOLDER)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    holder = subprocess.Popen(
        [sys.executable, str(script), str(session.path), str(session.project_root), session.id],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == b"ready"
        with pytest.raises(SessionLocked) as caught:
            store.writer(session)
        assert f"pid {holder.pid}" in str(caught.value)
    finally:
        if ending == "exit":
            holder.communicate(b"", timeout=10)
        else:
            holder.kill()
            holder.wait(timeout=10)
    with store.writer(session) as writer:  # the kernel released the lock either way
        writer.user("mine now")
    assert _contents(session) == ["held by another process", "mine now"]


def test_fork_leaves_out_a_partial_last_line(store: SessionStore, session: StoredSession) -> None:
    with store.writer(session) as writer:
        writer.user("complete")
    with open(session.path, "ab") as handle:
        handle.write(b'{"kind":"user","ts":1.0,"content":"cut sh')
    forked = store.fork(session)
    loaded = load_session(forked)
    assert loaded.warnings == [] and [m["content"] for m in loaded.messages] == ["complete"]
    assert [r["kind"] for r in loaded.records] == ["meta", "user"]
