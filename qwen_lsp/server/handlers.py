"""Every LSP and ``qwen/*`` handler: parse params, call the engine, shape the result.

No logic lives here (design §2): each handler is a few lines of glue.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import Any

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.exceptions import JsonRpcInternalError, JsonRpcInvalidParams

from ..agent.events import TurnEvent
from ..engine import Attachment, EngineError
from ..skills.report import skills_list_result
from .app import QwenLanguageServer, engine_error, unwrap_settings, uri_to_path
from .events import ChatEventStream
from .models import (
    ChatParams,
    OptionalSessionParams,
    SelectionArgs,
    SessionParams,
    WorkspaceParams,
    parse,
)

log = logging.getLogger(__name__)

ADD_TO_PROJECT_RULES = "qwen.addToProjectRules"


def register(server: QwenLanguageServer) -> None:  # noqa: C901 - a flat list of small handlers
    @server.feature(types.INITIALIZE)
    def on_initialize(ls: QwenLanguageServer, params: types.InitializeParams) -> None:
        roots = [p for f in (params.workspace_folders or []) if (p := uri_to_path(f.uri)) is not None]
        if not roots and params.root_uri and (p := uri_to_path(params.root_uri)) is not None:
            roots = [p]
        ls.init_options = unwrap_settings(params.initialization_options)
        ls.client_settings = dict(ls.init_options)
        ls.open_workspaces(roots, ls.client_settings)

    @server.feature(types.INITIALIZED)
    async def on_initialized(ls: QwenLanguageServer, params: types.InitializedParams) -> None:
        ls.loop = asyncio.get_running_loop()
        ls.counter.warm_up()  # loads Qwen's vocabulary on its own thread
        for engine in ls.engines.values():
            engine.start_watching(ls.loop)
        if get_capability(ls.client_capabilities, "workspace.configuration", False):
            # Clients such as Neovim keep settings in workspace/configuration rather than
            # initializationOptions; a turn that starts before the answer waits for it.
            ls.pending_settings = asyncio.ensure_future(_pull_configuration(ls))
            ls.apply_client_settings(await ls.pending_settings)

    @server.feature(types.SHUTDOWN)
    async def on_shutdown(ls: QwenLanguageServer, params: None) -> None:
        await asyncio.gather(*(e.drain() for e in ls.engines.values()), return_exceptions=True)

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def on_config(ls: QwenLanguageServer, params: types.DidChangeConfigurationParams) -> None:
        settings = params.settings
        if isinstance(settings, dict) and isinstance(settings.get("qwen"), dict):
            ls.apply_client_settings(dict(settings["qwen"]))
            return
        # A turn that starts while the pull is in flight waits for it (see on_chat).
        ls.pending_settings = asyncio.ensure_future(_pull_configuration(ls))
        ls.apply_client_settings(await ls.pending_settings)

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    async def on_folders(ls: QwenLanguageServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
        for folder in params.event.removed:
            if (path := uri_to_path(folder.uri)) and (engine := ls.close_workspace(path)):
                await engine.drain()
        added = [p for f in params.event.added if (p := uri_to_path(f.uri)) is not None]
        ls.open_workspaces(added, ls.client_settings)
        for path in added:
            if ls.loop is not None:
                ls.engines[path.resolve()].start_watching(ls.loop)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def on_open(ls: QwenLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
        if (path := uri_to_path(params.text_document.uri)) is not None:
            ls.engine_for(params.text_document.uri).document_opened(path, params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def on_save(ls: QwenLanguageServer, params: types.DidSaveTextDocumentParams) -> None:
        if (path := uri_to_path(params.text_document.uri)) is not None:
            ls.engine_for(params.text_document.uri).document_saved(path)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def on_change(ls: QwenLanguageServer, params: types.DidChangeTextDocumentParams) -> None:
        """Kept so the editor syncs text; selections for code actions are read from it."""

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def on_close(ls: QwenLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
        """Activation lasts until the next skills refresh, not until close (spec §12.4)."""
        if (path := uri_to_path(params.text_document.uri)) is not None:
            ls.engine_for(params.text_document.uri).document_closed(path)

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def on_watched(ls: QwenLanguageServer, params: types.DidChangeWatchedFilesParams) -> None:
        for change in params.changes:
            if (path := uri_to_path(change.uri)) is not None:
                ls.engine_for(change.uri).document_saved(path)

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.RefactorRewrite]),
    )
    def on_code_action(ls: QwenLanguageServer, params: types.CodeActionParams) -> list[types.CodeAction | types.Command]:
        rng = params.range
        if rng.start == rng.end:
            return []
        doc = ls.workspace.get_text_document(params.text_document.uri)
        start = doc.offset_at_position(rng.start)
        end = doc.offset_at_position(rng.end)
        text = doc.source[start:end]
        if not text.strip():
            return []
        args = [{"text": text, "uri": params.text_document.uri}]
        command = types.Command(title="Qwen: Add to QWEN.md", command=ADD_TO_PROJECT_RULES, arguments=args)
        # LSP: CodeAction literals only for clients that declare support; others get the bare Command.
        if get_capability(ls.client_capabilities, "text_document.code_action.code_action_literal_support", None):
            return [types.CodeAction(title=command.title, kind=types.CodeActionKind.RefactorRewrite, command=command)]
        return [command]

    @server.command(ADD_TO_PROJECT_RULES)
    def add_to_project_rules(ls: QwenLanguageServer, *args: Any) -> dict[str, Any]:
        sel = parse(args[0] if args else None, SelectionArgs)
        path = ls.engine_for(sel.uri).context.add_project_memory(sel.text)
        return {"path": str(path)}

    @server.feature("qwen/chat")
    async def on_chat(ls: QwenLanguageServer, raw: Any) -> dict[str, Any]:
        p = parse(raw, ChatParams)
        if ls.pending_settings is not None and not ls.pending_settings.done():
            ls.apply_client_settings(await asyncio.shield(ls.pending_settings))
        engine = ls.engine_for(p.workspace_uri)
        attachments = [_attachment(a.uri, a.range) for a in p.attachments]
        try:
            session = engine.session(p.session_id)
        except EngineError as exc:
            raise engine_error(exc) from None
        turn_id = str(uuid.uuid4())
        stream = ChatEventStream(ls.protocol.notify, session.id, turn_id)
        try:
            result = await engine.chat(p.prompt, session_id=session.id, attachments=attachments, emit=stream, turn_id=turn_id)
        except asyncio.CancelledError:
            stream.close()
            raise
        except EngineError as exc:
            stream(TurnEvent("error", text=exc.message))
            stream.close()
            raise engine_error(exc) from None
        except Exception as exc:  # a bug must cost one turn, never the server
            log.exception("chat turn failed")
            message = f"Internal error in qwen-lsp: {type(exc).__name__}: {exc}. The server log has details."
            stream(TurnEvent("error", text=message))
            stream.close()
            raise JsonRpcInternalError(message) from None
        stream.close()
        return {
            "sessionId": result.session_id,
            "turnId": result.turn_id,
            "text": result.text,
            "finishReason": result.finish_reason,
            "usage": {"promptTokens": result.prompt_tokens, "completionTokens": result.completion_tokens},
        }

    @server.feature("qwen/context")
    def on_context(ls: QwenLanguageServer, raw: Any) -> dict[str, Any]:
        p = parse(raw, OptionalSessionParams)
        try:
            report = ls.engine_for(p.workspace_uri).context_report(p.session_id)
        except EngineError as exc:
            raise engine_error(exc) from None
        th = report.thresholds
        return {
            "sections": [{"name": s.name, "tokens": s.tokens, **({"source": s.source} if s.source else {})} for s in report.sections],
            "totalTokens": report.total_tokens,
            "window": report.window,
            "thresholds": {"warn": th.warn, "auto": th.auto, "hard": th.hard},
        }

    @server.feature("qwen/sessions/list")
    def on_sessions_list(ls: QwenLanguageServer, raw: Any) -> dict[str, Any]:
        p = parse(raw, WorkspaceParams)
        sessions = ls.engine_for(p.workspace_uri).list_sessions()
        return {
            "sessions": [
                {
                    "sessionId": s.session_id,
                    "title": s.title,
                    "updatedAt": s.updated_at.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
                    "messageCount": s.message_count,
                }
                for s in sessions
            ]
        }

    @server.feature("qwen/sessions/resume")
    def on_sessions_resume(ls: QwenLanguageServer, raw: Any) -> dict[str, Any]:
        p = parse(raw, SessionParams)
        engine = ls.engine_for(p.workspace_uri)
        try:
            session = engine.resume(p.session_id)
        except EngineError as exc:
            raise engine_error(exc) from None
        return {"sessionId": session.id, "messages": engine.transcript(session), "promptTokens": session.prompt_tokens}

    @server.feature("qwen/sessions/delete")
    def on_sessions_delete(ls: QwenLanguageServer, raw: Any) -> dict[str, Any]:
        p = parse(raw, SessionParams)
        try:
            return {"deleted": ls.engine_for(p.workspace_uri).delete_session(p.session_id)}
        except EngineError as exc:
            raise engine_error(exc) from None

    @server.feature("qwen/skills/list")
    def on_skills_list(ls: QwenLanguageServer, raw: Any) -> dict[str, Any]:
        p = parse(raw, WorkspaceParams)
        return skills_list_result(ls.engine_for(p.workspace_uri).skills)


def _attachment(uri: str, rng: Any) -> Attachment:
    path = uri_to_path(uri)
    if path is None:
        raise JsonRpcInvalidParams(f"attachments: only file: URIs can be attached, got {uri!r}")
    if rng is None:
        return Attachment(path=path)
    return Attachment(path=path, start_line=rng.start.line, end_line=rng.end.line)


async def _pull_configuration(ls: QwenLanguageServer) -> dict[str, Any]:
    """Ask the client for section ``qwen``; shielded against pygls #621 on cancel."""
    try:
        items = await asyncio.shield(
            ls.workspace_configuration_async(
                types.ConfigurationParams(items=[types.ConfigurationItem(section="qwen")])
            )
        )
    except Exception as exc:  # the client may not implement workspace/configuration
        log.warning("workspace/configuration failed: %s", exc)
        return {}
    first = items[0] if items else None
    return unwrap_settings(first) if isinstance(first, dict) else {}


def create_server() -> QwenLanguageServer:
    server = QwenLanguageServer()
    register(server)
    return server


__all__ = ["create_server"]
