"""``qwen/skillProposal/accept`` and ``qwen/skillProposal/discard``: the user's answer to ``qwen/skillProposed``."""

from __future__ import annotations

from ..protocol import SkillProposalParams, WireResult
from .app import QwenLanguageServer
from .requests import qwen_request


def register(server: QwenLanguageServer) -> None:
    @qwen_request(server, "qwen/skillProposal/accept", SkillProposalParams)
    async def on_accept(ls: QwenLanguageServer, p: SkillProposalParams) -> WireResult:
        return await ls.workspace_for(p.workspace_uri).skill_review.accept(p.proposal_id)

    @qwen_request(server, "qwen/skillProposal/discard", SkillProposalParams)
    async def on_discard(ls: QwenLanguageServer, p: SkillProposalParams) -> WireResult:
        return await ls.workspace_for(p.workspace_uri).skill_review.discard(p.proposal_id)
