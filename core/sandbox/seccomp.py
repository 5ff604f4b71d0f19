"""The sandbox's seccomp filter: no new Unix-domain sockets.

A socket file inside the project (an SSH agent, a Docker or database socket someone
put there) would be a way out of a sandbox that has no network: ``connect()`` on a
path works across network namespaces. As Anthropic's sandbox-runtime does, the
filter refuses ``socket(AF_UNIX, ...)`` with ``EPERM``; ``socketpair`` (an unnamed,
already connected pair: no way out) stays allowed, so programs that talk to their own
children still work. On x86-64, 32-bit programs' ``socketcall`` multiplexer (whose
arguments a filter cannot read) is refused whole, and x32 calls are refused too.

The BPF program is compiled once with libseccomp (through ``pyseccomp``) and handed to
bubblewrap as ``--seccomp FD``.
"""

from __future__ import annotations

import errno
import logging
import os
import socket
import tempfile
from functools import lru_cache

log = logging.getLogger(__name__)


@lru_cache(maxsize=1)
def _program() -> tuple[bytes | None, str]:
    try:
        import pyseccomp as seccomp
    except (ImportError, OSError, RuntimeError) as exc:  # pyseccomp raises at import without libseccomp
        return None, f"no seccomp filter (pyseccomp/libseccomp unavailable: {exc})"
    try:
        program = seccomp.SyscallFilter(seccomp.ALLOW)
        native = seccomp.system_arch()
        arch_x86 = getattr(seccomp.Arch, "X86", None)
        if native == getattr(seccomp.Arch, "X86_64", -1) and arch_x86 is not None:
            program.add_arch(arch_x86)
        program.add_rule(seccomp.ERRNO(errno.EPERM), "socket", seccomp.Arg(0, seccomp.EQ, socket.AF_UNIX))
        if arch_x86 is not None and program.exist_arch(arch_x86):
            program.add_rule(seccomp.ERRNO(errno.EPERM), "socketcall")
        with tempfile.TemporaryFile() as handle:
            program.export_bpf(handle)
            handle.seek(0)
            return handle.read(), ""
    except Exception as exc:  # noqa: BLE001 - reported, never raised: the sandbox still runs
        log.exception("building the seccomp filter failed")
        return None, f"no seccomp filter ({exc})"


_disabled = ""


def disable(reason: str) -> None:
    """Run without the filter from now on (the preflight found bubblewrap cannot load it here)."""
    global _disabled
    _disabled = reason
    log.warning("the sandbox runs without its seccomp filter: %s", reason)


def filter_problem() -> str:
    """Why there is no filter (empty when there is one)."""
    return _disabled or _program()[1]


def filter_fd_available() -> bool:
    """True when runs get the filter."""
    return _program()[0] is not None and not _disabled


def filter_fd() -> int | None:
    """A fresh descriptor holding the compiled filter (bubblewrap reads it to the end), or None."""
    program, _ = _program()
    if program is None or _disabled:
        return None
    fd = os.memfd_create("assistant-tui-seccomp", os.MFD_CLOEXEC)
    os.write(fd, program)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd
