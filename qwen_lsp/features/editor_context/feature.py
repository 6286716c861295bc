"""Editor context as a feature: what the editor shows rides with each typed message.

The workspace's :class:`~.state.EditorState` follows the editor (documents
opened and closed, ``qwen/editorContext``); each typed turn puts the
reminder (whole on a chat's first turn, then only the changes, as Qwen Code
0.24.4's ``getIdeContextParts``) right before the prompt. What one chat was
last told is its :class:`~.chat.EditorContextSlot`, on the chat: marked sent
when the model answers, told whole again after a compaction (the summary
does not carry it) or a failed request (it may not have arrived).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from ...agent.hooks import Feature, Turn, TurnDone
from ...agent.hooks import Caller, Handler
from ...agent.picture import tag
from ...protocol import EDITOR_CONTEXT, ContextChange, EditorContextParams, Position
from ...sessions.registry import ChatSession, Slot
from ...settings.config import Settings
from .chat import EditorContextSlot
from .state import EditorSnapshot, EditorState, SelectionReader
from .visibility import EditorFileFilter

SLOT: Slot[EditorContextSlot] = Slot("editor_context", EditorContextSlot)
"""What a chat was last told about the editor."""


class EditorContextFeature(Feature):
    name = "editor_context"

    def __init__(self, root: Path, *, settings: Callable[[], Settings]) -> None:
        self._settings = settings
        self.state = EditorState(EditorFileFilter(root))
        """What the editor shows (open files in order of use, focus, cursor, selection)."""
        self.read_selection: SelectionReader | None = None
        """Set by the server: the text of a range of an open document (the editor's buffer, not the disk)."""

    def snapshot(self) -> EditorSnapshot:
        return self.state.snapshot(self.read_selection) if self._settings().editor_context.enabled else EditorSnapshot()

    def peek(self, session: ChatSession | None) -> str | None:
        """What the next message of ``session`` (a new chat when None) would carry, changing nothing."""
        slot = session.slot(SLOT) if session is not None else EditorContextSlot()
        return slot.peek(self.snapshot())

    def user_parts(self, turn: Turn) -> list[str]:
        slot = turn.session.slot(SLOT)
        slot.omit_next = self.name in turn.leave_out
        told = slot.reminder(self.snapshot())
        slot.pending = told[1] if told is not None else None
        if told is None:
            return []
        tag(turn.session, "editor context", [told[0]])
        return [told[0]]

    def context_changes(self, turn: Turn) -> list[ContextChange]:
        """What this turn's message told of the editor: the focused file (and a selection), else the open files."""
        told = turn.session.slot(SLOT).pending
        if told is None or not told.files:
            return []
        active = told.active
        shown = [active] if active is not None else list(told.files)
        names = ", ".join(Path(f.path).name for f in shown)
        label = f"editor: {names}{', selection' if active is not None and active.selected_text else ''}"
        return [ContextChange(kind="editor", label=label, sources=[f.path for f in shown])]

    def after_turn(self, done: TurnDone) -> None:
        slot = done.session.slot(SLOT)
        if slot.pending is not None:
            slot.sent(slot.pending)
            slot.pending = None

    def turn_failed(self, session: ChatSession) -> None:
        slot = session.slot(SLOT)
        slot.pending = None
        slot.resend_all()

    def history_compacted(self, session: ChatSession) -> None:
        """The summary does not carry what the editor showed: the next turn tells it whole."""
        session.slot(SLOT).resend_all()

    def document_opened(self, path: Path) -> None:
        self.state.opened(path)

    def document_closed(self, path: Path) -> None:
        self.state.closed(path)

    def preview(self, session: ChatSession | None) -> list[str]:
        told = self.peek(session)
        return [told] if told is not None else []

    def handlers(self) -> Mapping[str, Handler]:
        return {EDITOR_CONTEXT.method: self._editor_context}

    def _editor_context(self, p: EditorContextParams, call: Caller) -> None:
        """``qwen/editorContext``: the focused editor, its cursor and selection (0-based). Focus moves between
        folders: only the folder the file belongs to has it, every other one hears "none"."""
        active = p.active_file
        path = call.path(active.uri) if active is not None else None
        if active is None or path is None or not call.owns(path):
            self.state.focused(None, None, None)
            return
        selection = None
        if active.selection is not None:
            selection = (_point(active.selection.start), _point(active.selection.end))
        self.state.focused(path, _point(active.cursor), selection)  # type: ignore[arg-type]


def _point(p: Position | None) -> tuple[int, int] | None:
    return None if p is None else (p.line, p.character)
