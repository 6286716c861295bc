"""The seams later cores plug into a turn, each a plain callable with a do-nothing default.

The engine runs every turn through one :class:`TurnHooks`; memory, compaction
and background review attach here instead of growing the engine:

- ``memory_block`` — the auto-memory index, appended last to the system
  prompt (only the tail of the cached prefix changes when it does);
- ``recall`` — ``<system-reminder>`` texts for this prompt (recalled
  memories), placed after the skills/environment/rules reminders;
- ``before_request`` — runs before every model request of a turn, with the
  chat and its history: where microcompaction and compression will shrink
  the history before the window overflows;
- ``after_turn`` — runs after a turn that got an answer: where memory
  extraction, dream and skill review get scheduled as background work.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .events import TurnOutcome

if TYPE_CHECKING:
    from ..sessions.registry import ChatSession


async def _no_recall(_session: ChatSession, _prompt: str) -> list[str]:
    return []


async def _nothing_before(_session: ChatSession) -> None:
    return None


@dataclass
class TurnHooks:
    memory_block: Callable[[], str] = lambda: ""
    recall: Callable[[ChatSession, str], Awaitable[list[str]]] = _no_recall
    before_request: Callable[[ChatSession], Awaitable[None]] = _nothing_before
    after_turn: Callable[[ChatSession, TurnOutcome], None] = lambda _s, _o: None
