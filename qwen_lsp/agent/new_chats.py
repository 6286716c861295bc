"""New chats: each made in one worker hop, and (in a language server) the next one made ready ahead.

A new chat needs its session, its git snapshot (``git`` processes), the
folder's prelude and the features' prompt blocks (the memory index): file
reads and processes, so a worker thread, and on the way to the chat's first
request that hop was the largest cost left. Qwen Code 0.24.4 does this work
when its session starts, before the first prompt is typed (the CLI takes its
git status and folder structure at start-up); the editor's equivalent of that
moment is "the previous answer arrived". So after each answered turn the
server makes the next new chat in the background (a *spare*), and the next
``qwen/chat`` without a chat id takes it and sends its first request without
a thread hop.

A spare stands for a person starting a chat only while it could have been
made at that moment: it is used within :data:`SPARE_FRESH` seconds of being
made, and not when something it captured may have changed since: an edit in
the editor, a settings reload, a memory write or a round of any chat that
calls tools (they may change files) drop it (:meth:`NewChats.drop`); a commit,
checkout, stage or stash made anywhere (a terminal) rewrites one of git's
state files, whose ``lstat`` is compared as the spare is taken
(``git_as_data.state_mark``); a change to a context file makes the
workspace's context stale, which every chat checks before its first request
anyway (``Preparation.for_turn``). What git status shows of files edited
outside the editor after the answer is not seen — as in Qwen Code, whose
snapshot does not follow edits made between ``/clear`` and the first prompt.
Only one spare exists at a time and one is made per answered turn at most, so a
person typing never makes the server run ``git`` per keystroke.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..context import ContextAssembler, SessionContext
from ..context.git_as_data import StateMark, state_files, state_mark
from ..context.session_context import SET_UP_SNAPSHOT_FRESH
from ..sessions.registry import ChatSession, SessionRegistry
from .preparation import Prepared, Preparation

log = logging.getLogger(__name__)

SPARE_FRESH = SET_UP_SNAPSHOT_FRESH
"""Seconds for which a spare chat stands for a new one: as long as the folder's set-up snapshot stands for its first chat."""


@dataclass(frozen=True)
class _Spare:
    session: ChatSession
    started: float
    """Clock time its making began: its git snapshot and folder listing are from then on."""
    git_files: tuple[Path, ...]
    git_mark: StateMark
    """The repository's state files as they were before its git snapshot was taken."""


class NewChats:
    def __init__(
        self,
        assembler: ContextAssembler,
        sessions: SessionRegistry,
        preparation: Preparation,
        *,
        spare: bool,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """``spare``: keep one chat made ahead (a language server; a one-shot CLI run would only wait for it)."""
        self._assembler = assembler
        self._sessions = sessions
        self._preparation = preparation
        self._spare_wanted = spare
        self._clock = clock
        self._spare: _Spare | None = None
        self._generation = 0
        self._making: asyncio.Task[None] | None = None
        self._making_for = 0
        """The generation the chat being made was started in: after a drop it will not be kept."""

    async def open(self) -> ChatSession:
        """A new chat, registered: the spare if one stands, else one made now."""
        if self._making is not None and self._making_for == self._generation:
            await self.made()  # one being made, still wanted, is nearly ready: waiting for it beats making a second
        spare = self._take()
        if spare is not None:
            session = self._sessions.adopt(spare)
            self._preparation.claimed(session)
            return session
        started = asyncio.get_running_loop().time()
        created, prepared = await self._made()
        session = self._sessions.adopt(created)
        if session is created:  # not a chat another caller registered first
            self._preparation.opened(session, created.context, started, prepared)
        return session

    async def _made(self) -> tuple[ChatSession, Prepared | Exception]:
        """A chat and its preparation in one hop; the git snapshot starts first, so its processes run meanwhile."""
        context = SessionContext(self._assembler)
        context.start_git_snapshot()

        def create() -> tuple[ChatSession, Prepared | Exception]:
            created = self._sessions.new(context)
            try:
                return created, self._preparation.blocking(context)
            except Exception as exc:  # a failure is the first turn's to report
                return created, exc

        return await asyncio.to_thread(create)

    async def made(self) -> None:
        """Until a chat being made ahead is made, or given up (a caller cancelled meanwhile does not stop it)."""
        if self._making is not None:
            await asyncio.wait([self._making])

    def refill(self) -> None:
        """After an answered turn: make the next new chat in the background, unless one stands or is being made."""
        if self._spare_wanted and self._spare is None and self._making is None:
            self._making_for = self._generation
            self._making = asyncio.get_running_loop().create_task(self._make(self._generation, self._clock()))

    async def _make(self, generation: int, started: float) -> None:
        try:
            files, mark = await asyncio.to_thread(self._git_state)  # before its snapshot: a change meanwhile shows
            created, prepared = await self._made()
        except Exception:
            log.exception("a chat could not be prepared ahead; the next new chat prepares its own")
            return
        finally:
            self._making = None
        if isinstance(prepared, Exception) or generation != self._generation:
            return  # failed (the next chat reports it itself), or something changed while it was made
        self._preparation.apply(created.context, prepared)
        self._spare = _Spare(created, started, files, mark)

    def _git_state(self) -> tuple[tuple[Path, ...], StateMark]:
        files = state_files(self._assembler.cwd)
        return files, state_mark(files)

    def drop(self) -> None:
        """Something a spare captured may have changed: the next new chat prepares its own."""
        self._spare = None
        self._generation += 1

    def _take(self) -> ChatSession | None:
        spare, self._spare = self._spare, None
        if spare is None or self._clock() - spare.started > SPARE_FRESH or state_mark(spare.git_files) != spare.git_mark:
            return None
        return spare.session

    async def close(self) -> None:
        """No spare any more; one being made is waited for (its thread cannot be stopped) and discarded."""
        self.drop()
        self._spare_wanted = False
        await self.made()
