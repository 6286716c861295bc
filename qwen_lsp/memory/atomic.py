"""Crash-safe file replacement and the cross-process lock that serialises memory writers.

A memory file or index is only ever replaced whole: the new bytes go to a
temporary file in the same directory, are fsync'd, and ``os.replace`` swaps
them in, then the directory is fsync'd so the rename itself survives a power
cut. A process killed at any point leaves the old file or the new one, never
a mix. The temporary name (``.<name>.<random>.tmp``) does not end in
``.md``, so a scan never mistakes a leftover for a memory, and the next
index rebuild deletes leftovers older than a minute.

``rename`` replaces a symlink at the target instead of writing through it
(Qwen Code's ``noFollow``): a planted ``MEMORY.md -> /elsewhere`` link is
swapped for a regular file, and nothing outside the root is touched.

Two servers (two editor windows) on one project must not interleave
"pick a free file name, write it, rebuild the index": :func:`locked` holds
an OS lock on a lock file for the whole sequence: ``fcntl.flock`` on POSIX,
``msvcrt.locking`` on Windows (``files/portability.py``, so the package imports there too). Either is
released by the kernel when its holder dies, so a killed server never
leaves a stale lock behind.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import time
from collections.abc import Iterator
from pathlib import Path

from ..errors import EngineError
from ..files.portability import O_NOFOLLOW, open_for_reading, try_lock, unlock
from ..files.reading import atomic_write_text

__all__ = ["atomic_write_text", "locked", "read_text_nofollow", "remove_stale_temps"]

LOCK_TIMEOUT_S = 30.0
"""How long a writer waits for another process before giving up with an error (no write lost: nothing written)."""
_LOCK_POLL_S = 0.01
STALE_TEMP_AGE_S = 60.0
"""A temporary file this old was left by a killed writer (a real write takes milliseconds)."""
_OUR_TEMP = re.compile(r"\..+\.[a-z0-9_]{8}\.tmp")
"""``mkstemp(prefix=".<name>.", suffix=".tmp")``: only names we create are ever cleaned up."""


def remove_stale_temps(directory: Path, *, min_age_s: float = STALE_TEMP_AGE_S) -> None:
    """Delete temporary files a killed writer left in ``directory`` (ours only, and only old ones)."""
    cutoff = time.time() - min_age_s
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return
    for entry in entries:
        if not _OUR_TEMP.fullmatch(entry.name):
            continue
        with contextlib.suppress(OSError):
            info = entry.stat(follow_symlinks=False)
            if stat.S_ISREG(info.st_mode) and info.st_mtime < cutoff:
                os.unlink(entry.path)


def read_text_nofollow(path: Path, limit: int) -> str | None:
    """The file's text, or None when it is missing, a symlink, or not a regular file.

    At most ``limit`` bytes are read; invalid UTF-8 is replaced, not fatal.
    """
    try:
        fd = open_for_reading(path, follow_links=False)
    except OSError:
        return None
    try:
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                return None
            return handle.read(limit).decode("utf-8", "replace")
    except OSError:
        return None


@contextlib.contextmanager
def locked(lock_file: Path, *, timeout: float = LOCK_TIMEOUT_S) -> Iterator[None]:
    """Hold an exclusive lock on ``lock_file`` (created if needed) for the block.

    Threads of one process exclude each other too: each call opens its own
    file description, and the locks conflict across descriptions.
    """
    lock_file.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock_file, os.O_RDWR | os.O_CREAT | O_NOFOLLOW, 0o600)
    try:
        deadline = time.monotonic() + timeout
        while not try_lock(fd):
            if time.monotonic() >= deadline:
                raise EngineError(
                    f"Memory is busy: another process has held {lock_file} for {timeout:.0f} s. Try again.",
                    kind="memory_busy",
                )
            time.sleep(_LOCK_POLL_S)
        yield
    finally:
        unlock(fd)
        os.close(fd)  # closing the last descriptor releases the lock
