"""``qwen/chatEvent`` emission: gap-free ``seq`` and timer-free coalescing (docs/protocol.md).

A text (or thought) delta that arrives while the pipe is idle is written
at once — no added latency for a slow model. Writing marks the stream busy
until the event loop next gets control (``call_soon``); deltas arriving
before then (the HTTP reader drained several buffered chunks without
yielding, or the loop was blocked writing) are merged and go out together
when it does, so a fast model cannot flood the pipe. While the client is
not reading (``output.paused``, see ``server/stdio.py``) text merges the
same way until it has caught up, so a stalled client costs one growing
string per chat, not one message per chunk. Any other event kind
first flushes pending text, so order always holds. Everything runs on the
event-loop thread.

Used as a context manager around a turn: however the turn ends, pending
text is sent first, a failure becomes a final ``error`` event carrying the
same message as the error response, and nothing is sent after the block.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from types import TracebackType
from typing import Any

from pygls.exceptions import JsonRpcException

from ..agent.events import TurnEvent
from ..errors import EngineError
from ..protocol import CHAT_EVENT, ChatEvent, ChatEventKind, ContextChange, ToolInfo
from .app import internal_error_message
from .stdio import Output

_MERGEABLE = ("text", "thought")


class ChatEventStream:
    def __init__(self, notify: Callable[[str, dict[str, Any]], None], session_id: str, turn_id: str, output: Output | None = None) -> None:
        self._notify = notify
        self._output = output
        self._session_id = session_id
        self._turn_id = turn_id
        self._loop = asyncio.get_running_loop()
        self.seq = 0
        self._pending: list[str] = []
        self._pending_kind: ChatEventKind | None = None
        self._busy = False
        self.closed = False

    def __call__(self, event: TurnEvent) -> None:
        if self.closed:
            return
        if event.kind in _MERGEABLE and event.text:
            if not self._busy and not self._client_lagging():
                self._send(event.kind, event.text, None)
                return
            if self._pending_kind not in (None, event.kind):
                self.flush()
            self._pending_kind = event.kind
            self._pending.append(event.text)
            self._hold()
            return
        self.flush()
        self._send(event.kind, event.text, event.tool, event.changes)

    def _client_lagging(self) -> bool:
        return self._output is not None and self._output.paused

    def _hold(self) -> None:
        """Keep merging until the loop gets control back (and the client has caught up)."""
        if not self._busy:
            self._busy = True
            self._loop.call_soon(self._idle)

    def _idle_soon(self) -> None:
        """Not from inside the transport's own callback: on the next loop turn."""
        self._loop.call_soon(self._idle)

    def _idle(self) -> None:
        """The loop got control back: unless the client still lags, send what piled up meanwhile."""
        if self._client_lagging() and not self.closed:
            assert self._output is not None
            self._output.call_when_writable(self._idle_soon)
            return
        self._busy = False
        self.flush()

    def flush(self) -> None:
        if self._pending:
            kind, text = self._pending_kind or "text", "".join(self._pending)
            self._pending.clear()
            self._pending_kind = None
            self._send(kind, text, None)

    def __enter__(self) -> ChatEventStream:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if isinstance(exc, EngineError):
            self(TurnEvent("error", text=exc.message))
        elif isinstance(exc, Exception) and not isinstance(exc, JsonRpcException):
            self(TurnEvent("error", text=internal_error_message(exc)))
        self.close()

    def close(self) -> None:
        """Send what is pending; later events (e.g. a late callback) are dropped."""
        self.flush()
        self.closed = True

    def _send(self, kind: ChatEventKind, text: str | None, tool: dict[str, Any] | None, changes: list[ContextChange] | None = None) -> None:
        event = ChatEvent(
            session_id=self._session_id,
            turn_id=self._turn_id,
            seq=self.seq,
            kind=kind,
            text=text,
            tool=None if tool is None else ToolInfo.model_validate(tool),
            changes=changes,
        )
        self.seq += 1
        self._notify(CHAT_EVENT.method, event.wire())
        self._hold()
