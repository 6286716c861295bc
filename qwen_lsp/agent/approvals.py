"""Approval of the main chat's writes and commands: ``tools.approvalMode`` as in Qwen Code.

Modes (Qwen Code's ``ApprovalMode``):

* ``plan`` — read-only: the write tools are not offered at all;
* ``default`` — every write and every shell command asks first;
* ``auto-edit`` — writes run without asking, shell commands ask;
* ``yolo`` — nothing asks.

"Asking" is the adapter's business (an ``Asker``): the server sends
``qwen/permission`` or ``window/showMessageRequest``, the CLI prompts on the
terminal. The answer is ``allow``, ``allowAlways`` (this tool runs without
asking for the rest of the chat, as Qwen Code's "always allow" does) or
``deny``. Where nobody can be asked, the engine offers ``plan``'s tools
instead (see :func:`offered_mode`), so the model is never handed a tool
every call of which would be refused.

The decision travels with the result (``ToolResult.extra["decision"]``):
``auto`` (the mode allowed it), ``allow``, ``allowAlways`` (asked now or
earlier in this chat) or ``deny``. A denial may carry the user's reason,
which the model reads after Qwen Code's "User did not allow tool call".
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

from ..sessions.registry import ChatSession, Slot

ApprovalMode = Literal["plan", "default", "auto-edit", "yolo"]
Answer = Literal["allow", "allowAlways", "deny"]
Decision = Literal["auto", "allow", "allowAlways", "deny"]

EDIT_TOOLS = frozenset({"edit", "write_file"})
SHELL_TOOL = "run_shell_command"

DECLINED = "[Operation Cancelled] Reason: User did not allow tool call"
"""What the model reads when the user says no (Qwen Code's text for a declined call)."""
MAX_REASON_CHARS = 2000


@dataclass(frozen=True)
class Approval:
    """An answer: the decision, and for a denial the user's optional reason."""

    decision: Decision
    reason: str = ""

    def refusal(self) -> str:
        """The tool error the model reads for a denial."""
        reason = self.reason.strip()[:MAX_REASON_CHARS]
        return f"{DECLINED}. The user said: {reason}" if reason else DECLINED


@dataclass(frozen=True)
class PermissionRequest:
    """One question to the user; ``wire()`` is the ``qwen/permission`` params."""

    session_id: str
    turn_id: str
    tool_call_id: str
    tool: str
    title: str
    path: str | None = None
    diff: str | None = None
    command: str | None = None

    def wire(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "sessionId": self.session_id,
            "turnId": self.turn_id,
            "toolCallId": self.tool_call_id,
            "tool": self.tool,
            "title": self.title,
        }
        for key, value in (("path", self.path), ("diff", self.diff), ("command", self.command)):
            if value is not None:
                out[key] = value
        return out


@dataclass(frozen=True)
class ToolPermission:
    """What a tool hands to ``ctx.approve``: the turn fills in who and where."""

    tool: str
    title: str
    path: str | None = None
    diff: str | None = None
    command: str | None = None


Asker = Callable[[PermissionRequest], Awaitable[Approval]]
"""Puts the question to a person; cancelling the await withdraws the question."""
Approve = Callable[[str, ToolPermission], Awaitable[Approval]]
"""``(call id, request)``: what a tool awaits before it changes anything (one turn's, from :meth:`ApprovalPolicy.for_turn`)."""


def offered_mode(mode: ApprovalMode, can_ask: bool) -> ApprovalMode:
    """The mode whose tools are offered: ``plan`` when approvals are needed and nobody can give them."""
    if not can_ask and mode == "default":
        return "plan"
    return mode


def needs_asking(mode: ApprovalMode, tool: str) -> bool:
    if mode == "yolo":
        return False
    if mode == "auto-edit":
        return tool not in EDIT_TOOLS
    return True


ALWAYS: Slot[set[str]] = Slot("approvals", set)
"""The tools a chat's user allowed "always", kept on the chat."""


class ApprovalPolicy:
    """How one workspace decides: its approval mode, and each chat's "allow always" tools (on the chat)."""

    def __init__(self, mode: Callable[[], ApprovalMode]) -> None:
        self._mode = mode

    async def decide(self, session: ChatSession, turn_id: str, call_id: str, ask: Asker | None, request: ToolPermission) -> Approval:
        always = session.slot(ALWAYS)
        if not needs_asking(self._mode(), request.tool):
            return Approval("auto")
        if request.tool in always:
            return Approval("allowAlways")
        if ask is None:
            return Approval("deny")
        answer = await ask(
            PermissionRequest(
                session_id=session.id,
                turn_id=turn_id,
                tool_call_id=call_id,
                tool=request.tool,
                title=request.title,
                path=request.path,
                diff=request.diff,
                command=request.command,
            )
        )
        if answer.decision == "allowAlways":
            always.add(request.tool)
        return answer if answer.decision in ("allow", "allowAlways") else Approval("deny", answer.reason)

    def for_turn(self, session: ChatSession, turn_id: str, ask: Asker | None) -> Approve:
        async def approve(call_id: str, request: ToolPermission) -> Approval:
            return await self.decide(session, turn_id, call_id, ask, request)

        return approve
