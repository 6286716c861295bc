"""Glue for chats: ``qwen/chat``, ``qwen/attachments/paste``, ``qwen/context`` and ``qwen/sessions/*``."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

from pygls.exceptions import JsonRpcInvalidParams
from pygls.uris import to_fs_path

from ..protocol import (
    ChatParams,
    OptionalSessionParams,
    PasteParams,
    ResumeParams,
    SessionParams,
    WireResult,
    WorkspaceParams,
)
from ..workspace import Attachment
from .app import QwenLanguageServer
from .events import ChatEventStream
from .requests import qwen_request


EDITOR_CONTEXT_LEFT_OUT = frozenset({"editor_context"})
"""``qwen/chat``'s ``editorContext: false``: this message goes without the editor-context feature's part."""


def register(server: QwenLanguageServer) -> None:
    @qwen_request(server, "qwen/chat", ChatParams)
    async def on_chat(ls: QwenLanguageServer, p: ChatParams) -> WireResult:
        if ls.pending_settings is not None and not ls.pending_settings.done():
            await asyncio.shield(ls.pending_settings)
        workspace = ls.workspace_for(p.workspace_uri)
        attachments = [_attachment(a.uri, a.range) for a in p.attachments]
        session = await workspace.open_session(p.session_id)
        if p.retry:
            await workspace.take_back_failed_turn(session)
        turn_id = str(uuid.uuid4())
        with ChatEventStream(ls.protocol.notify, session.id, turn_id, output=ls.output) as stream:
            return await workspace.chat(
                p.prompt, session_id=session.id, attachments=attachments, emit=stream, turn_id=turn_id, leave_out=frozenset() if p.editor_context else EDITOR_CONTEXT_LEFT_OUT
            )

    @qwen_request(server, "qwen/attachments/paste", PasteParams)
    async def on_paste(ls: QwenLanguageServer, p: PasteParams) -> WireResult:
        return await ls.workspace_for(p.workspace_uri).paste_image(p.data)

    @qwen_request(server, "qwen/context", OptionalSessionParams)
    async def on_context(ls: QwenLanguageServer, p: OptionalSessionParams) -> WireResult:
        return await ls.workspace_for(p.workspace_uri).context_report(p.session_id, missing_ok=True)

    @qwen_request(server, "qwen/sessions/list", WorkspaceParams)
    async def on_sessions_list(ls: QwenLanguageServer, p: WorkspaceParams) -> WireResult:
        return await ls.workspace_for(p.workspace_uri).list_sessions()

    @qwen_request(server, "qwen/sessions/resume", ResumeParams)
    async def on_sessions_resume(ls: QwenLanguageServer, p: ResumeParams) -> WireResult:
        return await ls.workspace_for(p.workspace_uri).resume(p.session_id, recap=p.recap)

    @qwen_request(server, "qwen/sessions/delete", SessionParams)
    async def on_sessions_delete(ls: QwenLanguageServer, p: SessionParams) -> WireResult:
        return await ls.workspace_for(p.workspace_uri).delete_session(p.session_id)


def _attachment(uri: str, rng: Any) -> Attachment:
    """The path as the editor named it: links are resolved (and refused if they leave) by the attachments core."""
    fs = to_fs_path(uri) if uri.startswith("file:") else None
    if not fs:
        raise JsonRpcInvalidParams(f"attachments: only file: URIs can be attached, got {uri!r}")
    if "\x00" in fs:
        raise JsonRpcInvalidParams(f"attachments: the URI names a path with a NUL character: {uri!r}")
    path = Path(fs)
    if rng is None:
        return Attachment(path=path)
    return Attachment(path=path, start_line=rng.start.line, end_line=rng.end.line)
