"""Glue for ``qwen/skills/list``."""

from __future__ import annotations

from ..protocol import WireResult, WorkspaceParams
from ..skills.report import skills_list_result
from .app import QwenLanguageServer
from .requests import qwen_request


def register(server: QwenLanguageServer) -> None:
    @qwen_request(server, "qwen/skills/list", WorkspaceParams)
    async def on_skills_list(ls: QwenLanguageServer, p: WorkspaceParams) -> WireResult:
        return skills_list_result(ls.workspace_for(p.workspace_uri).skills)
