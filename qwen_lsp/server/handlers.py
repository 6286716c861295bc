"""Every LSP and ``qwen/*`` handler: parse params, call the workspace, shape the result.

No logic lives here (docs/architecture.md): each handler is a few lines of glue.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.exceptions import JsonRpcInvalidParams
from pygls.uris import to_fs_path

from ..background import prepare_server_process
from ..workspace import Attachment, Workspace
from ..errors import EngineError
from ..followup.state import UnknownSuggestion
from ..protocol import (
    ADD_TO_PROJECT_RULES,
    REMEMBER_SELECTION,
    AddToProjectRulesResult,
    ChatParams,
    CompressParams,
    EmptyResult,
    ForgetCandidatesParams,
    ForgetParams,
    MemoryListParams,
    OptionalSessionParams,
    RememberParams,
    ResumeParams,
    SelectionArgs,
    SessionParams,
    SuggestionParams,
    WireResult,
    WorkspaceParams,
)
from ..skills.report import skills_list_result
from .app import QwenLanguageServer, engine_error, unwrap_settings, uri_to_path
from .events import ChatEventStream
from . import editor_context, skill_proposals
from .requests import qwen_request
from .models import parse

log = logging.getLogger(__name__)


def register(server: QwenLanguageServer) -> None:  # noqa: C901 - a flat list of small handlers
    @server.feature(types.INITIALIZE)
    async def on_initialize(ls: QwenLanguageServer, params: types.InitializeParams) -> None:
        roots = [p for f in (params.workspace_folders or []) if (p := uri_to_path(f.uri)) is not None]
        if not roots and params.root_uri and (p := uri_to_path(params.root_uri)) is not None:
            roots = [p]
        ls.configuration.set_initial(unwrap_settings(params.initialization_options))
        await ls.open_workspaces(roots)

    @server.feature(types.INITIALIZED)
    async def on_initialized(ls: QwenLanguageServer, params: types.InitializedParams) -> None:
        ls.loop = asyncio.get_running_loop()
        ls.counter.warm_up()  # loads Qwen's vocabulary on its own thread
        if get_capability(ls.client_capabilities, "workspace.configuration", False):
            # Clients such as Neovim keep settings in workspace/configuration rather than
            # initializationOptions. Started before anything awaits, so a turn that
            # arrives meanwhile finds the pull in flight and waits for its answer.
            ls.pending_settings = asyncio.ensure_future(_pull_configuration(ls))
        for workspace in ls.workspaces.values():
            await workspace.start_watching(ls.loop)
        if ls.pending_settings is not None:
            await ls.pending_settings

    @server.feature(types.SHUTDOWN)
    async def on_shutdown(ls: QwenLanguageServer, params: None) -> None:
        await asyncio.gather(*(e.drain() for e in ls.workspaces.values()), return_exceptions=True)

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def on_config(ls: QwenLanguageServer, params: types.DidChangeConfigurationParams) -> None:
        """A change is re-pulled per folder whenever the client can answer: pushed values carry no scope.

        Pushed values still apply (to every folder, under what each folder's pull
        answers), for clients that only push.
        """
        settings = params.settings
        qwen = settings.get("qwen") if isinstance(settings, dict) else None
        can_pull = get_capability(ls.client_capabilities, "workspace.configuration", False)
        if isinstance(qwen, dict):
            ls.configuration.push(qwen, pull_follows=can_pull)
        if can_pull or not isinstance(qwen, dict):
            await _pull(ls)

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    async def on_folders(ls: QwenLanguageServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
        for folder in params.event.removed:
            if (path := uri_to_path(folder.uri)) and (workspace := ls.close_workspace(path)):
                await workspace.drain()
        added = await ls.open_workspaces([p for f in params.event.added if (p := uri_to_path(f.uri)) is not None])
        if ls.loop is not None:
            for workspace in added:
                await workspace.start_watching(ls.loop)
        if added and get_capability(ls.client_capabilities, "workspace.configuration", False):
            await _pull(ls)

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
        commands = [
            types.Command(title="Qwen: Remember this convention", command=REMEMBER_SELECTION.name, arguments=args),
            types.Command(title="Qwen: Add to QWEN.md", command=ADD_TO_PROJECT_RULES.name, arguments=args),
        ]
        # LSP: CodeAction literals only for clients that declare support; others get the bare Command.
        if get_capability(ls.client_capabilities, "text_document.code_action.code_action_literal_support", None):
            return [types.CodeAction(title=c.title, kind=types.CodeActionKind.RefactorRewrite, command=c) for c in commands]
        return list(commands)

    @server.command(ADD_TO_PROJECT_RULES.name)
    async def add_to_project_rules(ls: QwenLanguageServer, *args: Any) -> dict[str, Any]:
        sel = parse(args[0] if args else None, ADD_TO_PROJECT_RULES.argument)
        workspace = ls.workspace_for(sel.uri)
        path = await asyncio.to_thread(workspace.context.add_to_project_rules, sel.text)
        return AddToProjectRulesResult(path=str(path)).wire()

    @server.command(REMEMBER_SELECTION.name)
    async def remember_selection(ls: QwenLanguageServer, *args: Any) -> dict[str, Any]:
        """A project ``feedback`` memory (``user`` when the client asks); no model needed."""
        sel = parse(args[0] if args else None, REMEMBER_SELECTION.argument)
        try:
            result = await ls.workspace_for(sel.uri).memory.remember(sel.text, type="feedback", scope=sel.scope or "project")
        except EngineError as exc:
            raise engine_error(exc) from None
        return result.wire()

    @qwen_request(server, "qwen/memory/list", MemoryListParams)
    async def on_memory_list(ls: QwenLanguageServer, p: MemoryListParams) -> WireResult:
        return await ls.workspace_for(p.workspace_uri).memory.list(p.scope)

    @qwen_request(server, "qwen/memory/remember", RememberParams)
    async def on_memory_remember(ls: QwenLanguageServer, p: RememberParams) -> WireResult:
        return await ls.workspace_for(p.workspace_uri).memory.remember(p.text, type=p.type or "feedback", scope=p.scope or "project", name=p.name)

    @qwen_request(server, "qwen/memory/forgetCandidates", ForgetCandidatesParams)
    async def on_memory_forget_candidates(ls: QwenLanguageServer, p: ForgetCandidatesParams) -> WireResult:
        return await ls.workspace_for(p.workspace_uri).memory.forget_candidates(p.query)

    @qwen_request(server, "qwen/memory/forget", ForgetParams)
    async def on_memory_forget(ls: QwenLanguageServer, p: ForgetParams) -> WireResult:
        return await ls.workspace_for(p.workspace_uri).memory.forget([Path(x) for x in p.paths])

    @qwen_request(server, "qwen/chat", ChatParams)
    async def on_chat(ls: QwenLanguageServer, p: ChatParams) -> WireResult:
        if ls.pending_settings is not None and not ls.pending_settings.done():
            await asyncio.shield(ls.pending_settings)
        workspace = ls.workspace_for(p.workspace_uri)
        attachments = [_attachment(a.uri, a.range) for a in p.attachments]
        session = await workspace.open_session(p.session_id)
        turn_id = str(uuid.uuid4())
        with ChatEventStream(ls.protocol.notify, session.id, turn_id, output=ls.output) as stream:
            return await workspace.chat(
                p.prompt, session_id=session.id, attachments=attachments, emit=stream, turn_id=turn_id, editor_context=p.editor_context
            )

    @qwen_request(server, "qwen/suggestion/accept", SuggestionParams)
    async def on_suggestion_accept(ls: QwenLanguageServer, p: SuggestionParams) -> WireResult:
        workspace, session_id = _suggestion_owner(ls, p.suggestion_id)
        turn_id = str(uuid.uuid4())
        with ChatEventStream(ls.protocol.notify, session_id, turn_id) as stream:
            return await workspace.accept_suggestion(p.suggestion_id, emit=stream, turn_id=turn_id)

    @qwen_request(server, "qwen/suggestion/dismiss", SuggestionParams)
    async def on_suggestion_dismiss(ls: QwenLanguageServer, p: SuggestionParams) -> WireResult:
        workspace, _session = _suggestion_owner(ls, p.suggestion_id)
        await workspace.dismiss_suggestion(p.suggestion_id)
        return EmptyResult()

    @qwen_request(server, "qwen/compress", CompressParams)
    async def on_compress(ls: QwenLanguageServer, p: CompressParams) -> WireResult:
        return await ls.workspace_for(p.workspace_uri).compress(p.session_id, p.mode)

    @qwen_request(server, "qwen/context", OptionalSessionParams)
    async def on_context(ls: QwenLanguageServer, p: OptionalSessionParams) -> WireResult:
        return await ls.workspace_for(p.workspace_uri).context_report(p.session_id)

    @qwen_request(server, "qwen/sessions/list", WorkspaceParams)
    async def on_sessions_list(ls: QwenLanguageServer, p: WorkspaceParams) -> WireResult:
        return await ls.workspace_for(p.workspace_uri).list_sessions()

    @qwen_request(server, "qwen/sessions/resume", ResumeParams)
    async def on_sessions_resume(ls: QwenLanguageServer, p: ResumeParams) -> WireResult:
        return await ls.workspace_for(p.workspace_uri).resume(p.session_id, recap=p.recap)

    @qwen_request(server, "qwen/sessions/delete", SessionParams)
    async def on_sessions_delete(ls: QwenLanguageServer, p: SessionParams) -> WireResult:
        return await ls.workspace_for(p.workspace_uri).delete_session(p.session_id)

    @qwen_request(server, "qwen/skills/list", WorkspaceParams)
    async def on_skills_list(ls: QwenLanguageServer, p: WorkspaceParams) -> WireResult:
        return skills_list_result(ls.workspace_for(p.workspace_uri).skills)

    skill_proposals.register(server)
    editor_context.register(server)


def _suggestion_owner(ls: QwenLanguageServer, suggestion_id: str) -> tuple[Workspace, str]:
    """The workspace holding a pending suggestion (ids are unique across workspaces), and its chat."""
    for workspace in ls.workspaces.values():
        session_id = workspace.session_of_suggestion(suggestion_id)
        if session_id is not None:
            return workspace, session_id
    raise EngineError(str(UnknownSuggestion(suggestion_id)), kind="invalid_params", param="suggestionId")


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


async def _pull(ls: QwenLanguageServer) -> None:
    """Pull section ``qwen`` for every folder (``scopeUri``); turns that start meanwhile wait for it."""
    ls.pending_settings = asyncio.ensure_future(_pull_configuration(ls))
    await ls.pending_settings


async def _pull_configuration(ls: QwenLanguageServer) -> None:
    roots = list(ls.workspaces)
    items = [types.ConfigurationItem(scope_uri=root.as_uri(), section="qwen") for root in roots]
    try:
        # Shielded against pygls #621 on cancel.
        answers = await asyncio.shield(ls.workspace_configuration_async(types.ConfigurationParams(items=items)))
    except Exception as exc:  # the client may not implement workspace/configuration
        log.warning("workspace/configuration failed: %s", exc)
        answers = None
    ls.configuration.pulled({root: unwrap_settings(answer) for root, answer in zip(roots, answers or [], strict=False)})  # also applies a push


def create_server() -> QwenLanguageServer:
    server = QwenLanguageServer()
    register(server)
    prepare_server_process()
    return server


__all__ = ["create_server"]
