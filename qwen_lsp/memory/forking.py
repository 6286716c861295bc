"""What memory asks of a forked agent run, without importing the agent (docs/architecture.md).

Extraction and dream run a fork of the user's last turn that may write
memory files. The memory core says *what* to run — the task, which roots
are writable, which are readable, the budgets, the cancel signal — through
:class:`MemoryForkRunner`; the engine hands over the implementation
(``qwen_lsp.features.memory.fork.MemoryForks``), which owns the tools, the
permission rule and the agent loop. So arrows keep pointing one way:
engine → agent → memory.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from ..llm.content import Content

ForkStatus = Literal["completed", "cancelled", "failed"]

PATH_KEYS = ("file_path", "path", "target_file")
"""Where write tools name their target (Qwen Code's ``file_path``, and the aliases ``scheduleExtract`` checks)."""


class ParentTurn(Protocol):
    """The captured parent turn (the agent's ``ParentRequest``); memory reads only its history."""

    @property
    def history(self) -> Sequence[Content]: ...


@dataclass
class ForkReport:
    status: ForkStatus
    """``cancelled`` resolves, it does not raise: a caller that must not record a finished run checks it."""
    reason: str = ""
    files_written: list[str] = field(default_factory=list)
    """Absolute paths the fork's write tools wrote, in order, without repeats."""
    used_tools: bool = False
    """Whether the fork called any tool (extraction's cursor advances on activity, as ``runAutoMemoryExtract``)."""


class MemoryForkRunner(Protocol):
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
        """Run ``task`` as a fork of ``parent``: writes allowed only inside ``writable`` (team: ask → refused),
        never where ``protected`` really is, however a writable root is linked."""
        ...
