"""The one entry point of auto memory: what the engine wires and the adapters call.

Everything memory does goes through a :class:`MemoryManager` per workspace:
the system prompt's memory block, recall for a turn, the editor's list /
remember / forget, extraction after a turn and dream now and then. It owns
the :class:`~.store.MemoryStore` (all disk access) and the background tasks,
and reports changes and progress through plain callables, so it knows
nothing of LSP. Model access comes in through :class:`ModelAccess`, handed
over by the engine (docs/architecture.md: cores never import ``agent/``).

Disk work runs on worker threads; the methods here are coroutines so an
adapter can await them on the event loop. Settings are read through a
callable on every use, so switching ``memory.*`` applies without a restart.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import Protocol

from ..background import BackgroundTasks
from ..settings.config import MemorySettings
from ..protocol import (
    ForgetCandidate,
    ForgetCandidatesResult,
    DreamResult as DreamReport,
    MemoryChanged,
    MemoryForgetResult,
    MemoryItem,
    MemoryListResult,
    MemoryRememberResult,
    RecallItem,
    RecallResultWire,
)
from ..errors import EngineError
from .age import memory_age
from .errors import TeamMemorySecurityError
from .model import SCOPES, MemoryDoc, Scope, Topic
from .paths import is_within
from .prompt_block import build_memory_block
from .scan import scannable
from .dream import Dream, DreamResult
from .extract import Extractor, ExtractResult
from .forking import MemoryForkRunner, ParentTurn
from .delivery import TurnRecall
from .recall import RecallResult, SideQuery, recall
from .store import MemoryStore

log = logging.getLogger(__name__)


class ModelAccess(Protocol):
    """What memory needs of the model, provided by the engine (None: no model configured)."""

    async def side_query(self) -> SideQuery | None: ...

    def fork_runner(self, store: MemoryStore) -> MemoryForkRunner:
        """Forked runs of a parent turn whose writes go through ``store``."""
        ...

    async def bare_parent(self) -> ParentTurn:
        """A parent turn with no history (the current system prompt and tools), for a dream the user asked for."""
        ...


class MemoryManager:
    def __init__(
        self,
        project_root: Path,
        *,
        settings: Callable[[], MemorySettings],
        model: ModelAccess,
        on_change: Callable[[MemoryChanged], None] = lambda _c: None,
        progress: Callable[[str], Callable[[str], None]] = lambda _t: lambda _m: None,
        home: Path | None = None,
        env: Mapping[str, str] | None = None,
        clock: Callable[[], float] = time.time,
        trusted: Callable[[], bool] = lambda: True,
    ) -> None:
        self.store = MemoryStore(project_root, home=home, env=env)
        self._trusted = trusted
        self._env: Mapping[str, str] = os.environ if env is None else env
        self._settings = settings
        self._model = model
        self._on_change = on_change
        self._progress = progress
        self._clock = clock
        self._background = BackgroundTasks()
        runner = model.fork_runner(self.store)
        self._extractor = Extractor(self.store, runner, workspace_root=Path(project_root))
        self._dream = Dream(self.store, runner, workspace_root=Path(project_root), enabled=lambda: self._settings().auto_dream)

    @property
    def enabled(self) -> bool:
        return self._settings().enabled

    # ----------------------------------------------------------------- the system prompt
    def prompt_block(self) -> str:
        """The auto-memory block of the system prompt ('' when memory is off). Blocking: reads the indexes."""
        if not self.enabled:
            return ""
        roots: dict[Scope, Path | None] = {"user": self.store.root("user"), "project": self.store.root("project"), "team": None}
        indexes: dict[Scope, str | None] = {"user": self.store.index_text("user"), "project": self.store.index_text("project"), "team": None}
        if self.team_in_use():
            try:
                indexes["team"] = self.store.index_text("team")
                roots["team"] = self.store.root("team")
            except TeamMemorySecurityError as exc:
                log.warning("team memory left out of the prompt: %s", exc.message)
        return build_memory_block(roots, indexes)

    def team_in_use(self) -> bool:
        """Team memory is opt-in, as Qwen Code 0.24.4's ``Config.getTeamMemoryEnabled``: the
        ``memory.enableTeamMemory`` setting, overridden by ``QWEN_CODE_MEMORY_TEAM`` (``1`` on, ``0`` off),
        and only in a trusted folder — a cloned repository's committed ``.qwen/team-memory`` is text
        anyone could have written, so it reaches the prompt only once the user vouches for the folder."""
        override = self._env.get("QWEN_CODE_MEMORY_TEAM")
        wanted = override == "1" if override in ("0", "1") else self._settings().enable_team_memory
        return wanted and self._trusted()

    def rebuild_indexes(self) -> None:
        """At startup (blocking): an index one write behind (a crash between a file's rename and
        its index rebuild) is brought in line with the files on disk; nothing is written if it already is.
        Team memory is left alone: its ``MEMORY.md`` is a committed file of the repository, perhaps
        written by hand, and opening a project must not rewrite it (only a team write rebuilds it)."""
        for scope in SCOPES:
            if scope == "team":
                continue
            try:
                self.store.rebuild_index(scope)
            except (OSError, EngineError) as exc:
                log.warning("%s memory index not rebuilt: %s", scope, exc)

    def chat_write_roots(self) -> tuple[Path, ...]:
        """The memory folders the main chat may write into, resolved: Qwen Code 0.24.4's managed memory
        roots (``isManagedMemoryPath``: project, user, and team when in use); none when memory is off."""
        if not self.enabled:
            return ()
        scopes: list[Scope] = ["project", "user", *(["team"] if self.team_in_use() else [])]  # type: ignore[list-item]
        return tuple(root for scope in scopes if (root := self._contained_root(scope)) is not None)

    def _contained_root(self, scope: Scope) -> Path | None:
        """The scope's root resolved, unless a symlink leads it out of where it belongs: the repository for
        team memory and ``QWEN_CODE_MEMORY_LOCAL`` project memory (a cloned repository could plant
        ``.qwen/team-memory`` → ``~/.ssh``), the memory base otherwise. The chat reads and writes below it."""
        paths = self.store.paths
        root = self.store.root(scope)
        in_repo = scope == "team" or is_within(paths.project_root, root)
        anchor = Path(os.path.realpath(paths.repo_root if scope == "team" else paths.project_root if in_repo else paths.base))
        real = Path(os.path.realpath(root))
        if not real.is_relative_to(anchor):
            log.warning("%s memory left out of the chat's reach: %s leads outside %s", scope, root, anchor)
            return None
        return real

    async def write_from_chat(self, path: Path, content: str) -> None:
        """A memory file the chat writes with ``write_file``/``edit``: through the store (lock, team secret guard,
        ``MEMORY.md`` rebuild), then announced. ``path`` is resolved; it is mapped back below its scope's root
        as the store names it. Raises ``ValueError`` with the store's refusal (the model's to fix)."""
        target = self._lexical(path)
        try:
            await asyncio.to_thread(self.store.write_text, target, content)
        except EngineError as exc:
            raise ValueError(exc.message) from None
        scope = self.store.scope_of(target)
        if scope is not None:
            self.changed(scope, [target])

    def _lexical(self, path: Path) -> Path:
        for scope in SCOPES:
            root = self.store.root(scope)
            real = Path(os.path.realpath(root))
            if path.is_relative_to(real):
                return root / path.relative_to(real)
        return path

    # ----------------------------------------------------------------- recall
    def start_recall(self, surfaced: set[Path], prompt: str, active_tools: Collection[str] = ()) -> TurnRecall | None:
        """Start recall for a turn; the caller takes its texts when :class:`~.delivery.TurnRecall` delivers them.

        ``surfaced`` is the chat's own set of memories already recalled (kept on the chat), so
        each is offered once per chat; the recall adds to it.
        """
        if not self.enabled or not prompt.strip():
            return None

        def start(on_fast: Callable[[RecallResult], None]) -> Awaitable[RecallResult]:
            return self._recall(prompt, use_model=True, exclude=set(surfaced), active_tools=active_tools, on_fast_result=on_fast)

        return TurnRecall(start, surfaced=surfaced, clock=self._clock)

    async def _recall(
        self,
        query: str,
        *,
        use_model: bool,
        exclude: Collection[Path] = (),
        active_tools: Collection[str] = (),
        on_fast_result: Callable[[RecallResult], None] | None = None,
    ) -> RecallResult:
        docs = await asyncio.to_thread(self._recall_docs, exclude) if self._any_memory_folder() else []
        select = await self._model.side_query() if use_model else None
        return await recall(query, docs, select=select, now=self._clock(), active_tools=active_tools, on_fast_result=on_fast_result)

    def _any_memory_folder(self) -> bool:
        """Whether the project or user memory folder is one the scan would look in (an ``lstat`` each, fine on
        the event loop): without either a turn's recall needs no worker thread."""
        return any(scannable(self.store.root(scope)) for scope in ("project", "user"))

    def _recall_docs(self, exclude: Collection[Path]) -> list[MemoryDoc]:
        """Project first, then user, so on a full tie project shadows user; every memory, not the 200 newest
        (Qwen Code 0.24.4's recall scans uncapped)."""
        try:
            user = self.store.scan("user", everything=True)
        except OSError as exc:
            log.warning("user memory could not be read; recalling from the project only: %s", exc)
            user = []
        return [d for d in [*self.store.scan("project", everything=True), *user] if d.path not in exclude]

    async def recall_report(self, query: str, *, use_model: bool = True) -> RecallResultWire:
        """What recall would inject for ``query`` (``qwen-lsp memory recall``)."""
        result = await self._recall(query, use_model=use_model)
        return RecallResultWire(
            strategy=result.strategy,
            memories=[RecallItem(path=str(d.path), scope=d.scope, type=d.type, name=d.title) for d in result.docs],
            text=result.text,
        )

    # ----------------------------------------------------------------- the editor's operations
    async def list(self, scope: Scope | None = None) -> MemoryListResult:
        docs = await asyncio.to_thread(self.store.scan, scope) if scope else await asyncio.to_thread(self.store.scan_all)
        now = self._clock()
        return MemoryListResult(memories=[self._item(d, now) for d in docs])

    @staticmethod
    def _item(doc: MemoryDoc, now: float) -> MemoryItem:
        return MemoryItem(path=str(doc.path), scope=doc.scope, type=doc.type, name=doc.title, description=doc.description, age=memory_age(doc.mtime, now))

    async def remember(self, text: str, *, type: Topic = "feedback", scope: Scope = "project", name: str | None = None) -> MemoryRememberResult:
        """Save ``text`` as one memory; no model needed (name and description come from the text)."""
        doc = await asyncio.to_thread(self.store.remember, text=text, type=type, scope=scope, name=name)
        self.changed(doc.scope, [doc.path])
        return MemoryRememberResult(path=str(doc.path), scope=doc.scope, type=doc.type, name=doc.title, description=doc.description)

    async def forget_candidates(self, query: str) -> ForgetCandidatesResult:
        """Step one of forget: what matches ``query``; nothing is removed until :meth:`forget`."""
        from .forget_select import select_forget_candidates  # only `memory forget` needs it, not a chat's start

        docs = await asyncio.to_thread(self.store.scan_all)
        select = await self._model.side_query()
        found = await select_forget_candidates(query, docs, select=select)
        return ForgetCandidatesResult(candidates=[ForgetCandidate(path=str(c.path), name=c.name, description=c.description, reason=c.reason) for c in found])

    async def forget(self, paths: Sequence[Path]) -> MemoryForgetResult:
        """Step two: remove the files the user confirmed (paths outside every memory root are refused)."""
        removed = await asyncio.to_thread(self.store.remove, paths)
        by_scope: dict[Scope, list[Path]] = {}
        for path in removed:
            scope = self.store.scope_of(path)
            if scope is not None:
                by_scope.setdefault(scope, []).append(path)
        for scope, scoped in by_scope.items():
            self.changed(scope, scoped)
        return MemoryForgetResult(removed=[str(p) for p in removed])

    def changed(self, scope: Scope, paths: Sequence[Path]) -> None:
        self._on_change(MemoryChanged(scope=scope, paths=[str(p) for p in paths]))

    # ----------------------------------------------------------------- after a turn
    def after_turn(self, session_id: str, capture: Callable[[], ParentTurn]) -> None:
        """Schedule extraction and, when its gates allow, a dream; both run in the background.

        ``capture`` copies the turn (its whole history) for the forks: called only
        when one of them is on, so a turn with background memory off pays nothing.
        """
        settings = self._settings()
        if not settings.enabled or not (settings.auto_extract or settings.auto_dream):
            return
        parent = capture()
        if settings.auto_extract:
            self._background.spawn(self._extract(session_id, parent))
        if settings.auto_dream:
            self._background.spawn(self._dream_run(session_id, parent, force=False))

    async def _extract(self, session_id: str, parent: ParentTurn) -> ExtractResult:
        future = self._extractor.schedule(session_id, parent)
        end = None if future.done() else self._progress("Qwen: saving memories from this turn")
        try:
            result = await future
        finally:
            if end is not None:
                end("done")
        if result.status == "failed":
            log.warning("memory extraction failed: %s", result.error)
        self._announce(result.files_written)
        return result

    async def dream_now(self) -> DreamReport:
        """A dream the user asked for (``qwen-lsp memory dream``): the schedule's gates do not apply."""
        result = await self._dream_run("manual", await self._model.bare_parent(), force=True)
        return DreamReport(status=result.status, reason=result.skipped_reason or result.error, touched=[f"{t}.md" for t in result.touched_topics])

    async def _dream_run(self, session_id: str, parent: ParentTurn, *, force: bool) -> DreamResult:
        ends: list[Callable[[str], None]] = []
        try:
            result = await self._dream.maybe_run(session_id, parent, force=force, started=lambda: ends.append(self._progress("Qwen: consolidating memories")))
        finally:
            for end in ends:
                end("done")
        if result.status == "failed":
            log.warning("memory dream failed: %s", result.error)
        self._announce(result.files_written)
        return result

    def _announce(self, written: Sequence[str]) -> None:
        by_scope: dict[Scope, list[Path]] = {}
        for raw in written:
            path = Path(raw)
            scope = self.store.scope_of(path)
            if scope is not None:
                by_scope.setdefault(scope, []).append(path)
        for scope, paths in by_scope.items():
            self.changed(scope, paths)

    # ----------------------------------------------------------------- lifecycle
    async def drain(self) -> None:
        """Shutdown: stop extraction and dream (a cancelled run records nothing), then wait for them.

        Writes are atomic, so stopping mid-run leaves whole files and an index
        the next start brings in line (:meth:`rebuild_indexes`).
        """
        self._extractor.cancel()
        self._dream.cancel()
        await self._background.wait()
        await self._extractor.drain()
