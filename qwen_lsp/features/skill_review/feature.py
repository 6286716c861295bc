"""Skill review as a feature: after a tool-heavy turn, a forked run drafts a skill proposal.

The gate and the proposal store are ``reviewer.py``, the forked run
``fork.py``; this module plugs them into the turn (``after_turn``, each
chat's tool-call count kept on the chat), offers proposals drafted before a
restart when the workspace starts, and lists an accepted proposal at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Collection, Mapping
from pathlib import Path

from ...agent.hooks import Feature, TurnDone
from ...llm.client import ChatClient
from ...agent.hooks import Handler
from ...protocol import SKILL_PROPOSAL_ACCEPT, SKILL_PROPOSAL_DISCARD, SkillProposalAcceptResult, SkillProposalDiscardResult, SkillProposed
from ...sessions.registry import Slot
from ...settings.config import Settings
from ...skills.proposals import ProposalStore
from .fork import SkillReviewForks
from .reviewer import SkillReviewer, ToolCallCount

TOOL_CALLS: Slot[ToolCallCount] = Slot("skill_review.tool_calls", ToolCallCount)


class SkillReviewFeature(Feature):
    name = "skill_review"

    def __init__(
        self,
        root: Path,
        *,
        settings: Callable[[], Settings],
        model: Callable[[], Awaitable[ChatClient]],
        existing_names: Callable[[], Collection[str]],
        on_proposed: Callable[[SkillProposed], None],
        progress: Callable[[str], Callable[[str], None]],
        accepted: Callable[[], Awaitable[None]],
    ) -> None:
        self._settings = settings
        self._accepted = accepted
        self._on_proposed = on_proposed
        self.reviewer = SkillReviewer(
            ProposalStore(root),
            SkillReviewForks(model, workspace_root=root),
            enabled=self._enabled,
            existing_names=existing_names,
            on_proposed=on_proposed,
            progress=progress,
        )

    def _enabled(self) -> bool:
        skills = self._settings().skills
        return skills.enabled and skills.review.enabled

    def after_turn(self, done: TurnDone) -> None:
        outcome = done.outcome
        self.reviewer.after_turn(done.session.slot(TOOL_CALLS), tool_calls=outcome.tool_calls, written=outcome.written, capture=done.capture)

    async def start(self) -> None:
        """Skill proposals drafted before a restart are offered to the editor again."""
        if self._enabled():
            for proposal in await asyncio.to_thread(self.reviewer.pending):
                self._on_proposed(proposal)

    async def accept(self, proposal_id: str) -> SkillProposalAcceptResult:
        """The proposal becomes a project skill, listed at once (not only when the watcher notices)."""
        result = await self.reviewer.accept(proposal_id)
        await self._accepted()
        return result

    async def discard(self, proposal_id: str) -> SkillProposalDiscardResult:
        return await self.reviewer.discard(proposal_id)

    async def drain(self) -> None:
        await self.reviewer.drain()

    def handlers(self) -> Mapping[str, Handler]:
        return {
            SKILL_PROPOSAL_ACCEPT.method: lambda p, _call: self.accept(p.proposal_id),
            SKILL_PROPOSAL_DISCARD.method: lambda p, _call: self.discard(p.proposal_id),
        }
