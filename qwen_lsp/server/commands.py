"""Glue for ``qwen/commands/list``, ``qwen/command`` and ``qwen/files/complete`` (``qwen_lsp/commands/``, ``context/file_index.py``)."""

from __future__ import annotations

import asyncio
import uuid

from ..commands import CommandRunner, command_infos
from ..protocol import ChatResult, CommandParams, CommandsListResult, FileCompletionParams, WireResult, WorkspaceParams
from .app import QwenLanguageServer
from .events import ChatEventStream
from .requests import qwen_request


def register(server: QwenLanguageServer) -> None:
    runner = CommandRunner()

    @qwen_request(server, "qwen/commands/list", WorkspaceParams)
    async def on_commands_list(ls: QwenLanguageServer, p: WorkspaceParams) -> WireResult:
        return CommandsListResult(commands=command_infos())

    @qwen_request(server, "qwen/command", CommandParams)
    async def on_command(ls: QwenLanguageServer, p: CommandParams) -> WireResult:
        if ls.pending_settings is not None and not ls.pending_settings.done():
            await asyncio.shield(ls.pending_settings)
        workspace = ls.workspace_for(p.workspace_uri)

        async def run_turn(prompt: str, session_id: str | None) -> ChatResult:
            """A turn as ``qwen/chat`` runs one: its events stream as ``qwen/chatEvent`` of the chat."""
            session = await workspace.open_session(session_id)
            turn_id = str(uuid.uuid4())
            with ChatEventStream(ls.protocol.notify, session.id, turn_id, output=ls.output) as stream:
                return await workspace.chat(prompt, session_id=session.id, emit=stream, turn_id=turn_id)

        return await runner.run(workspace, p.text, session_id=p.session_id, run_turn=run_turn, confirm=p.confirm)

    @qwen_request(server, "qwen/files/complete", FileCompletionParams)
    async def on_files_complete(ls: QwenLanguageServer, p: FileCompletionParams) -> WireResult:
        return await ls.workspace_for(p.workspace_uri).complete_files(p.query, p.limit)
