"""Edits as a feature: the write tools the approval mode offers, and who approves each write.

The tools are the agent's approved ``edit``/``write_file`` (``agent/tools/approved.py``) and shell tool, chosen by
``offer.py``; the approval policy is the agent's, with each chat's "allow
always" grants kept on the chat. When nobody could approve (the client
cannot ask), the chat is read-only and the user is told once.

Plan mode (``features/edits/plan_mode.py``) lives here too: in ``plan`` the only
write tool is ``exit_plan_mode``, every turn carries 0.24.4's plan-mode
reminder (sent, not recorded), and an approved plan switches the mode; that
switch lies over the editor's mode until the editor picks another. In
``auto`` mode the classifier (``features/edits/auto_mode.py``) judges each call on the
chat's own history. An approved shell command that writes a secret into
team memory has it undone (``shell_guard.py``).
"""

from __future__ import annotations

import tempfile
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

from ...agent.approvals import ApprovalMode, ApprovalPolicy, Approve, Asker, ToolPermission, offered_mode
from .auto_mode import classify, fast_path
from ...agent.hooks import Feature, Turn
from .plan_mode import ExitPlanModeTool, reminder
from ...agent.tool import Tool
from ...llm.client import ChatClient
from ...sessions.registry import ChatSession
from ...settings.config import Settings
from ...shell.run import BackgroundJobs
from .offer import write_tools
from .shell_guard import team_memory_guard

PLAN_MODE_WARNING = (
    "Qwen: this editor cannot ask for approval, so the chat is read-only (plan mode). "
    "Set tools.approvalMode to auto-edit or yolo to let it edit files without asking."
)


class EditsFeature(Feature):
    name = "edits"

    def __init__(
        self,
        root: Path,
        *,
        settings: Callable[[], Settings],
        ask: Asker | None,
        warning: Callable[[str], None],
        model: Callable[[], Awaitable[ChatClient]],
        switch_mode: Callable[[ApprovalMode], None],
    ) -> None:
        self._root = root
        self._settings = settings
        self._ask = ask
        self._warning = warning
        self._model = model
        self._warned = False
        self._shell_guard = team_memory_guard(root)
        self._plan_exit = ExitPlanModeTool(lambda: settings().tools.approval_mode, switch_mode)
        self.approvals = ApprovalPolicy(lambda: settings().tools.approval_mode, classify=self._auto_mode_judge)
        self._tools: list[Tool] = []
        self._jobs: dict[str, BackgroundJobs] = {}
        self._jobs_root: Path | None = None
        self.settings_changed()

    def tools(self) -> Sequence[Tool]:
        return self._tools

    def settings_changed(self) -> None:
        """Offer the write tools of the new approval mode; warn once when nobody could approve."""
        settings = self._settings()
        tools = settings.tools
        if offered_mode(tools.approval_mode, self._ask is not None) != tools.approval_mode and not self._warned:
            self._warned = True
            self._warning(PLAN_MODE_WARNING)
        self._tools = write_tools(
            tools.approval_mode,
            can_ask=self._ask is not None,
            shell_enabled=tools.shell.enabled,
            core=tools.core,
            exclude=tools.exclude,
            secrets=(settings.api_key(),),
            plan_exit=self._plan_exit,
            shell_guard=self._shell_guard,
            jobs=self._jobs_for,
        )

    def _jobs_for(self, chat_id: str) -> BackgroundJobs:
        """The chat's background commands; their output goes under a private temporary folder of this server's
        (``mkdtemp``: mode 0700, a new name, so nobody else's folder is written into)."""
        jobs = self._jobs.get(chat_id)
        if jobs is None:
            if self._jobs_root is None:
                self._jobs_root = Path(tempfile.mkdtemp(prefix="qwen-lsp-shells-"))
            safe = "".join(c for c in chat_id if c.isalnum() or c in "-_")[:64] or "chat"
            jobs = self._jobs[chat_id] = BackgroundJobs(self._jobs_root / safe)
        return jobs

    async def start(self) -> None:
        """The editor is listening now: the warning that nobody can approve writes reaches it."""
        self.settings_changed()

    async def chat_deleted(self, session_id: str) -> None:
        jobs = self._jobs.pop(session_id, None)
        if jobs is not None:
            await jobs.stop_all()

    async def drain(self) -> None:
        """The server is stopping: every chat's background commands go with it."""
        jobs, self._jobs = list(self._jobs.values()), {}
        for job in jobs:
            await job.stop_all()

    def reminders(self, turn: Turn) -> list[str]:
        """0.24.4's plan-mode reminder, every turn in ``plan`` mode (``features/edits/plan_mode.py``)."""
        if self._settings().tools.approval_mode != "plan":
            return []
        return [reminder(can_exit=self._ask is not None)]

    def approver(self, turn: Turn) -> Approve:
        return self.approvals.for_turn(turn.session, turn.turn_id, self._ask)

    async def _auto_mode_judge(self, session: ChatSession, call_id: str, request: ToolPermission) -> tuple[bool, str]:
        """``auto`` mode: the edit fast path, else the classifier side query on this chat (``features/edits/auto_mode.py``)."""
        if fast_path(request, self._root):
            return True, ""
        verdict = await classify(await self._model(), session.history, call_id, self._root)
        return verdict.runs, verdict.reason
