"""The chats a workspace has open, and how they are created, reloaded and removed.

A :class:`ChatSession` is everything one chat owns: its recorder, its
history, its context state (git snapshot, prelude, conditional rules), its
skill-listing tracker, a lock that keeps its turns in order, and one
:class:`Slot` per feature that keeps state per chat (compaction's token
base, approvals granted "always", the read cache, memories already
recalled, skill review's tool-call count, what the editor context last
told it: whole again after a resume, which makes a new chat object). Chats share nothing mutable, so
two chats of one workspace never see each other's state, and forgetting a
chat frees all of it at once: no feature keeps a table keyed by chat id.

The methods that touch disk (:meth:`SessionRegistry.new`, :meth:`load`,
:meth:`read_history`, :meth:`listing`, :meth:`delete`) are blocking and are
meant for a worker thread; :meth:`adopt`, :meth:`get` and :meth:`live` only
touch the in-memory table and belong on the event loop, so the table is
only ever changed from one thread.
"""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from ..context.session_context import SessionContext
from ..errors import EngineError
from ..llm.content import Content
from ..files.paths import git_branch
from ..skills.listing import SkillListingTracker
from . import reader
from .files import is_valid_session_id, session_path
from .listing import SessionSummary, list_sessions
from .orphans import answer_orphaned_calls
from .recording import SessionRecorder
from .resume_tokens import resume_token_counts


T = TypeVar("T")


class Slot(Generic[T]):
    """One feature's per-chat state: made by ``factory`` on the chat's first use, freed with the chat.

    Compared by identity: each feature defines its slot once, at module level.
    """

    def __init__(self, name: str, factory: Callable[[], T]) -> None:
        self.name = name
        self.factory = factory

    def __repr__(self) -> str:
        return f"Slot({self.name!r})"


@dataclass(eq=False)
class ChatSession:
    id: str
    recorder: SessionRecorder
    context: SessionContext
    history: list[Content] = field(default_factory=list)
    skills_tracker: SkillListingTracker = field(default_factory=SkillListingTracker)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    prompt_tokens: int = 0
    conversation: list[tuple[Content | None, dict[str, Any]]] | None = None
    """For a chat loaded from disk: every recorded message, also those a compression summarised,
    with its record, and each failed request's record without a Content (what a resume shows the
    user); None for a chat started here."""
    slots: dict[Slot[Any], Any] = field(default_factory=dict)
    """Each feature's state for this chat (:meth:`slot`)."""

    def take_back_failed_turn(self) -> bool:
        """Blocking (reads the session file); call under :attr:`lock`. A Retry of the chat's last turn, which failed:
        that turn leaves the session file's active branch (``SessionRecorder.rewind_failed_turn``) and the history,
        so the retried prompt is sent and shown once. Returns whether there was such a turn."""
        if not self.recorder.rewind_failed_turn():
            return False
        typed = [i for i, c in enumerate(self.history) if c["role"] == "user" and not any("functionResponse" in p for p in c.get("parts", []))]
        if typed:
            del self.history[typed[-1] :]
        return True

    def slot(self, slot: Slot[T]) -> T:
        """This chat's state for ``slot``, made on first use."""
        try:
            value: T = self.slots[slot]
        except KeyError:
            value = self.slots[slot] = slot.factory()
        return value


