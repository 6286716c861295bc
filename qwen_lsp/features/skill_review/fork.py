"""The agent side of skill review: its tools, the rule that allows one file, and the fork.

Implements :class:`qwen_lsp.features.skill_review.reviewer.SkillReviewRunner`. A review runs
in a fork of the chat's last turn (``fork.py``: same system prompt, same
tools array, so the prompt cache hits) with the read tools, confined to
the workspace as in the chat (Qwen Code's review may read only inside the
project, so nothing from elsewhere ends up in a skill), and ``write_file``.

Its permission rule (``ManagedSkillReview``, after Qwen Code's) is stricter
than Qwen Code's, because here the review drafts a proposal rather than a
skill: ``write_file`` may write exactly the proposal's own SKILL.md in the
pending area, resolved through symlinks, and nothing else; every tool other
than the read tools is refused (no ``edit``, no shell, no memory, no skill
invocation), also a tool the parent's array declares. The write itself
goes through the proposal store, which refuses a draft that does not parse
as a SKILL.md, so the model sees why and can fix it within its budget.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from ...memory.forking import PATH_KEYS
from ...memory.paths import realpath_nearest_existing
from .reviewer import OPEN_CALL_NOTE, ReviewReport
from ...agent.fork import ParentRequest, run_fork
from ...agent.loop import StreamingModel
from ...agent.permissions import NO_OPINION, Decision, PermissionRule, Permissions, Verdict
from ...agent.tool import Tool
from ...agent.tools import read_only_tools
from ...agent.tools.write_file import WriteFileTool

ModelFactory = Callable[[], Awaitable[StreamingModel]]
READ_TOOLS = frozenset(t.name for t in read_only_tools())
WRITE_FILE = WriteFileTool.name


def skill_review_rule(target: Path) -> PermissionRule:
    """Read tools as in the chat; ``write_file`` only to ``target``; every other tool refused."""
    allowed = realpath_nearest_existing(target)
    only_target = Verdict(Decision.DENY, f"ManagedSkillReview(write_file: only {target})")

    def rule(tool: str, args: Mapping[str, Any]) -> Verdict:
        if tool in READ_TOOLS:
            return NO_OPINION
        if tool != WRITE_FILE:
            return Verdict(Decision.DENY, f"ManagedSkillReview({tool}: not available in a skill review; it may only write {target})")
        raw = next((args[k] for k in PATH_KEYS if isinstance(args.get(k), str) and args[k].strip()), None)
        if raw is None or "\x00" in raw or not os.path.isabs(raw.strip()):
            return only_target
        try:
            real = realpath_nearest_existing(Path(os.path.normpath(raw.strip())))
        except (OSError, RuntimeError):
            return only_target
        if real != allowed:
            return only_target
        return Verdict(Decision.ALLOW, f"ManagedSkillReview(write_file: {target})")

    return rule


def skill_review_tools(write: Callable[[Path, str], None]) -> list[Tool]:
    return [*read_only_tools(), WriteFileTool(write)]


class SkillReviewForks:
    """Runs skill reviews on the workspace's current model, in ``workspace_root``."""

    def __init__(self, model: ModelFactory, *, workspace_root: Path) -> None:
        self._model = model
        self._workspace = workspace_root

    async def __call__(
        self,
        parent: ParentRequest,
        task: str,
        *,
        target: Path,
        write: Callable[[Path, str], None],
        max_turns: int,
        max_seconds: float,
        cancel: asyncio.Event,
    ) -> ReviewReport:
        fork = await run_fork(
            await self._model(),
            parent,
            task,
            root=self._workspace,
            tools=skill_review_tools(write),
            permissions=Permissions((skill_review_rule(target),)),
            max_turns=max_turns,
            max_seconds=max_seconds,
            cancel=cancel,
            open_call_note=OPEN_CALL_NOTE,
        )
        return ReviewReport(status=fork.status, reason=fork.reason)
