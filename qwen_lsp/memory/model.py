"""The shared vocabulary of the memory core: scopes, topics and one scanned memory file.

Every part of ``memory/`` (store, index, recall, extraction, dream, forget)
speaks in :class:`MemoryDoc`, so a memory written by Qwen Code and one written
here look the same to all of them (Qwen Code's ``memory/types.ts``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

Scope = Literal["user", "project", "team"]
SCOPES: tuple[Scope, ...] = get_args(Scope)
"""Index/prompt order is user, project, team (``memory/prompt.ts``)."""

Topic = Literal["user", "feedback", "project", "reference"]
TOPICS: tuple[Topic, ...] = get_args(Topic)
"""``AUTO_MEMORY_TYPES``: a file whose ``type`` is not one of these is ignored by the scan."""


@dataclass(frozen=True)
class MemoryDoc:
    """One memory file as the scan sees it (``memory/scan.ts``)."""

    scope: Scope
    type: Topic
    path: Path
    """Absolute path of the ``.md`` file."""
    relative_path: str
    """Path below the scope root, ``/``-separated (what the index links to)."""
    title: str
    """``name`` ?? ``title`` ?? ``type``."""
    description: str
    body: str
    mtime: float
    """Seconds since the epoch (``st_mtime``)."""
