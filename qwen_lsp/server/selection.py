"""The selected text of a document the client has open, for the editor-context feature.

The text comes from the buffer the client synchronised (what the user sees, unsaved
edits included), never from disk, and a document the client has not opened yields nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types

from ..features.editor_context.state import MAX_SELECTED_TEXT, SelectionReader
from .uris import uri_to_path

if TYPE_CHECKING:
    # pygls' base class, not the app's subclass: the app builds these, so naming it would be a circle.
    from pygls.lsp.server import LanguageServer


def selection_reader(ls: LanguageServer) -> SelectionReader:
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
