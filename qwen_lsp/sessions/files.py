"""Where one session's JSONL lives, and which session ids are safe to name a file.

Session ids arrive from the editor (``qwen/sessions/resume``, ``delete``), so
they are untrusted: an id like ``../../settings`` must never become a path.
Qwen Code itself only writes UUIDs; we accept a slightly wider, still
separator-free alphabet so ids of our own making stay usable, and refuse the
rest before touching the file system.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..files.paths import chats_dir

SESSION_SUFFIX = ".jsonl"

_SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,127}")
"""No dots, slashes or backslashes: nothing that can climb out of ``chats/``."""


def is_valid_session_id(session_id: object) -> bool:
    """True when ``session_id`` can safely name a file in the chats directory."""
    return isinstance(session_id, str) and _SESSION_ID.fullmatch(session_id) is not None


def session_path(cwd: str | os.PathLike[str], session_id: str) -> Path:
    """``~/.qwen/projects/<sanitized cwd>/chats/<sessionId>.jsonl``.

    Raises ``ValueError`` for an id that could escape the chats directory.
    """
    if not is_valid_session_id(session_id):
        raise ValueError(
            f"Invalid session id {session_id!r}: use letters, digits, '-' or '_' only "
            "(Qwen Code session ids are UUIDs)."
        )
    return chats_dir(cwd) / f"{session_id}{SESSION_SUFFIX}"
