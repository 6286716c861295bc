"""The suggestions a workspace has shown, and where each one's speculation stands.

One suggestion per chat is live at a time: a new one replaces the last
(which must then be aborted). Its status moves

    suggested ─► running ─► ready      (the speculation finished; accept applies it)
                        ├─► stopped    (it reached a call nobody may approve)
                        └─► failed     (the model or a limit ended it)

(accept continues a stopped, failed or still running one from its last
complete round, or runs the suggestion as a turn when it has none)

and a suggestion is forgotten when it is accepted, dismissed or aborted
(``take``). An id that is not (or no longer) known is a clear error for the
caller: :class:`UnknownSuggestion`.
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from .overlay import Overlay

Status = Literal["suggested", "running", "ready", "stopped", "failed"]


class UnknownSuggestion(LookupError):
    def __init__(self, suggestion_id: str) -> None:
        super().__init__(f"No suggestion {suggestion_id!r} is pending: it was accepted, dismissed, replaced by a newer one, or never existed.")


@dataclass
class Suggestion:
    id: str
    session_id: str
    text: str
    history_length: int
    """How long the chat's history was when the suggestion was made: accept applies a speculation only onto that history."""
    status: Status = "suggested"
    overlay: Overlay | None = None
    cancel: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[Any] | None = None
    run: Any = None
    """The speculation's result (``agent.speculation.SpeculationRun``) once it ended."""
    stopped_at: str = ""


class Suggestions:
    def __init__(self) -> None:
        self._by_id: dict[str, Suggestion] = {}

    def add(self, session_id: str, text: str, history_length: int) -> tuple[Suggestion, list[Suggestion]]:
        """A new suggestion for the chat, and the ones it replaces (the caller aborts them)."""
        replaced = self.take_session(session_id)
        made = Suggestion(id=str(uuid.uuid4()), session_id=session_id, text=text, history_length=history_length)
        self._by_id[made.id] = made
        return made, replaced

    def get(self, suggestion_id: str) -> Suggestion:
        found = self._by_id.get(suggestion_id)
        if found is None:
            raise UnknownSuggestion(suggestion_id)
        return found

    def owns(self, suggestion_id: str) -> bool:
        return suggestion_id in self._by_id

    def take(self, suggestion_id: str) -> Suggestion:
        found = self.get(suggestion_id)
        del self._by_id[suggestion_id]
        return found

    def is_current(self, suggestion: Suggestion) -> bool:
        return self._by_id.get(suggestion.id) is suggestion

    def take_session(self, session_id: str) -> list[Suggestion]:
        gone = [s for s in self._by_id.values() if s.session_id == session_id]
        for s in gone:
            del self._by_id[s.id]
        return gone

    def take_touching(self, path: Path) -> list[Suggestion]:
        """Suggestions whose speculation wrote ``path`` (the user edited it: their result is stale)."""
        gone = [s for s in self._by_id.values() if s.overlay is not None and s.overlay.touches(path)]
        for s in gone:
            del self._by_id[s.id]
        return gone

    def take_all(self) -> list[Suggestion]:
        gone = list(self._by_id.values())
        self._by_id.clear()
        return gone
