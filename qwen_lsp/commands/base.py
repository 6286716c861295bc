"""What every command family shares: the invocation it gets, the outcomes it returns, the confirmations it asks.

A command gets an :class:`Invocation` (the workspace, the chat, its arguments, and a way to send
a prompt to the model as a turn of that chat) and returns a
:class:`~qwen_lsp.protocol.CommandResult`. Asking first (``/init`` over an existing QWEN.md,
``/forget`` before it removes) is a :class:`Confirmations` token: the client sends the same line
again with it, and what was decided the first time (the files ``/forget`` chose) is what happens.
"""

from __future__ import annotations

import secrets
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..protocol import ChatResult, CommandResult

if TYPE_CHECKING:
    from ..workspace import Workspace

RunTurn = Callable[[str, "str | None"], Awaitable[ChatResult]]
"""``run_turn(prompt, session_id)``: one chat turn, its events streamed to the client."""


@dataclass
class Invocation:
    workspace: Workspace
    name: str
    args: str
    line: str
    session_id: str | None
    run_turn: RunTurn
    confirmed: Any = None
    """What the first call stored with its confirmation token (None: not confirmed)."""
    state: CommandState = field(default_factory=lambda: CommandState())

    def done(self, text: str, **extra: Any) -> CommandResult:
        return CommandResult(status="done", text=text, command=self.name, **extra)

    def error(self, text: str, **extra: Any) -> CommandResult:
        return CommandResult(status="error", text=text, command=self.name, **extra)

    def ask(self, question: str, keep: Any = True) -> CommandResult:
        """Ask before acting; ``keep`` is handed back as :attr:`confirmed` when the user says yes."""
        token = self.state.confirmations.issue(self.workspace, self.line, keep)
        return CommandResult(status="confirm", text=question, command=self.name, confirm=token, session_id=self.session_id)

    async def prompt(self, text: str, *, shown: str, **extra: Any) -> CommandResult:
        """Send ``text`` to the model as a turn of this chat (0.24.4's ``submit_prompt``)."""
        chat = await self.run_turn(text, self.session_id)
        return CommandResult(status="done", text=shown, command=self.name, chat=chat, session_id=chat.session_id, **extra)


MAX_PENDING = 64
"""Unanswered confirmations kept per server; the oldest goes first (a client that never answers)."""


class Confirmations:
    """Single-use tokens for commands that ask first, each bound to its workspace and its exact line."""

    def __init__(self) -> None:
        self._pending: OrderedDict[str, tuple[int, str, Any]] = OrderedDict()

    def issue(self, workspace: object, line: str, keep: Any) -> str:
        token = secrets.token_hex(16)
        self._pending[token] = (id(workspace), line.strip(), keep)
        while len(self._pending) > MAX_PENDING:
            self._pending.popitem(last=False)
        return token

    def take(self, token: str, workspace: object, line: str) -> Any:
        """What was kept with ``token`` if it was issued for this workspace and line (then it is spent), else None."""
        entry = self._pending.get(token)
        if entry is None or entry[0] != id(workspace) or entry[1] != line.strip():
            return None
        del self._pending[token]
        return entry[2]


@dataclass
class CommandState:
    """What commands keep between calls: pending confirmations, the mode ``/plan`` left."""

    confirmations: Confirmations = field(default_factory=Confirmations)
    pre_plan_mode: dict[int, str] = field(default_factory=dict)
    """Per workspace (``id``): the approval mode before ``/plan``, restored by ``/plan exit``."""


Handler = Callable[[Invocation], Awaitable[CommandResult]]


@dataclass(frozen=True)
class Command:
    name: str
    description: str
    run: Handler
    argument_hint: str | None = None
    alt_names: tuple[str, ...] = ()
    one_shot: bool = False
    """Runs in a one-shot ``qwen-lsp chat "/…"``, as in Qwen Code 0.24.4's ``qwen -p "/…"`` (the others are
    "not supported in this mode" there; checked against the CLI)."""
