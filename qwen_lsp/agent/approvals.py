"""Approval of the main chat's writes and commands: ``tools.approvalMode`` as in Qwen Code.

Modes (Qwen Code's ``ApprovalMode``):

* ``plan`` — read-only: the write tools are not offered at all, only
  ``exit_plan_mode`` (``agent/plan_mode.py``), and every turn carries the
  plan-mode reminder;
* ``default`` — every write and every shell command asks first, except a
  read-only shell command (``agent/readonly_shell.py``), as in Qwen Code 0.24.4;
* ``auto-edit`` — writes run without asking, shell commands ask (read-only ones do not);
* ``auto`` — Qwen Code 0.24.4's classifier mode (``agent/auto_mode.py``):
  workspace edits and read-only commands run, anything else is put to a
  classifier side query first: judged safe it runs, judged risky (or when
  the classifier fails) the user is asked, with the classifier's reason;
* ``yolo`` — nothing asks.

"Asking" is the adapter's business (an ``Asker``): the server sends
``qwen/permission`` or ``window/showMessageRequest``, the CLI prompts on the
terminal. The answer is ``allow``, ``allowAlways`` or ``deny``.

"Allow always" covers what was shown, for the rest of the chat: the same
command, character for character, in the same directory, for ``run_shell_command``; the same file
for ``edit``/``write_file`` (the same tool on the same resolved path). Qwen
Code 0.24.4 remembers a shell command's root commands (``git``) and a whole
edit tool; we are narrower on purpose, since "Allow always" on ``git status``
must not let ``git status && touch X`` or ``git config …`` through, nor one
edit of ``a.py`` let an edit of ``.git/hooks/pre-commit`` through. A write
to configuration that changes what git, the tools or the editor do
(``protected_paths``) asks in every mode but ``yolo`` and is never
remembered. Where nobody can be asked, the engine offers ``plan``'s tools
instead (see :func:`offered_mode`), so the model is never handed a tool
every call of which would be refused.

The decision travels with the result (``ToolResult.extra["decision"]``):
``auto`` (the mode allowed it), ``allow``, ``allowAlways`` (asked now or
earlier in this chat) or ``deny``. A denial may carry the user's reason,
which the model reads after Qwen Code's "User did not allow tool call".
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any, Literal

from ..protocol import PermissionDecision as Answer
from ..protocol import PermissionParams
from ..protocol import ToolDecision as Decision
from ..sessions.registry import ChatSession, Slot
from ..visible_text import visible

ApprovalMode = Literal["plan", "default", "auto-edit", "auto", "yolo"]

EDIT_TOOLS = frozenset({"edit", "write_file"})
SHELL_TOOL = "run_shell_command"
PLAN_EXIT_TOOL = "exit_plan_mode"
"""Never "allowed always": each plan is approved on its own (Qwen Code 0.24.4 hides that choice)."""

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
    """One question to the user; :meth:`params` are the ``qwen/permission`` params."""

    session_id: str
    turn_id: str
    tool_call_id: str
    tool: str
    title: str
    path: str | None = None
    diff: str | None = None
    command: str | None = None
    protected: str | None = None
    """Why this write always asks (``protected_paths``); "Allow always" is then taken as "Allow" for this call only."""
    directory: str | None = None
    """Where a shell command runs (absolute, resolved)."""
    plan: str | None = None
    """``exit_plan_mode``'s plan, shown with the question."""

    def shown_title(self) -> str:
        """The title as a person sees it: controls, bidi and zero-width characters written out (``visible_text.py``)."""
        return visible(self.title)

    def shown_command(self) -> str | None:
        """The command as it will run, one shown line per line, every hidden character written out."""
        return None if self.command is None else visible(self.command, keep_newlines=True)

    def params(self) -> PermissionParams:
        """The ``qwen/permission`` params: what will run or change, as a person must see it."""
        return PermissionParams(
            session_id=self.session_id,
            turn_id=self.turn_id,
            tool_call_id=self.tool_call_id,
            tool=self.tool,
            title=self.shown_title(),
            path=self.path,
            diff=self.diff,
            command=self.shown_command(),
            directory=self.directory,
            protected=self.protected,
            plan=self.plan,
        )


