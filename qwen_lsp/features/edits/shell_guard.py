"""The team-memory secret guard around the chat's approved shell commands (``memory/shell_guard.py``).

Before each command that may write, the workspace's team-memory folders are
recorded off the event loop; after it, whatever it wrote there holding a
secret is undone and the command's result becomes Qwen Code's refusal. The
repository is looked up per command, so a ``git init`` earlier in the chat
moves the watched folder with it, as the memory store's paths would.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from ...agent.tools.run_shell import AfterCommand, CommandGuard
from ...files.paths import find_git_root
from ...memory.shell_guard import TeamSnapshot, snapshot, team_roots


def team_memory_guard(workspace_root: Path) -> CommandGuard:
    """A :data:`~qwen_lsp.agent.tools.run_shell.CommandGuard` for the folder opened at ``workspace_root``."""

    def record() -> TeamSnapshot:  # blocking: runs in a worker thread
        repo = find_git_root(workspace_root, resolve=False) or workspace_root
        return snapshot(team_roots(workspace_root, repo), repo)

    async def before() -> AfterCommand:
        recorded = await asyncio.to_thread(record)

        async def after() -> str | None:
            undone = await asyncio.to_thread(recorded.undo_secret_writes)
            return undone.message if undone is not None else None

        return after

    return before