class SessionRegistry:
    def __init__(self, root: Path, *, version: str, new_context: Callable[[], SessionContext]) -> None:
        self.root = root
        self._version = version
        self._new_context = new_context
        self._open: dict[str, ChatSession] = {}

    # ------------------------------------------------------------------ event loop
    def get(self, session_id: str) -> ChatSession | None:
        return self._open.get(session_id)

    def adopt(self, session: ChatSession, *, replace: bool = False) -> ChatSession:
        """Register a session built off-loop; if another caller registered the id first, theirs wins."""
        if replace or session.id not in self._open:
            self._open[session.id] = session
        return self._open[session.id]

    def live(self) -> list[ChatSession]:
        """The chats open now (editor-wide events such as didOpen reach each of them)."""
        return list(self._open.values())

    def forget(self, session_id: str) -> None:
        self._open.pop(session_id, None)

    # ------------------------------------------------------------------ blocking (worker thread)
    def new(self, context: SessionContext | None = None) -> ChatSession:
        """A fresh chat (nothing is written until its first record), with ``context`` if the caller made it
        first (to start its git snapshot before this hop)."""
        sid = str(uuid.uuid4())
        return ChatSession(id=sid, recorder=self._recorder(sid), context=context or self._new_context())

    def load(self, session_id: str, *, missing_ok: bool = False) -> ChatSession:
        """A chat rebuilt from its JSONL (ours or the Qwen Code CLI's), not yet registered.

        The prompt size is restored too (``resume_tokens``), so a session
        resumed near its window compacts before its next request, not after
        the endpoint refuses it.
        """
        records = self._records(session_id, missing_ok=missing_ok)
        counts = resume_token_counts(reader.active_branch(records))
        return ChatSession(
            id=session_id,
            recorder=self._recorder(session_id),
            context=self._new_context(),
            history=answer_orphaned_calls(reader.build_history(records)),
            prompt_tokens=counts.prompt_tokens if counts else 0,
            conversation=reader.build_conversation(records),
        )

    def read_history(self, session_id: str, *, missing_ok: bool = False) -> list[Content]:
        """The history a resume would continue from; registers nothing (the inspector uses it too)."""
        return answer_orphaned_calls(reader.build_history(self._records(session_id, missing_ok=missing_ok)))

    def _records(self, session_id: str, *, missing_ok: bool = False) -> list[dict[str, Any]]:
        """``missing_ok``: a valid id with no file yet (a chat whose turns never reached the model) reads as empty."""
        path = session_path(self.root, checked_id(session_id))
        if missing_ok and not path.exists():
            return []
        if not path.exists():
            raise EngineError(f"No session '{session_id}' in {path.parent}.", kind="not_found")
        return reader.read_records(path).records

    def listing(self) -> list[SessionSummary]:
        return list_sessions(self.root)

    def delete(self, session_id: str) -> bool:
        return reader.delete_session(self.root, checked_id(session_id))

    def _recorder(self, session_id: str) -> SessionRecorder:
        return SessionRecorder(self.root, session_id, version=self._version, git_branch=git_branch(self.root))


def checked_id(session_id: str) -> str:
    """Session ids become file names: refuse anything but Qwen Code's id alphabet."""
    if not is_valid_session_id(session_id):
        raise EngineError(
            f"{session_id[:200]!r} is not a session id (letters, digits, '-' and '_' only; Qwen Code uses UUIDs).",
            kind="invalid_params",
            param="sessionId",
        )
    return session_id


def turn_recorder(recorder: SessionRecorder, model: str | None) -> Callable[..., None]:
    """How the agent loop's Contents land in the JSONL: answers with usage and the interrupted mark, tool results as they are."""

    def record(content: Content, **meta: Any) -> None:
        if content["role"] != "model":
            _record_tool_results(recorder, content, meta.get("tool_results") or [])
            return
        usage = meta.get("usage")
        recorder.record_model(
            content,
            usage=None if usage is None else dataclasses.asdict(usage),
            model=model,
            interrupted=bool(meta.get("interrupted")),
        )

    return record


def _record_tool_results(recorder: SessionRecorder, content: Content, results: list[dict[str, Any]]) -> None:
    """One ``tool_result`` record per call, as Qwen Code writes them: that call's response and its ``toolCallResult``.

    Resume appends each record's message, so a round of N calls comes back
    as N user Contents; they become the same N ``tool`` messages on the wire.
    """
    parts = content["parts"]
    if len(results) != len(parts):
        recorder.record_tool_result(content, None)
        return
    for part, result in zip(parts, results, strict=True):
        recorder.record_tool_result([part], result)
