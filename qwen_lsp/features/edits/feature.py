"""Edits as a feature: the write tools the approval mode offers, and who approves each write.

The tools are ``tools.py`` (and the agent's shell tool), chosen by
``offer.py``; the approval policy is the agent's, with each chat's "allow
always" grants kept on the chat. When nobody could approve (the client
cannot ask), the chat is read-only and the user is told once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ...agent.approvals import ApprovalPolicy, Approve, Asker, offered_mode
from ...agent.hooks import Feature, Turn
from ...agent.tool import Tool
from ...settings.config import Settings
from .offer import write_tools

PLAN_MODE_WARNING = (
    "Qwen: this editor cannot ask for approval, so the chat is read-only (plan mode). "
    "Set tools.approvalMode to auto-edit or yolo to let it edit files without asking."
)


class EditsFeature(Feature):
    name = "edits"

    def __init__(self, *, settings: Callable[[], Settings], ask: Asker | None, warning: Callable[[str], None]) -> None:
        self._settings = settings
        self._ask = ask
        self._warning = warning
        self._warned = False
        self.approvals = ApprovalPolicy(lambda: settings().tools.approval_mode)
        self._tools: list[Tool] = []
        self.settings_changed()

    def tools(self) -> Sequence[Tool]:
        return self._tools

    def settings_changed(self) -> None:
        """Offer the write tools of the new approval mode; warn once when nobody could approve."""
        tools = self._settings().tools
        if offered_mode(tools.approval_mode, self._ask is not None) != tools.approval_mode and not self._warned:
            self._warned = True
            self._warning(PLAN_MODE_WARNING)
        self._tools = write_tools(tools.approval_mode, can_ask=self._ask is not None, shell_enabled=tools.shell.enabled)

    def approver(self, turn: Turn) -> Approve:
        return self.approvals.for_turn(turn.session, turn.turn_id, self._ask)
