"""The seams later cores plug into a turn, each a plain callable with a do-nothing default.

The engine runs every turn through one :class:`TurnHooks`; memory, compaction
and background review attach here instead of growing the engine:

- ``memory_block`` — the auto-memory block, appended last to the system
  prompt (only the tail of the cached prefix changes when it does); called
  on a worker thread, since it reads the index files;
- ``recall`` — started when a turn starts; it returns a :class:`TurnPrefetch`
  at once. Its ``initial`` texts (the source bounds its own wait) go right
  after the startup reminders of the turn's user message, as Qwen Code
  0.24.4 places recalled memory; texts that settle later are offered after
  the function responses of the next tool round (function responses must
  lead a tool-result message);
- ``before_request`` — runs before every model request of a turn, with the
  chat and its history: where microcompaction and compression will shrink
  the history before the window overflows;
- ``after_turn`` — runs after a turn that got an answer (typed, or an accepted
  speculative turn), with a ``capture`` that copies the request it sent
  (system prompt and tools, byte for byte, for a forked run to reuse) only
  when called: where memory extraction and dream get scheduled. (Skill
  review is wired by the engine beside it, so a test's own hooks never
  switch it off.)
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from .events import TurnOutcome

if TYPE_CHECKING:
    from ..sessions.registry import ChatSession
    from .fork import ParentRequest

log = logging.getLogger(__name__)


class TurnPrefetch(Protocol):
    """What a turn asks of work started beside it: texts for the first request, then later ones."""

    async def initial(self) -> list[str]:
        """Texts for the first request; the source decides how long (if at all) it waits."""
        ...

    def take(self) -> list[str]:
        """A zero-wait poll after a tool round: texts settled since, each handed over once."""
        ...

    def cancel(self) -> None: ...


class Prefetch:
    """Reminder texts computed in the background, handed over at most once, never awaited.

    ``take()`` is a zero-wait poll: the texts if the work has settled and not
    been taken yet, else ``[]``. A failure is logged and counts as nothing, so
    a broken recall never costs the user a turn.
    """

    def __init__(self, task: asyncio.Task[list[str]] | None = None) -> None:
        self._task = task
        self._taken = task is None

    def take(self) -> list[str]:
        if self._taken or self._task is None or not self._task.done():
            return []
        self._taken = True
        if self._task.cancelled():
            return []
        exc = self._task.exception()
        if exc is not None:
            log.warning("recall failed; the turn goes on without it: %s", exc)
            return []
        return self._task.result()

    async def initial(self) -> list[str]:
        """No wait: whatever has settled by the time the first request is assembled."""
        return self.take()

    def cancel(self) -> None:
        """The turn is over: work still running is dropped (its result would be discarded anyway)."""
        self._taken = True
        if self._task is not None and not self._task.done():
            self._task.cancel()


def _no_recall(_session: ChatSession, _prompt: str) -> TurnPrefetch:
    return Prefetch()


async def _nothing_before(_session: ChatSession) -> None:
    return None


@dataclass
class TurnHooks:
    memory_block: Callable[[], str] = lambda: ""
    recall: Callable[[ChatSession, str], TurnPrefetch] = _no_recall
    before_request: Callable[[ChatSession], Awaitable[None]] = _nothing_before
    after_turn: Callable[[ChatSession, TurnOutcome, Callable[[], ParentRequest]], None] = lambda _s, _o, _c: None
