"""Write a file at a path resolved earlier, refusing any symlink that appeared on the way since.

The CLI's write tools resolve the model's path (links followed, checked to
be inside the workspace), then ask the user, then write. While the prompt
waits, a directory on that path can be swapped for a symlink to anywhere;
a plain ``open`` (or ``mkstemp`` in that directory) would then follow it
and write outside the workspace. Here every directory from ``/`` down is
opened with ``O_NOFOLLOW`` relative to its parent's descriptor, so the path
written is the one checked: a component that is now a link fails the write
(``ELOOP``/``ENOTDIR``) and nothing is written. The file itself is replaced
atomically as by ``files.atomic_write_text`` (temporary file, ``fsync``,
``rename`` within the same directory descriptor, directory ``fsync``),
keeping an existing file's permission bits.

Where the system cannot open a directory relative to another's descriptor
(``files/portability.py``: Windows), each directory on the path is
``lstat``-ed as the walk reaches it instead, and the file is written by
its full path: a link present at write time still fails the write.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from pathlib import Path

from .portability import DIR_FD_WALK, O_CLOEXEC, O_DIRECTORY, O_NOFOLLOW, checked_directories, fsync_directory
from .reading import TEMP_SUFFIX

_DIR_FLAGS = os.O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC


class PathChanged(OSError):
    """A directory on the resolved path is now a symlink (or no directory): nothing was written."""


def _open_dir(name: str, parent: int) -> int:
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=parent)
    except FileNotFoundError:
        os.mkdir(name, dir_fd=parent)
        return os.open(name, _DIR_FLAGS, dir_fd=parent)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise PathChanged(exc.errno, f"{name!r} on the way is no longer a directory (a symlink was put there?)") from None
        raise


def write_text_nofollow(path: Path, content: str) -> None:
    """Replace the file at the already resolved, absolute ``path``; no symlink is followed on the way."""
    write_bytes_nofollow(path, content.encode("utf-8"))


def write_bytes_nofollow(path: Path, data: bytes) -> None:
    """:func:`write_text_nofollow` for bytes kept as they were (a file put back exactly)."""
    if not path.is_absolute() or len(path.parts) < 2:
        raise ValueError(f"not an absolute file path: {path}")
    if not DIR_FD_WALK:
        _write_by_path(path, data)
        return
    fd = os.open(path.anchor, _DIR_FLAGS)
    try:
        for name in path.parts[1:-1]:
            child = _open_dir(name, fd)
            os.close(fd)
            fd = child
        _replace_in(fd, path.name, data)
    finally:
        os.close(fd)


def _replace_in(dir_fd: int, name: str, data: bytes) -> None:
    keep: int | None = None
    with contextlib.suppress(FileNotFoundError):
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        if stat.S_ISREG(info.st_mode):
            keep = stat.S_IMODE(info.st_mode)
    tmp = f".{name}.{secrets.token_hex(6)}{TEMP_SUFFIX}"
    out = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o666, dir_fd=dir_fd)
    try:
        try:
            if keep is not None:  # a new file gets 0666 less the umask; an existing one keeps its bits
                os.fchmod(out, keep)
            _write_all(out, data)
        finally:
            os.close(out)
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dir_fd)
        raise
    os.fsync(dir_fd)


def _write_by_path(path: Path, data: bytes) -> None:
    """The fallback walk (module doc): directories checked one by one, then temporary file and rename by path."""
    try:
        for _directory in checked_directories(str(path)):
            pass
    except NotADirectoryError as exc:
        raise PathChanged(exc.errno, f"{exc.filename!r} on the way is no longer a directory (a symlink was put there?)") from None
    keep: int | None = None
    with contextlib.suppress(FileNotFoundError):
        info = os.lstat(path)
        if stat.S_ISREG(info.st_mode):
            keep = stat.S_IMODE(info.st_mode)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}{TEMP_SUFFIX}")
    out = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | O_CLOEXEC | getattr(os, "O_BINARY", 0), 0o666)
    try:
        try:
            if keep is not None:
                os.chmod(tmp, keep)
            _write_all(out, data)
        finally:
            os.close(out)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    fsync_directory(path.parent)


def _write_all(fd: int, data: bytes) -> None:
    """Every byte of ``data`` to ``fd`` (``os.write`` may take fewer), then to the disk."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    os.fsync(fd)
