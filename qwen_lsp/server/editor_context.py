"""Glue for editor context: ``qwen/editorContext`` in, selected text out of the open buffers.

The engine keeps what the editor shows (``qwen_lsp.editor_context``); this module only
turns the notification into a call on the right folder's engine and gives engines a
reader for the selected text of a document the client has open. The text comes from
the buffer the client synchronised (what the user sees, unsaved edits included), never
from disk, and a document the client has not opened yields nothing.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pydantic import ValidationError

from ..editor_context.state import MAX_SELECTED_TEXT, SelectionReader
from ..protocol import EDITOR_CONTEXT, EditorContextParams, Position
from .uris import uri_to_path

if TYPE_CHECKING:
    from .app import QwenLanguageServer

log = logging.getLogger(__name__)

METHOD = EDITOR_CONTEXT.method


def selection_reader(ls: QwenLanguageServer) -> SelectionReader:
    def read(path: Path, start: tuple[int, int], end: tuple[int, int]) -> str | None:
        for uri, doc in list(ls.workspace.text_documents.items()):
            if uri_to_path(uri) != path:
                continue
            lo, hi = sorted([start, end])
            rng = types.Range(types.Position(*lo), types.Position(*hi))
            try:
                return doc.text_in_client_range(rng)[: MAX_SELECTED_TEXT + 1]
            except (IndexError, ValueError):  # a range past the buffer's end: the client lags behind an edit
                return None
        return None

    return read


def _point(p: Position | None) -> tuple[int, int] | None:
    return None if p is None else (p.line, p.character)


def register(server: QwenLanguageServer) -> None:
    @server.feature(METHOD)
    def on_editor_context(ls: QwenLanguageServer, raw: Any) -> None:
        try:
            p = EditorContextParams.model_validate(raw if isinstance(raw, dict) else {})
        except ValidationError as exc:  # a notification has no answer: the log says why it was ignored
            log.warning("%s ignored: %s", METHOD, exc.errors(include_url=False, include_input=False))
            return
        if not ls.engines:
            return
        active = p.active_file
        path = uri_to_path(active.uri) if active is not None else None
        selection = None
        if active is not None and active.selection is not None:
            selection = (_point(active.selection.start), _point(active.selection.end))
        owner = ls.engine_for_path(path) if path is not None else None
        for engine in ls.engines.values():  # focus moves between folders: only the one holding the file has it
            if engine is owner and active is not None:
                engine.editor_focused(path, _point(active.cursor), selection)  # type: ignore[arg-type]
            else:
                engine.editor_focused(None, None, None)