@dataclass(frozen=True)
class ToolPermission:
    """What a tool hands to ``ctx.approve``: the turn fills in who and where."""

    tool: str
    title: str
    path: str | None = None
    diff: str | None = None
    command: str | None = None
    protected: str | None = None
    """Set by a write to configuration (``protected_paths.protected_reason``): ask in every mode but yolo, never remember."""
    directory: str | None = None
    """A shell command's working directory: part of what "Allow always" covers (another folder may hold another repository)."""
    read_only: bool = False
    """A shell command ``readonly_shell.is_read_only`` accepts: it runs without asking in every mode that offers it."""
    plan: str | None = None
    """``exit_plan_mode``'s plan, shown with the question."""


Asker = Callable[[PermissionRequest], Awaitable[Approval]]
"""Puts the question to a person; cancelling the await withdraws the question."""
Approve = Callable[[str, ToolPermission], Awaitable[Approval]]
"""``(call id, request)``: what a tool awaits before it changes anything (one turn's, from :meth:`ApprovalPolicy.for_turn`)."""


def offered_mode(mode: ApprovalMode, can_ask: bool) -> ApprovalMode:
    """The mode whose tools are offered: ``plan`` when approvals are needed and nobody can give them."""
    if not can_ask and mode == "default":
        return "plan"
    return mode


def needs_asking(mode: ApprovalMode, tool: str, read_only: bool = False) -> bool:
    if mode == "yolo" or read_only:
        return False
    if mode == "auto-edit":
        return tool not in EDIT_TOOLS
    return True


def always_scope(request: ToolPermission) -> tuple[str, ...]:
    """What "Allow always" on ``request`` covers: the exact command in the same directory, or the tool on the exact path (or title)."""
    if request.command is not None:
        return request.tool, request.command.strip(), request.directory or ""
    return request.tool, request.path if request.path is not None else request.title


ALWAYS: Slot[set[tuple[str, ...]]] = Slot("approvals", set)
"""The scopes (:func:`always_scope`) a chat's user allowed "always", kept on the chat."""


Classify = Callable[[ChatSession, str, ToolPermission], Awaitable[tuple[bool, str]]]
"""``(chat, call id, request)`` → ``(runs without asking, why not)``: ``auto`` mode's judge (``agent/auto_mode.py``)."""


class ApprovalPolicy:
    """How one workspace decides: its approval mode, and each chat's "allow always" scopes (:func:`always_scope`, on the chat)."""

    def __init__(self, mode: Callable[[], ApprovalMode], classify: Classify | None = None) -> None:
        self._mode = mode
        self._classify = classify

    async def decide(self, session: ChatSession, turn_id: str, call_id: str, ask: Asker | None, request: ToolPermission) -> Approval:
        always = session.slot(ALWAYS)
        mode = self._mode()
        if mode == "yolo" or (request.protected is None and not needs_asking(mode, request.tool, request.read_only)):
            return Approval("auto")
        scope = always_scope(request)
        if request.protected is None and scope in always:
            return Approval("allowAlways")
        if mode == "auto" and self._classify is not None:
            runs, why = await self._classify(session, call_id, request)
            if runs:
                return Approval("auto")
            request = replace(request, title=f"{request.title} (auto mode: {why})"[:300])
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
                protected=request.protected,
                directory=request.directory,
                plan=request.plan,
            )
        )
        if answer.decision == "allowAlways" and request.protected is not None:
            return Approval("allow")
        if answer.decision == "allowAlways" and request.tool != PLAN_EXIT_TOOL:  # its allowAlways picks auto-edit, never remembered
            always.add(scope)
        return answer if answer.decision in ("allow", "allowAlways") else Approval("deny", answer.reason)

    def for_turn(self, session: ChatSession, turn_id: str, ask: Asker | None) -> Approve:
        async def approve(call_id: str, request: ToolPermission) -> Approval:
            return await self.decide(session, turn_id, call_id, ask, request)

        return approve
