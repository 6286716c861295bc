"""Approval of the main chat's writes and commands: ``tools.approvalMode`` as in Qwen Code.

Modes (Qwen Code's ``ApprovalMode``):

* ``plan`` — read-only: the write tools are not offered at all, only
  ``exit_plan_mode`` (``features/edits/plan_mode.py``), and every turn carries the
  plan-mode reminder;
* ``default`` — every write and every shell command asks first, except a
  read-only shell command (``shell/analysis.py``), as in Qwen Code 0.24.4;
* ``auto-edit`` — writes run without asking, shell commands ask (read-only ones do not);
* ``auto`` — Qwen Code 0.24.4's classifier mode (``features/edits/auto_mode.py``):
  workspace edits and read-only commands run, anything else is put to a
  classifier side query first: judged safe it runs, judged risky (or when
  the classifier fails) the user is asked, with the classifier's reason;
* ``yolo`` — nothing asks.

"Asking" is the adapter's business (an ``Asker``): the server sends
``qwen/permission`` or ``window/showMessageRequest``, the CLI prompts on the
terminal. The answer is ``allow``, ``allowAlways`` or ``deny``.

"Allow always" covers what was shown, for the rest of the chat: for
``run_shell_command`` Qwen Code 0.24.4's command-prefix rules
(``extractCommandRules``: ``git commit *``, ``npm run *``, ``ls *``) of the
parts of the command that were not read-only, each said in words on the card
(``qwen/permission``'s ``alwaysCovers``) — a later command runs without asking
when it parses as plain (``shell/syntax.py``) and every part of it is
read-only or matches one of the chat's rules; for ``edit``/``write_file`` the
same tool on the same resolved path (0.24.4 remembers the whole tool; one
edit of ``a.py`` must not let an edit of ``.git/hooks/pre-commit``
through). A write to configuration that changes what git, the tools or the
editor do (``protected_paths``) asks in every mode but ``yolo``, is never
remembered, and is never answered by ``auto`` mode's classifier: a person
answers it. Where nobody can be asked, the engine offers ``plan``'s tools
instead (see :func:`offered_mode`), so the model is never handed a tool
every call of which would be refused.

In ``plan`` mode ``run_shell_command`` follows 0.24.4's plan-mode shell
policy (``plan-mode-shell-policy.ts``): a read-only command runs, one known
to change something is refused with 0.24.4's message, any other asks for
this one invocation (never "always").

The decision travels with the result (``ToolResult.extra["decision"]``):
``auto`` (the mode allowed it), ``allow``, ``allowAlways`` (asked now or
earlier in this chat) or ``deny``. A denial may carry the user's reason,
which the model reads after Qwen Code's "User did not allow tool call";
one without ends the turn, as in 0.24.4 (:meth:`Approval.denial_extra`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any, Literal

from ..protocol import PermissionDecision as Answer
from ..protocol import PermissionParams
from ..protocol import ToolDecision as Decision
from ..sessions.registry import ChatSession, Slot
from ..text.visible import visible

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
    """An answer: the decision, and for a denial the user's optional reason (or the policy's own message)."""

    decision: Decision
    reason: str = ""
    message: str | None = None
    """A refusal nobody typed (plan mode's), read by the model as it is."""
    by_user: bool = False
    """A person was asked and said no (not: nobody could be asked)."""

    def refusal(self) -> str:
        """The tool error the model reads for a denial."""
        if self.message is not None:
            return self.message
        reason = self.reason.strip()[:MAX_REASON_CHARS]
        return f"{DECLINED}. The user said: {reason}" if reason else DECLINED

    def denial_extra(self) -> dict[str, object]:
        """``ToolResult.extra`` for a denial: a plain "no" ends the turn (``stop``), as in Qwen Code 0.24.4.

        0.24.4 ends the turn when the user cancels a permission request (ACP's
        ``stopAfterPermissionCancel``; the terminal UI's "all tools cancelled"):
        the model is not asked again until the user writes. A denial with the
        user's words goes back to the model at once instead: the CLI has no
        such answer, and the words are the user's next message (docs/interop.md).
        """
        if self.reason.strip() or not self.by_user:
            return {"decision": "deny"}
        return {"decision": "deny", "stop": True}


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
    always_covers: str | None = None
    """In words, what "Allow always" would cover; None when it is not offered for this call."""

    def shown_title(self) -> str:
        """The title as a person sees it: controls, bidi and zero-width characters written out (``text/visible.py``)."""
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
            always_covers=self.always_covers,
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
    """A shell command the analyser (``shell/analysis.py``) finds read-only: it runs without asking in every mode."""
    writes: bool = False
    """A shell command the analyser knows changes something: plan mode refuses it without asking."""
    rules: tuple[str, ...] = ()
    """A shell command's "Allow always" rules (``shell/rules.py``), e.g. ``("git commit *",)``."""
    covered: Callable[[frozenset[str]], bool] | None = None
    """Whether a chat's allowed rules already cover this shell command (``shell/rules.py``)."""
    plan: str | None = None
    """``exit_plan_mode``'s plan, shown with the question."""
    shown_path: str | None = None
    """``path`` as the user reads it (workspace-relative), for the words on the card."""


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
    """What "Allow always" on an edit covers: the tool on the exact path (or title)."""
    return request.tool, request.path if request.path is not None else request.title


ONLY_THIS = "Nothing beyond this one: {why}, so it asks every time (Allow always counts as Allow)"
PLAN_SHELL_COVERS = ONLY_THIS.format(why="in plan mode a command that is not read-only")
"""Plan mode's shell question: "always" is never remembered there (:meth:`ApprovalPolicy._plan_shell`)."""
PLAN_EXIT_COVERS = "Approves the plan and switches the approval mode to auto-edit: edits then run without asking, commands still ask"
"""``exit_plan_mode``'s "always" picks auto-edit (``features/edits/plan_mode.py``), as Qwen Code 0.24.4's "auto-accept edits"."""
_WHAT = {"edit": "edit (the edit tool) of {path}", "write_file": "whole-file write (write_file) of {path}"}


def always_covers(request: ToolPermission) -> str:
    """The words on the card beside "Allow always": exactly what :meth:`ApprovalPolicy._remember` keeps for this chat
    (:func:`always_scope`, the shell rules), or that nothing is kept and why. One source: the panel, Neovim's
    message and the CLI's prompt all show these words."""
    if request.protected is not None:
        return ONLY_THIS.format(why=request.protected)
    if request.tool == PLAN_EXIT_TOOL:
        return PLAN_EXIT_COVERS
    if request.tool == SHELL_TOOL:
        if not request.rules:
            return ONLY_THIS.format(why="this command cannot be read as a plain command")
        return "Commands matching " + ", ".join(f"'{rule}'" for rule in request.rules) + " in this chat"
    target = request.shown_path or request.path
    if target is None:
        return f"Every {request.tool} call titled “{request.title}” in this chat; other {request.tool} calls still ask"
    what = _WHAT.get(request.tool, request.tool + " call for {path}").format(path=target)
    return f"Every {what} in this chat; other files and other tools still ask"


ALWAYS: Slot[set[tuple[str, ...]]] = Slot("approvals", set)
"""The edit scopes (:func:`always_scope`) a chat's user allowed "always", kept on the chat."""
SHELL_RULES: Slot[set[str]] = Slot("shell-rules", set)
"""The shell prefix rules (``git commit *``) a chat's user allowed "always"."""

PLAN_WRITE_BLOCKED = (
    "Plan mode blocked this shell command because it was classified as state-modifying. Do not retry it through "
    "wrappers or obfuscation; continue read-only investigation and include the action in the plan."
)
PLAN_NO_APPROVAL = (
    "Plan mode could not determine whether this shell command is read-only, and no approval surface is available. "
    "The command was not run; Plan mode remains active."
)
"""0.24.4's plan-mode shell messages (``plan-mode-shell-policy.ts``)."""


Classify = Callable[[ChatSession, str, ToolPermission], Awaitable[tuple[bool, str]]]
"""``(chat, call id, request)`` → ``(runs without asking, why not)``: ``auto`` mode's judge (``features/edits/auto_mode.py``)."""


class ApprovalPolicy:
    """How one workspace decides: its approval mode, and each chat's "allow always" scopes (:func:`always_scope`, on the chat)."""

    def __init__(self, mode: Callable[[], ApprovalMode], classify: Classify | None = None) -> None:
        self._mode = mode
        self._classify = classify

    async def decide(self, session: ChatSession, turn_id: str, call_id: str, ask: Asker | None, request: ToolPermission) -> Approval:
        mode = self._mode()
        if mode == "plan" and request.tool == SHELL_TOOL:
            return await self._plan_shell(session, turn_id, call_id, ask, request)
        if mode == "yolo" or (request.protected is None and not needs_asking(mode, request.tool, request.read_only)):
            return Approval("auto")
        if request.protected is None and await self._remembered(session, request):
            return Approval("allowAlways")
        if mode == "auto" and self._classify is not None and request.protected is None:  # a person answers the protected question
            runs, why = await self._classify(session, call_id, request)
            if runs:
                return Approval("auto")
            request = replace(request, title=f"{request.title} (auto mode: {why})"[:300])
        if ask is None:
            return Approval("deny")
        answer = await ask(self._question(session, turn_id, call_id, request, always_covers(request)))
        if answer.decision == "allowAlways" and (request.protected is not None or request.tool == PLAN_EXIT_TOOL):
            return Approval("allow") if request.protected is not None else answer  # exit_plan_mode's picks auto-edit
        if answer.decision == "allowAlways":
            self._remember(session, request)
        return answer if answer.decision in ("allow", "allowAlways") else Approval("deny", answer.reason, by_user=answer.by_user)

    async def _plan_shell(self, session: ChatSession, turn_id: str, call_id: str, ask: Asker | None, request: ToolPermission) -> Approval:
        """0.24.4's plan-mode shell policy: read-only runs, a known write is refused, anything else asks once."""
        if request.read_only:
            return Approval("auto")
        if request.writes:
            return Approval("deny", message=PLAN_WRITE_BLOCKED)
        if ask is None:
            return Approval("deny", message=PLAN_NO_APPROVAL)
        answer = await ask(self._question(session, turn_id, call_id, request, PLAN_SHELL_COVERS))
        if answer.decision in ("allow", "allowAlways"):
            return Approval("allow")
        return Approval("deny", answer.reason, by_user=answer.by_user)

    @staticmethod
    async def _remembered(session: ChatSession, request: ToolPermission) -> bool:
        if request.tool == SHELL_TOOL:
            allowed: set[str] = session.slot(SHELL_RULES)
            rules = frozenset(allowed)
            # the check stats files and may read git's configuration: off the event loop
            return bool(rules) and request.covered is not None and await asyncio.to_thread(request.covered, rules)
        return always_scope(request) in session.slot(ALWAYS)

    @staticmethod
    def _remember(session: ChatSession, request: ToolPermission) -> None:
        if request.tool == SHELL_TOOL:
            session.slot(SHELL_RULES).update(request.rules)
        else:
            session.slot(ALWAYS).add(always_scope(request))

    @staticmethod
    def _question(session: ChatSession, turn_id: str, call_id: str, request: ToolPermission, covers: str | None) -> PermissionRequest:
        return PermissionRequest(
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
            always_covers=covers,
        )

    def for_turn(self, session: ChatSession, turn_id: str, ask: Asker | None) -> Approve:
        async def approve(call_id: str, request: ToolPermission) -> Approval:
            return await self.decide(session, turn_id, call_id, ask, request)

        return approve
