"""Glue for the selection's code actions: "Remember this convention" (its command is the memory feature's) and "Add to QWEN.md"."""

from __future__ import annotations

import asyncio
from typing import Any

from lsprotocol import types
from pygls.capabilities import get_capability

from ..protocol import ADD_TO_PROJECT_RULES, REMEMBER_SELECTION, AddToProjectRulesResult
from .app import QwenLanguageServer
from .models import parse


def register(server: QwenLanguageServer) -> None:
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
