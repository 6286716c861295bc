"""The seam features plug into a turn: a :class:`Feature` is a part the engine is handed, never named.

Each feature (``qwen_lsp/features/<name>``: memory, compaction, follow-ups,
skill review, edits) is one :class:`Feature` owning its glue, its tools, its
per-chat state (a :class:`~qwen_lsp.sessions.registry.Slot` on the chat),
its listeners and its shutdown. The engine runs every turn through the
features it was given, in their order, and calls each hook below; every
hook does nothing by default, so a feature overrides only what it uses:

- ``tools`` — tools it adds to the main chat, after the built-in read-only
  ones (the order is part of the prompt-cache prefix);
- ``prompt_block`` — text appended last to the system prompt (the memory
  index; only the tail of the cached prefix changes when it does); called
  on a worker thread, since it may read files;
- ``recall`` — started when a turn starts; it returns a :class:`TurnPrefetch`
  at once. Its ``initial`` texts (the source bounds its own wait) go right
  after the startup reminders of the turn's user message, as Qwen Code
  0.24.4 places recalled memory; texts that settle later are offered after
  the function responses of the next tool round (function responses must
  lead a tool-result message);
- ``reminders`` — texts sent after the recalled ones and not recorded (the
  plan-mode reminder); ``user_parts`` — texts right before the prompt, after
  the attachments, recorded (what the editor shows);
- ``managed_writes`` — where, outside the workspace, the chat may write (the
  memory folders), asked right before a turn's first tool call;
- ``before_request`` — before every model request of a turn, in feature
  order (compaction first: it may shrink the history);
- ``after_round`` — a model round finished, with the prompt size it reported;
- ``approver`` — who approves this turn's writes (the first feature that
  answers wins);
- ``after_turn`` — a turn got an answer (typed, or an accepted
  speculation), with a ``capture`` that copies the request it sent (system
  prompt and tools, byte for byte, for a forked run to reuse) only when
  called;
- ``turn_failed`` — the model request of a turn failed (what the feature
  put on it may not have reached the model);
- ``turn_starting`` / ``chat_deleted`` — the user typed in a chat / removed
  it (whatever the feature keeps for it that is not on the chat goes);
- ``file_changed`` — the user edited a file in the editor; ``document_opened`` /
  ``document_closed`` — the editor opened / closed one;
- ``history_compacted`` — a chat's history was compacted (what the feature told it may be gone);
- ``context_changes`` — an answered turn, before ``after_turn``: what the feature added to this turn's
  request that the previous turn's had not (chips under the answer; ``agent/picture.py``);
- ``preview`` — what the feature would add to a chat's next message, changing nothing (the
  context report counts it);
- ``handlers`` — its answers to the contract entries its :class:`~qwen_lsp.agent.services.FeatureModule`
  names (``qwen/*`` requests, notifications, commands), by method;
- ``settings_changed`` — new settings are in effect;
- ``start`` / ``drain`` — the workspace started watching / shuts down.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..context.attachments import Attachment
from ..errors import EngineError
from ..sessions.registry import ChatSession
from .events import EventSink, TurnEvent, TurnOutcome

if TYPE_CHECKING:
    from ..protocol import ChatResult, ContextChange
    from .approvals import Approve
    from .fork import ParentRequest
    from .tool import ManagedWrites, Tool

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


@dataclass
class Turn:
    """What one turn needs, carried whole from the request to the loop and the hooks."""

    session: ChatSession
    prompt: str
    emit: EventSink
    turn_id: str
    attachments: Sequence[Attachment] = ()
    so_far: TurnOutcome | None = None
    """A turn whose rounds are already in the history (an accepted speculation that stopped):
    no new user message; the loop goes on filling this outcome."""
    leave_out: frozenset[str] = frozenset()
    """Features (by name) whose part the user left out of this message only (the editor's context)."""
    recalls: list[TurnPrefetch] = field(default_factory=list)

    def status(self, note: str) -> None:
        """A line for the chat view while the turn runs (e.g. "compressed the history")."""
        self.emit(TurnEvent("status", text=note))

    async def initial_recalled(self) -> list[str]:
        """The features' recalled texts for the first request (each source bounds its own wait)."""
        return [text for prefetch in self.recalls for text in await prefetch.initial()]

    def recalled(self) -> list[str]:
        """Whatever the features' recalls have settled since last asked (never waits)."""
        return [text for prefetch in self.recalls for text in prefetch.take()]


@dataclass(frozen=True)
class TurnDone:
    """A turn that got an answer, as the after-turn hooks see it."""

    session: ChatSession
    outcome: TurnOutcome
    capture: Callable[[], ParentRequest]
    """Copies the request the turn sent; call it only to start a fork."""
    typed: bool = True
    """False for an accepted speculation (the user did not type this turn)."""


class Caller(Protocol):
    """What the adapter gives a feature's request handler besides its params."""

    def events(self, session_id: str, turn_id: str) -> AbstractContextManager[EventSink]:
        """A stream of a turn's events to the client (a handler that runs a turn)."""
        ...

    def path(self, uri: str) -> Path | None:
        """The file a URI names, resolved (None: not a file, or a path no file system accepts)."""
        ...

    def owns(self, path: Path) -> bool:
        """This folder is the one the adapter gives ``path`` to (the deepest folder holding it)."""
        ...


Handler = Callable[[Any, Caller], Awaitable[Any] | None]
"""A feature's answer to one entry of the contract, parsed params in: a coroutine giving the result model
for a request or a command; a plain call for a notification, applied as it arrives (before any later
request of the client is handled)."""


class NotHere(EngineError):
    """Raised by a handler of a request naming no folder: this folder does not hold what it names; the
    adapter asks the next folder, and answers with the last one's message if none holds it."""


class TurnRunner(Protocol):
    """What a feature that runs a turn of its own (an accepted suggestion) needs of the engine."""

    async def open_session(self, session_id: str | None) -> ChatSession: ...
    async def session_ready(self, session: ChatSession) -> None: ...
    async def run(self, turn: Turn) -> ChatResult: ...
    async def chat(self, prompt: str, *, session_id: str | None = None, emit: EventSink, turn_id: str | None = None) -> ChatResult: ...
    def after_turn(self, done: TurnDone) -> None: ...
    def capture(self, session: ChatSession) -> ParentRequest: ...


class Feature:
    """A part of every turn; see the module docstring for when each hook runs."""

    name = ""

    def tools(self) -> Sequence[Tool]:
        return ()

    def prompt_block(self) -> str:
        return ""

    def recall(self, session: ChatSession, prompt: str) -> TurnPrefetch | None:
        return None

    def reminders(self, turn: Turn) -> list[str]:
        """Reminders sent with this turn's message after the recalled texts, and not recorded
        (as Qwen Code 0.24.4's plan-mode reminder)."""
        return []

    def user_parts(self, turn: Turn) -> list[str]:
        """Texts placed right before the prompt in this turn's message, and recorded."""
        return []

    def managed_writes(self) -> ManagedWrites | None:
        """Where, outside the workspace, this turn's chat may write (the first feature that answers wins).

        Blocking: called on a worker thread right before the turn's first tool call runs, and not again in that turn.
        """
        return None

    async def before_request(self, turn: Turn) -> None:
        return None

    def after_round(self, session: ChatSession, prompt_tokens: int) -> None:
        return None

    def approver(self, turn: Turn) -> Approve | None:
        return None

    def after_turn(self, done: TurnDone) -> None:
        return None

    def turn_failed(self, session: ChatSession) -> None:
        return None

    async def turn_starting(self, session: ChatSession) -> None:
        return None

    async def chat_deleted(self, session_id: str) -> None:
        return None

    def file_changed(self, path: Path) -> None:
        return None

    def settings_changed(self) -> None:
        return None

    def document_opened(self, path: Path) -> None:
        return None

    def document_closed(self, path: Path) -> None:
        return None

    def history_compacted(self, session: ChatSession) -> None:
        return None

    def context_changes(self, turn: Turn) -> list[ContextChange]:
        return []

    def preview(self, session: ChatSession | None) -> list[str]:
        return []

    def handlers(self) -> Mapping[str, Handler]:
        return {}

    async def start(self) -> None:
        return None

    async def drain(self) -> None:
        return None
