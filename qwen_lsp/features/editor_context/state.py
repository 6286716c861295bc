"""What the editor shows: open files in the order they were last used, the focused one's cursor and selection.

Open files come from ``textDocument/didOpen``/``didClose`` (every LSP client sends
them); the focused editor, its cursor and selection from ``qwen/editorContext`` (only
editors that know it). The snapshot a turn takes follows Qwen Code 0.24.4's
``IdeContextStore.set``: most recent first, at most ``MAX_OPEN_FILES`` files, the
selection cut at ``MAX_SELECTED_TEXT`` characters with ``... [TRUNCATED]``.

Positions: the CLI's VS Code companion reports the cursor line 1-based and the
character 0-based (``selection.active.line + 1``, ``selection.active.character``);
``qwen/editorContext`` carries LSP's 0-based positions, so the line is shifted once,
here.

One difference on purpose: the CLI's store marks no file active when the most recent
one is not the focused editor; here the focused editor stays the active file even
when a document was opened after it, because VS Code sends ``didOpen`` for documents
it does not show (a diff's other side, a file a language feature read).

Files outside the workspace and files the user excluded (``.qwenignore``) are never
listed: the reminder must not tell the model about, or quote from, what it may not read.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

MAX_OPEN_FILES = 10
"""``IDE_MAX_OPEN_FILES`` in Qwen Code 0.24.4's ``ide/constants.ts``."""

MAX_SELECTED_TEXT = 16384
"""``IDE_MAX_SELECTED_TEXT_LENGTH`` in Qwen Code 0.24.4's ``ide/constants.ts`` (UTF-16 units there, characters here)."""

TRUNCATED = "... [TRUNCATED]"

MAX_TRACKED_FILES = 4096
"""A client may open any number of documents; only the most recent are kept (the reminder shows ten)."""


@dataclass(frozen=True)
class Cursor:
    line: int
    """1-based, as the CLI shows it."""
    character: int
    """0-based, as the CLI shows it."""


@dataclass(frozen=True)
class OpenFile:
    path: str
    active: bool = False
    cursor: Cursor | None = None
    selected_text: str | None = None


@dataclass(frozen=True)
class EditorSnapshot:
    """The editor as one turn tells it: most recent first, the active file (if any) first of all."""

    files: tuple[OpenFile, ...] = ()

    @property
    def active(self) -> OpenFile | None:
        return next((f for f in self.files if f.active), None)

    @property
    def others(self) -> list[OpenFile]:
        return [f for f in self.files if not f.active]

    def without_selection(self) -> EditorSnapshot:
        """The same editor with nothing selected: what "leave it out" sends for one message."""
        return EditorSnapshot(tuple(OpenFile(f.path, f.active, f.cursor, None) for f in self.files))


SelectionReader = Callable[[Path, tuple[int, int], tuple[int, int]], str | None]
"""Reads the selected text of an open document from ``(line, character)`` start to end (0-based)."""


@dataclass
class _Focus:
    path: Path
    cursor: Cursor | None
    start: tuple[int, int] | None
    end: tuple[int, int] | None


class EditorState:
    """One workspace's view of the editor; event-loop only, every update O(1) amortised.

    ``allowed`` decides whether a path may be listed at all (inside the workspace, not
    excluded); it is asked when a snapshot is taken, so a rule change applies at once.
    """

    def __init__(self, allowed: Callable[[Path], bool]) -> None:
        self._allowed = allowed
        self._order: dict[Path, int] = {}
        self._clock = 0
        self._focus: _Focus | None = None

    def _touch(self, path: Path) -> None:
        self._clock += 1
        self._order.pop(path, None)
        self._order[path] = self._clock
        if len(self._order) > MAX_TRACKED_FILES:
            del self._order[next(iter(self._order))]

    def opened(self, path: Path) -> None:
        self._touch(path)

    def closed(self, path: Path) -> None:
        self._order.pop(path, None)
        if self._focus is not None and self._focus.path == path:
            self._focus = None

    def focused(
        self,
        path: Path | None,
        cursor: tuple[int, int] | None = None,
        selection: tuple[tuple[int, int], tuple[int, int]] | None = None,
    ) -> None:
        """The editor with focus now (``None``: none has), its 0-based cursor and selection range."""
        if path is None:
            self._focus = None
            return
        if path not in self._order or (self._focus is not None and self._focus.path != path):
            self._touch(path)
        start, end = selection if selection is not None and selection[0] != selection[1] else (None, None)
        self._focus = _Focus(path, Cursor(cursor[0] + 1, cursor[1]) if cursor is not None else None, start, end)

    @property
    def open_paths(self) -> list[Path]:
        return list(self._order)

    def snapshot(self, read_selection: SelectionReader | None = None) -> EditorSnapshot:
        """Freeze what a turn tells the model; ``read_selection`` turns the focused range into text."""
        recent = sorted(self._order, key=self._order.__getitem__, reverse=True)
        focus = self._focus
        files: list[OpenFile] = []
        if focus is not None and focus.path in self._order and self._allowed(focus.path):
            text = None
            if focus.start is not None and focus.end is not None and read_selection is not None:
                text = read_selection(focus.path, focus.start, focus.end) or None
            if text is not None and len(text) > MAX_SELECTED_TEXT:
                text = text[:MAX_SELECTED_TEXT] + TRUNCATED
            files.append(OpenFile(str(focus.path), True, focus.cursor, text))
        for path in recent:
            if len(files) >= MAX_OPEN_FILES:
                break
            if (focus is not None and path == focus.path) or not self._allowed(path):
                continue
            files.append(OpenFile(str(path)))
        return EditorSnapshot(tuple(files))
