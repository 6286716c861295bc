"""Glue for ``qwen/memory/*``: parse, call the workspace's memory, answer."""

from __future__ import annotations

from pathlib import Path

from ..protocol import ForgetCandidatesParams, ForgetParams, MemoryListParams, RememberParams, WireResult
from .app import QwenLanguageServer
from .requests import qwen_request


def register(server: QwenLanguageServer) -> None:
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
