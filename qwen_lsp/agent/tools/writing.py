"""What the file-writing tools share: the path they accept, the write hook, the atomic default.

Writing tools decide *how* to change a file; *whether* a path may be
written is the run's permission rules' call (``agent/permissions.py``),
checked by the agent loop before the tool runs. The tools therefore take
any absolute path, and must only be offered together with rules that
confine them (a memory fork's rules allow the memory roots only).

The write itself goes through a hook (``FileWriter``), so a caller can
route it through its own guards: memory forks write through the memory
store (secret scan, lock, index rebuild). The default writes atomically: a
temporary file in the same directory, fsync, then rename, so a crash
leaves either the old file or the new one, never half of it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from .base import ToolInputError
from ...files.reading import atomic_write_text

__all__ = ["FileWriter", "atomic_write_text", "check_size", "target_path"]

FileWriter = Callable[[Path, str], None]
"""``(absolute path, full new text)``; blocking (runs in a worker thread); raises ``OSError``/``ValueError`` to refuse."""

MAX_WRITE_CHARS = 1_000_000
"""A file the model writes in one call; larger is refused (memory files are a few hundred bytes)."""

MAX_EDIT_FILE_BYTES = 10 * 1024 * 1024
"""The largest existing file ``edit`` will load, as ``read_file``'s 10 MB cap."""


def target_path(raw: str) -> Path:
    """The model's ``file_path`` as a normalised absolute path (not resolved: the permission rule resolves)."""
    text = raw.strip()
    if not text:
        raise ToolInputError("The file_path must not be empty.")
    if "\x00" in text:
        raise ToolInputError("The file_path contains a NUL character.")
    if not os.path.isabs(text):
        raise ToolInputError(f"File path must be absolute: {text}")
    return Path(os.path.normpath(text))


def check_size(content: str, tool: str) -> None:
    if len(content) > MAX_WRITE_CHARS:
        raise ToolInputError(f"{tool}: the content is {len(content)} characters; at most {MAX_WRITE_CHARS} can be written in one call.")
