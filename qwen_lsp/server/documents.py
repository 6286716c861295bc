"""Glue for open documents and watched files: each is handed to the workspace that holds it."""

from __future__ import annotations

import logging

from lsprotocol import types

from ..errors import EngineError
from .app import QwenLanguageServer, uri_to_path

log = logging.getLogger(__name__)


def register(server: QwenLanguageServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    async def on_open(ls: QwenLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
        if (path := uri_to_path(params.text_document.uri)) is not None:
            await ls.folder_ready(params.text_document.uri)
            try:
                await ls.workspace_for_path(path).document_opened(path, params.text_document.uri)
            except EngineError as exc:  # a notification has no answer to carry it
                log.warning("didOpen %s: %s", params.text_document.uri, exc.message)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def on_change(ls: QwenLanguageServer, params: types.DidChangeTextDocumentParams) -> None:
        if (path := uri_to_path(params.text_document.uri)) is not None:
            ls.workspace_for(params.text_document.uri).document_changed(path)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def on_save(ls: QwenLanguageServer, params: types.DidSaveTextDocumentParams) -> None:
        if (path := uri_to_path(params.text_document.uri)) is not None:
            ls.workspace_for_path(path).document_saved(path)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def on_close(ls: QwenLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
        """Activation lasts until the next skills refresh, not until close (``SkillActivationRegistry``)."""
        if (path := uri_to_path(params.text_document.uri)) is not None:
            ls.workspace_for_path(path).document_closed(path)

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def on_watched(ls: QwenLanguageServer, params: types.DidChangeWatchedFilesParams) -> None:
        for change in params.changes:
            if (path := uri_to_path(change.uri)) is not None:
                ls.workspace_for_path(path).document_saved(path)
