"""The agent side of memory's forked runs: tools, the permission rule, and the fork itself.

Implements :class:`qwen_lsp.memory.forking.MemoryForkRunner` for extraction
and dream: the read tools, a read-only shell, and ``write_file``/``edit``
that write through the memory store (secret scan, lock, index rebuild),
under the memory permission rule (``memory-scoped-agent-config.ts``), in a fork of the parent
turn (``fork.py``: same system prompt and tools array for the prompt cache).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

from ...errors import EngineError
from ...memory.forking import ForkReport, ParentTurn
from ...agent.fork import ParentRequest, run_fork
from ...agent.loop import StreamingModel
from .permissions import memory_rule
from ...agent.permissions import Permissions
from ...agent.tool import Tool
from ...agent.tools import read_only_tools
from ...agent.tools.edit import EditTool
from ...agent.tools.shell import NAME as SHELL, ReadOnlyShellTool
from ...agent.tools.write_file import WriteFileTool

ModelFactory = Callable[[], Awaitable[StreamingModel]]
"""The current model client (settings may have replaced it since the turn)."""


class MemoryWriter(Protocol):
    def write_text(self, path: Path, content: str) -> Any: ...


def memory_fork_tools(store: MemoryWriter, *, shell: bool = True) -> list[Tool]:
    """The tools a memory fork runs: the read tools, a read-only shell, and writes through the store."""

    def write(path: Path, content: str) -> None:
        try:
            store.write_text(path, content)
        except EngineError as exc:  # the store's refusal (secret, pinned/, MEMORY.md, outside a root) is the model's to fix
            raise ValueError(exc.message) from None

    return [*read_only_tools(), *([ReadOnlyShellTool()] if shell else []), WriteFileTool(write), EditTool(write)]


def declared_names(parent: ParentRequest) -> set[str]:
    return {str(d.get("function", {}).get("name")) for d in parent.declarations}


class MemoryForks:
    """Runs memory's forks on the workspace's current model, in ``workspace_root``.

    The prompt cache hits only when the fork's tools array is the parent's,
    byte for byte (``fork.py``). So the fork brings no read-only shell of its
    own when the chat declares none (the read tools cover what it needs), and
    ``write_file``/``edit`` are appended only when the chat does not declare
    them (plan mode, or a chat without edits): the one case that costs the
    cache from the tools block on, logged by ``run_fork``.
    """

    def __init__(self, store: MemoryWriter, model: ModelFactory, *, workspace_root: Path) -> None:
        self._store = store
        self._model = model
        self._workspace = workspace_root

    async def __call__(
        self,
        parent: ParentTurn,
        task: str,
        *,
        writable: Sequence[Path],
        team: Path | None,
        read_roots: Sequence[Path],
        max_turns: int,
        max_seconds: float,
        cancel: asyncio.Event | None,
        open_call_note: str,
        protected: Sequence[Path] = (),
    ) -> ForkReport:
        if not isinstance(parent, ParentRequest):
            raise TypeError("a memory fork needs the ParentRequest its turn captured")
        fork = await run_fork(
            await self._model(),
            parent,
            task,
            root=self._workspace,
            tools=memory_fork_tools(self._store, shell=SHELL in declared_names(parent)),
            permissions=Permissions((memory_rule(list(writable), team=team, workspace=self._workspace, protected=list(protected)),)),
            read_roots=list(read_roots),
            max_turns=max_turns,
            max_seconds=max_seconds,
            cancel=cancel,
            open_call_note=open_call_note,
        )
        used = any("functionCall" in p for c in fork.produced for p in c.get("parts", []))
        return ForkReport(status=fork.status, reason=fork.reason, files_written=fork.files_written, used_tools=used)
