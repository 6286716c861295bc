"""Memory as a feature: the glue between the turn's seams and the memory core.

The memory core never imports ``agent/`` (arrows point one way), so this
module turns a :class:`~qwen_lsp.memory.manager.MemoryManager` into a
:class:`~qwen_lsp.agent.hooks.Feature`: the ``save_memory`` tool, the
memory index at the end of the system prompt, recall at the start of a
turn (each chat's already-recalled files kept on the chat; the first request
waits for it within recall's own bound), the memory folders the chat may write
into (through the store), extraction and
dream after it, and the manager's model access (side queries and forked
runs on the workspace's client).
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path

from ...agent.fork import ParentRequest
from ...agent.hooks import Feature, Turn, TurnDone, TurnPrefetch
from ...agent.picture import tagged
from ...agent.side_query import SideQuery
from ...agent.tool import ManagedWrites, Tool
from .save_memory import SaveMemoryTool
from ...background import BackgroundTasks
from ...errors import EngineError
from ...llm.client import ChatClient
from ...llm.content import Content
from ...memory.manager import MemoryManager
from ...memory.store import MemoryStore
from ...agent.hooks import Caller, Handler
from ...protocol import (
    ContextChange,
    MEMORY_FORGET,
    MEMORY_FORGET_CANDIDATES,
    MEMORY_LIST,
    MEMORY_REMEMBER,
    REMEMBER_SELECTION,
    ForgetCandidatesParams,
    ForgetCandidatesResult,
    ForgetParams,
    MemoryChanged,
    MemoryForgetResult,
    MemoryListParams,
    MemoryListResult,
    MemoryRememberResult,
    RememberParams,
    SelectionArgs,
)
from ...sessions.registry import ChatSession, Slot
from ...settings.config import Settings
from .fork import MemoryForks
from .team_sync import FAILURES, describe, sync_enabled, sync_team_memory

log = logging.getLogger(__name__)

RECENT_TOOL_CONTENTS = 8
"""How far back "recently used tools" (the recall's active-tool filter, as Qwen Code's relevanceSelector) looks."""

SURFACED: Slot[set[Path]] = Slot("memory.surfaced", set)
SURFACED_BEFORE: Slot[set[Path]] = Slot("memory.surfaced_before_turn", set)
"""``SURFACED`` as the chat's current turn found it (what the turn recalled is the difference)."""
"""Memory files already recalled into a chat (not offered twice, as Qwen Code's recall)."""


def recent_tools(history: Sequence[Content]) -> list[str]:
    names: list[str] = []
    for content in history[-RECENT_TOOL_CONTENTS:]:
        for part in content.get("parts") or []:
            call = part.get("functionCall")
            if call and call.get("name") and call["name"] not in names:
                names.append(call["name"])
    return names


