"""Glue for editor context: ``qwen/editorContext`` in, to the workspace holding the focused file.

The editor-context feature keeps what the editor shows (``qwen_lsp.features.editor_context``); this module only
turns the notification into a call on the right folder's workspace (``selection.py``
gives workspaces a reader for the selected text).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from ..protocol import EDITOR_CONTEXT, EditorContextParams, Position
from .uris import uri_to_path

if TYPE_CHECKING:
    from .app import QwenLanguageServer

log = logging.getLogger(__name__)

METHOD = EDITOR_CONTEXT.method


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
        if not ls.workspaces:
            return
        active = p.active_file
        path = uri_to_path(active.uri) if active is not None else None
        selection = None
        if active is not None and active.selection is not None:
            selection = (_point(active.selection.start), _point(active.selection.end))
        owner = ls.workspace_for_path(path) if path is not None else None
        for workspace in ls.workspaces.values():  # focus moves between folders: only the one holding the file has it
            if workspace is owner and active is not None:
                workspace.editor_focused(path, _point(active.cursor), selection)  # type: ignore[arg-type]
            else:
                workspace.editor_focused(None, None, None)
