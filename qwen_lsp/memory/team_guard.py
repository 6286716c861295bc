"""The team-memory secret guard for writes that do not go through the memory store.

The store scans what it writes into ``.qwen/team-memory/``; the chat's own
``write_file``/``edit`` (in every approval mode, yolo included, and in
speculation) wrote there unscanned. Qwen Code 0.24.4 runs
``checkTeamMemorySecrets`` in its write tools for the same reason
(``team-memory-secret-guard.ts``): that directory is committed, so a
credential written there reaches every collaborator.

A path counts as team memory when it lies under a ``.qwen/team-memory``
directory of any repository in the workspace, before or after symlinks are
resolved (compared case-insensitively, for case-insensitive file systems),
so a nested checkout's team memory and a link into it are guarded too.
"""

from __future__ import annotations

import os
from pathlib import Path

from .errors import SecretRefused
from .paths import QWEN_DIRNAME, TEAM_MEMORY_DIRNAME, realpath_nearest_existing
from .secrets import scan_for_secrets

_MARK = (QWEN_DIRNAME.casefold(), TEAM_MEMORY_DIRNAME.casefold())


def _under_team_dir(path: Path) -> bool:
    parts = [part.casefold() for part in path.parts]
    return any(tuple(parts[i : i + 2]) == _MARK for i in range(len(parts) - 1))


def is_team_memory_file(path: Path) -> bool:
    """Whether a write to ``path`` lands in a team-memory directory (lexically or through links)."""
    lexical = Path(os.path.abspath(path))
    return _under_team_dir(lexical) or _under_team_dir(realpath_nearest_existing(lexical))


def refuse_team_secrets(path: Path, content: str) -> None:
    """Raise :class:`SecretRefused` (Qwen Code's message) when ``content`` for a team-memory ``path`` holds a secret."""
    if is_team_memory_file(path):
        found = scan_for_secrets(content)
        if found:
            raise SecretRefused([match.label for match in found])
