"""The portability seam: every POSIX-only call of the package, each with its fallback and the property it keeps.

The package imports and runs where these parts of the standard library are
missing (Windows; a test removes them, ``tests/test_portability.py``). Each
entry says what it protects and what the fallback keeps of that:

| call | where it exists | fallback | property, and what the fallback keeps |
|---|---|---|---|
| ``O_NONBLOCK`` on open | POSIX | ``stat`` first, refuse a non-regular file before opening | a FIFO planted in a repository never hangs a read: kept (Windows has no FIFOs on disk; elsewhere a swap between stat and open is a narrow race) |
| ``O_NOFOLLOW`` on open | POSIX | ``lstat`` first (a link: ``ELOOP``), then the opened file's identity must match it | a read told not to follow a final link does not: kept, a swap in between fails with ``ELOOP`` |
| ``dir_fd`` + ``O_DIRECTORY``/``O_NOFOLLOW`` walk | Linux, macOS, BSD | every directory on the path ``lstat``-ed just before the write | a write reaches only the path checked: kept against any link present at write time; a swap between the check and the write is a narrow race |
| ``fsync`` of a directory | POSIX | skipped (NTFS journals the rename itself) | a crash leaves the old or the new file: kept |
| process groups (``start_new_session``, ``killpg``) | POSIX | the command's own process is killed | Stop ends the command: kept; its children may outlive it |
| ``flock`` | POSIX | ``msvcrt.locking`` on Windows | one writer at a time on a memory file: kept |
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import stat
import sys
import threading
from collections.abc import Iterator
from typing import Any

O_NONBLOCK: int = getattr(os, "O_NONBLOCK", 0)
O_NOFOLLOW: int = getattr(os, "O_NOFOLLOW", 0)
O_CLOEXEC: int = getattr(os, "O_CLOEXEC", 0)
O_DIRECTORY: int = getattr(os, "O_DIRECTORY", 0)
_READ = os.O_RDONLY | O_NONBLOCK | O_CLOEXEC | getattr(os, "O_BINARY", 0)

NOT_A_FILE = "not a regular file (a FIFO, socket or device)"

PROCESS_GROUPS = hasattr(os, "killpg") and hasattr(os, "setsid")
"""Whether a command can run in its own process group, so that Stop kills what it started too."""
SESSION: dict[str, Any] = {"start_new_session": True} if PROCESS_GROUPS else {}
"""Keyword arguments for ``create_subprocess_exec`` that give the command its own process group."""

DIR_FD_WALK = bool(O_DIRECTORY and O_NOFOLLOW) and os.open in os.supports_dir_fd and os.mkdir in os.supports_dir_fd
"""Whether a write can walk its path one directory descriptor at a time, never following a link."""


def open_for_reading(path: str | os.PathLike[str], *, follow_links: bool = True) -> int:
    """A read-only descriptor that never blocks on a FIFO; with ``follow_links=False`` a final symlink is ELOOP.

    Directories open (a later read reports EISDIR, as callers expect)."""
    if not O_NONBLOCK:
        info = os.stat(path) if follow_links else os.lstat(path)
        if stat.S_ISLNK(info.st_mode):
            raise OSError(errno.ELOOP, "a symbolic link", os.fspath(path))
        if not (stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode)):
            raise OSError(errno.EINVAL, NOT_A_FILE, os.fspath(path))
    if follow_links or O_NOFOLLOW:
        return os.open(path, _READ | (0 if follow_links else O_NOFOLLOW))
    before = os.lstat(path)
    if stat.S_ISLNK(before.st_mode):
        raise OSError(errno.ELOOP, "a symbolic link", os.fspath(path))
    fd = os.open(path, _READ)
    after = os.fstat(fd)
    if (after.st_dev, after.st_ino) != (before.st_dev, before.st_ino):
        os.close(fd)
        raise OSError(errno.ELOOP, "the file changed while it was opened", os.fspath(path))
    return fd


def fsync_directory(directory: str | os.PathLike[str]) -> None:
    """Make a rename in ``directory`` durable (a no-op where directories cannot be opened)."""
    if not O_DIRECTORY:
        return
    fd = os.open(directory, os.O_RDONLY | O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def kill_group(pid: int) -> None:
    """End the process group ``pid`` leads (or, without groups, the process): it may be gone already."""
    with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
        if PROCESS_GROUPS:
            os.killpg(pid, signal.SIGKILL)
        else:
            os.kill(pid, signal.SIGTERM)


def checked_directories(path: str) -> Iterator[str]:
    """Each directory from the top of ``path`` (absolute) down to its parent, refused if it is a symlink.

    The fallback of the ``dir_fd`` walk (``nofollow_write``): each component is
    ``lstat``-ed as the walk reaches it and missing ones are made."""
    parts = os.path.normpath(path).split(os.sep)
    current = parts[0] + os.sep if parts[0] else os.sep
    for name in parts[1:-1]:
        current = os.path.join(current, name)
        try:
            info = os.lstat(current)
        except FileNotFoundError:
            os.mkdir(current)
            info = os.lstat(current)
        if not stat.S_ISDIR(info.st_mode):
            raise OSError(errno.ENOTDIR, "on the way is no longer a directory (a symlink was put there?)", current)
        yield current


_HELD: set[tuple[int, int]] = set()
_HELD_LOCK = threading.Lock()


if sys.platform == "win32":
    import msvcrt

    def _os_lock(fd: int) -> bool | None:
        """Lock the file's first byte without waiting (``msvcrt.locking``)."""
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

else:

    def _os_lock(fd: int) -> bool | None:
        """``flock`` the whole file without waiting; None where there is no ``fcntl``."""
        try:
            import fcntl
        except ImportError:
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise
            return False
        return True


def try_lock(fd: int) -> bool:
    """An exclusive lock on the open file without waiting; False when another holder has it. Released by
    :func:`unlock` or when the descriptor closes. ``flock`` on POSIX, ``msvcrt.locking`` on Windows; with
    neither, a lock between this process's threads only (keyed by the file's identity)."""
    locked = _os_lock(fd)
    if locked is not None:
        return locked
    info = os.fstat(fd)
    with _HELD_LOCK:
        if (info.st_dev, info.st_ino) in _HELD:
            return False
        _HELD.add((info.st_dev, info.st_ino))
    return True


def unlock(fd: int) -> None:
    """Release :func:`try_lock`'s in-process fallback (the OS locks go with the descriptor anyway)."""
    with contextlib.suppress(OSError):
        info = os.fstat(fd)
        with _HELD_LOCK:
            _HELD.discard((info.st_dev, info.st_ino))
