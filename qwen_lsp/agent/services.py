"""What a feature is given when it is set up, and what its request handlers are given when called.

A feature package (``qwen_lsp/features/<name>``) exports one :class:`FeatureModule`;
the workspace calls its ``setup`` with the folder's :class:`Services` and gets a
:class:`~qwen_lsp.agent.hooks.Feature` back. The services are typed and read at
each use (settings reload, the model client is rebuilt), so a feature keeps the
services object rather than copies of what it held at set-up. The workspace is
the one implementation; tests may hand a feature any object of this shape.

The editor contract stays one table (``qwen_lsp/protocol.py``): a feature names
the requests, notifications and commands it answers by their entries there, and
the adapter (``qwen_lsp/server/features.py``) registers them, parses the params
once and routes each call to the feature of the right folder.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..compaction.compactor import Progress
from ..protocol import (
    Command,
    ContextStatus,
    MemoryChanged,
    Notification,
    Request,
    SkillProposed,
    SkillsChanged,
    SuggestionNotice,
)

from .hooks import Feature

if TYPE_CHECKING:
    from ..llm.client import ChatClient
    from ..llm.tokens import TokenCounter
    from ..sessions.registry import ChatSession, SessionRegistry
    from ..settings.config import Settings
    from ..skills import SkillManager
    from .accounting import RequestAccounting
    from .applier import Applier
    from .approvals import ApprovalMode, Asker
    from .fork import ParentRequest
    from .hooks import TurnRunner


@dataclass
class Listeners:
    """How the workspace tells its adapter about things that happen between requests."""

    context_status: Callable[[ContextStatus], None] = lambda _s: None
    skills_changed: Callable[[SkillsChanged], None] = lambda _c: None
    memory_changed: Callable[[MemoryChanged], None] = lambda _c: None
    skill_proposed: Callable[[SkillProposed], None] = lambda _p: None
    progress: Progress = lambda _title: lambda _message: None
    """Work-done progress: ``begin(title)`` returns ``end(message)``."""
    warning: Callable[[str], None] = lambda _message: None
    """Something the user should know once (e.g. edits are off because nobody can approve them)."""
    suggestion: Callable[[SuggestionNotice], None] | None = None
    """Follow-up suggestions (``features/followups``); None: nobody shows them, so none are made."""


class Services(Protocol):
    """One folder's cores and the workspace's own operations, as a feature may use them."""

    root: Path
    env: Mapping[str, str] | None
    """The environment the folder was opened with (None: the process's)."""
    listeners: Listeners
    counter: TokenCounter
    applier: Applier
    ask: Asker | None
    """Who approves a write (None: nobody can; writes are refused)."""
    sessions: SessionRegistry
    skills: SkillManager

    @property
    def settings(self) -> Settings:
        """The settings in effect now (read at each use: a reload applies from the next turn)."""
        ...

    @property
    def accounting(self) -> RequestAccounting: ...

    @property
    def runner(self) -> TurnRunner:
        """The engine, for a feature that runs a turn of its own (an accepted suggestion)."""
        ...

    async def model_client(self) -> ChatClient: ...

    async def bare_parent(self) -> ParentRequest:
        """The next request's system prompt and tools, with no history (a new chat's view)."""
        ...

    def switch_approval_mode(self, mode: ApprovalMode) -> None:
        """An approved plan leaves plan mode; the tools change from the next turn."""
        ...

    async def reload_skills(self) -> None: ...

    def history_compacted(self, session: ChatSession) -> None:
        """A chat's history was compacted: every feature hears it, the editor gets the new status."""
        ...

    def read_selection(self, path: Path, start: tuple[int, int], end: tuple[int, int]) -> str | None:
        """The text of a range of an open document as the editor holds it (None: not known)."""
        ...


@dataclass(frozen=True)
class FeatureModule:
    """A feature package's one export: its name, its set-up and the contract entries it answers."""

    name: str
    setup: Callable[[Services], Feature]
    requests: Sequence[Request[Any, Any]] = ()
    notifications: Sequence[Notification[Any]] = ()
    commands: Sequence[Command[Any, Any]] = ()
    doc: str = field(default="", compare=False)
    """One line for ``docs/architecture.md``'s feature table."""

    def methods(self) -> list[str]:
        return [*(r.method for r in self.requests), *(n.method for n in self.notifications), *(c.name for c in self.commands)]