class MemoryFeature(Feature):
    name = "memory"

    def __init__(
        self,
        root: Path,
        *,
        settings: Callable[[], Settings],
        model: Callable[[], Awaitable[ChatClient]],
        bare_parent: Callable[[], Awaitable[ParentRequest]],
        on_change: Callable[[MemoryChanged], None],
        progress: Callable[[str], Callable[[str], None]],
        env: Mapping[str, str] | None = None,
        warning: Callable[[str], None] = lambda _message: None,
    ) -> None:
        self._env: Mapping[str, str] = {**os.environ, **env} if env is not None else os.environ
        self._settings = settings
        self._progress = progress
        self._warning = warning
        self.manager = MemoryManager(
            root,
            settings=lambda: settings().memory,
            model=ModelAccess(root, model, bare_parent),
            on_change=on_change,
            progress=progress,
            env={**os.environ, **env} if env is not None else None,
            trusted=lambda: settings().folder_trust,
        )
        memory = self.manager
        self._save = SaveMemoryTool(
            memory.store,
            saved=lambda scope, path: memory.changed(scope, [path]),
            enabled=lambda: memory.enabled,
            plan_mode=lambda: settings().tools.approval_mode == "plan",
        )
        self._background = BackgroundTasks()

    def tools(self) -> Sequence[Tool]:
        return (self._save,)

    def prompt_block(self) -> str:
        return self.manager.prompt_block()

    def recall(self, session: ChatSession, prompt: str) -> TurnPrefetch | None:
        surfaced = session.slot(SURFACED)
        before = session.slot(SURFACED_BEFORE)
        before.clear()
        before.update(surfaced)
        return tagged(self.manager.start_recall(surfaced, prompt, recent_tools(session.history)), session, "memory")

    def context_changes(self, turn: Turn) -> list[ContextChange]:
        """The memories this turn's requests carried (recall marks a memory surfaced when it delivers it)."""
        session = turn.session
        before: set[Path] = session.slot(SURFACED_BEFORE)
        recalled = sorted(session.slot(SURFACED) - before)
        if not recalled:
            return []
        label = f"{len(recalled)} {'memory' if len(recalled) == 1 else 'memories'} recalled"
        return [ContextChange(kind="memory", label=label, sources=[str(p) for p in recalled])]

    def managed_writes(self) -> ManagedWrites | None:
        """The memory folders, where the chat writes with ``write_file``/``edit`` through the store (as 0.24.4);
        resolved again every turn, so a symlink planted between turns does not pass."""
        roots = self.manager.chat_write_roots()
        return ManagedWrites(roots, self.manager.write_from_chat) if roots else None

    def after_turn(self, done: TurnDone) -> None:
        self.manager.after_turn(done.session.id, done.capture)

    async def start(self) -> None:
        """Bring the indexes in line with the files (a run stopped mid-write leaves them behind); sync team memory."""
        self._background.spawn(asyncio.to_thread(self.manager.rebuild_indexes))
        if self.manager.team_in_use() and sync_enabled(self._settings().memory.enable_team_memory_sync, self._env):
            self._background.spawn(self._sync_team())

    async def _sync_team(self) -> None:
        """``team_sync.py``, in the background with progress; a failure is told once (this runs once per start)."""
        end = self._progress("Qwen: syncing team memory")
        result = await asyncio.to_thread(sync_team_memory, self.manager.store)
        message = describe(result)
        end(message)
        log.info("%s", message)
        if result.skipped in FAILURES:
            self._warning(message)
        if result.pulled or result.committed:
            self.manager.changed("team", [self.manager.store.root("team")])

    async def drain(self) -> None:
        await self.manager.drain()
        await self._background.wait()

    def handlers(self) -> Mapping[str, Handler]:
        return {
            MEMORY_LIST.method: self._list,
            MEMORY_REMEMBER.method: self._remember,
            MEMORY_FORGET_CANDIDATES.method: self._forget_candidates,
            MEMORY_FORGET.method: self._forget,
            REMEMBER_SELECTION.name: self._remember_selection,
        }

    async def _list(self, p: MemoryListParams, _call: Caller) -> MemoryListResult:
        return await self.manager.list(p.scope)

    async def _remember(self, p: RememberParams, _call: Caller) -> MemoryRememberResult:
        return await self.manager.remember(p.text, type=p.type or "feedback", scope=p.scope or "project", name=p.name)

    async def _forget_candidates(self, p: ForgetCandidatesParams, _call: Caller) -> ForgetCandidatesResult:
        return await self.manager.forget_candidates(p.query)

    async def _forget(self, p: ForgetParams, _call: Caller) -> MemoryForgetResult:
        return await self.manager.forget([Path(x) for x in p.paths])

    async def _remember_selection(self, sel: SelectionArgs, _call: Caller) -> MemoryRememberResult:
        """"Remember this convention": a project ``feedback`` memory (``user`` when the client asks); no model needed.

        The user's words when the client sent them (name and description derive from those), else the selection.
        """
        words = (sel.convention or "").strip()
        return await self.manager.remember(words or sel.text, type="feedback", scope=sel.scope or "project")


class ModelAccess:
    """Side queries and forked runs on the workspace's current model client (None when none is configured)."""

    def __init__(self, root: Path, model: Callable[[], Awaitable[ChatClient]], bare_parent: Callable[[], Awaitable[ParentRequest]]) -> None:
        self._root = root
        self._model = model
        self._bare_parent = bare_parent

    async def bare_parent(self) -> ParentRequest:
        """The next request's system prompt and tools, with no history (a new chat's view)."""
        return await self._bare_parent()

    async def side_query(self) -> SideQuery | None:
        """Temperature 0, as Qwen Code's memory selectors ask."""
        try:
            client = await self._model()
        except EngineError as exc:
            log.debug("no model for side queries (%s): heuristics only", exc.message)
            return None
        return SideQuery(client, temperature=0.0)

    def fork_runner(self, store: MemoryStore) -> MemoryForks:
        return MemoryForks(store, self._model, workspace_root=self._root)
