"""A chat's context made ready for a request: the blocking build, the features' prompt blocks, and a new
chat's opening standing for its first turn.

Preparing reads files and runs ``git``, so it happens in one hop to a worker
thread: the context build (workspace layers, git snapshot, prelude) and the
features' prompt blocks (the memory index). The usual editor sequence is
open → chat within a fraction of a second; what a new chat's opening prepared
stands for that first turn, so it starts its request without a second hop. A
chat opened long before its first message prepares anew.

Where the chat may write outside the workspace (the memory folders) is not
part of it: it is resolved on a worker thread when a turn's first tool call
is about to run (:meth:`Preparation.managed_writes`), so a turn that calls no
tool never pays for it and a symlink planted before that call does not pass.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from collections.abc import Sequence

from ..context import ContextAssembler, ContextError, SessionContext
from ..errors import EngineError
from ..sessions.registry import ChatSession, Slot
from .hooks import Feature
from .tool import ManagedWrites

OPENING_FRESH = 1.0
"""Seconds for which a new chat's preparation, made as the chat was opened, stands for its first turn."""


@dataclass
class Opening:
    """What a new chat's opening prepared for its first turn."""

    at: float
    """Loop time of the open."""
    failure: Exception | None


OPENING: Slot[Opening | None] = Slot("opening", lambda: None)


def as_turn_failure(exc: Exception) -> Exception:
    """A preparation's failure as the turn raises it: the context's in words a person can act on."""
    return EngineError(str(exc), kind="context") if isinstance(exc, ContextError) else exc


def take_opening(session: ChatSession) -> Opening | None:
    """The chat's opening, once, if it is at most :data:`OPENING_FRESH` seconds old."""
    opening = session.slots.pop(OPENING, None)
    if opening is not None and asyncio.get_running_loop().time() - opening.at > OPENING_FRESH:
        return None
    return opening


Prepared = str
"""The features' prompt blocks."""


class Preparation:
    def __init__(self, assembler: ContextAssembler, features: Sequence[Feature]) -> None:
        self._assembler = assembler
        self._features = features

    def blocking(self, context: SessionContext) -> Prepared:
        """Blocking: the context and the features' prompt blocks."""
        context.prepare()
        return "\n\n".join(block for f in self._features if (block := f.prompt_block()))

    async def managed_writes(self) -> ManagedWrites | None:
        """Where the chat may write outside the workspace, resolved now on a worker thread (the first feature
        that answers wins); asked again by every turn, before its first tool call."""
        return await asyncio.to_thread(lambda: next((m for f in self._features if (m := f.managed_writes()) is not None), None))

    def apply(self, context: SessionContext, blocks: str) -> None:
        context.replay_deferred()
        self._assembler.prompt_tail = blocks

    def opened(self, session: ChatSession, context: SessionContext, started: float, prepared: Prepared | Exception) -> None:
        """Keep what a new chat's opening prepared (or why it failed) for its first turn."""
        if isinstance(prepared, Exception):
            session.slots[OPENING] = Opening(started, prepared)
        else:
            self.apply(context, prepared)
            session.slots[OPENING] = Opening(started, None)

    def claimed(self, session: ChatSession) -> None:
        """A chat prepared ahead (``agent/new_chats.py``) is opened now: what it prepared stands for its first turn."""
        session.slots[OPENING] = Opening(asyncio.get_running_loop().time(), None)

    async def prepare(self, context: SessionContext) -> None:
        """A chat's preparation (for a turn, a report, a fork's parent) in one hop to a worker thread."""
        try:
            blocks = await asyncio.to_thread(self.blocking, context)
        except ContextError as exc:
            raise as_turn_failure(exc) from exc
        self.apply(context, blocks)

    async def session_ready(self, session: ChatSession) -> None:
        """Prepare the chat's context between turns; a fresh opening made it already."""
        opening = take_opening(session)
        if opening is None:
            await self.prepare(session.context)
        elif opening.failure is not None:
            raise as_turn_failure(opening.failure)

    async def for_turn(self, session: ChatSession) -> None:
        """The context prepared in one worker hop, or by a fresh opening (unless the workspace's rules were dropped
        since, and files opened meanwhile wait for them)."""
        opening = take_opening(session)
        if opening is not None and not session.context.stale():
            if opening.failure is not None:
                raise as_turn_failure(opening.failure)
            return
        await self.prepare(session.context)
