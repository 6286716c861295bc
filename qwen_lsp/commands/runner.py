"""Dispatch a typed line: a known command runs, an unknown one is named with the list, a path goes to the model.

Qwen Code 0.24.4 answers an unknown ``/word`` with "Unknown command: /word"; the list of commands
follows here, since a panel or Neovim user has no completion menu to look at. ``/help`` lists
them too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..protocol import CommandInfo, CommandResult
from . import chat_cmds, export, memory_cmds, mode_cmds, project_cmds
from .base import Command, CommandState, Invocation, RunTurn
from .parse import is_slash_command, split

if TYPE_CHECKING:
    from ..workspace import Workspace


async def _help(inv: Invocation) -> CommandResult:
    listing = "\n".join(f"/{c.name}  {c.description}" for c in TABLE)
    return inv.done(f"Commands:\n{listing}", commands=command_infos())


TABLE: tuple[Command, ...] = (
    *project_cmds.COMMANDS,
    *memory_cmds.COMMANDS,
    *chat_cmds.COMMANDS,
    *export.COMMANDS,
    *mode_cmds.COMMANDS,
    Command("help", "List the commands.", _help, alt_names=("?",)),
)
_BY_NAME = {name: c for c in TABLE for name in (c.name, *c.alt_names)}


def command_infos() -> list[CommandInfo]:
    return [
        CommandInfo(name=c.name, description=c.description, argument_hint=c.argument_hint, alt_names=list(c.alt_names) or None)
        for c in TABLE
    ]


class CommandRunner:
    """One per server: the confirmations and ``/plan``'s remembered modes live here between calls."""

    def __init__(self) -> None:
        self.state = CommandState()

    async def run(
        self, workspace: Workspace, line: str, *, session_id: str | None, run_turn: RunTurn, confirm: str | None = None, one_shot: bool = False
    ) -> CommandResult:
        """``one_shot``: a ``qwen-lsp chat "/…"`` run, answered as Qwen Code 0.24.4's ``qwen -p`` answers: only the
        commands marked ``one_shot`` run, the others are not supported in this mode, an unknown one goes to the model."""
        invoked = split(line) if is_slash_command(line) else None
        command = _BY_NAME.get(invoked.name) if invoked is not None else None
        if invoked is None or (command is None and one_shot):
            chat = await run_turn(line, session_id)  # a path such as "/usr/lib is missing": a message for the model
            return CommandResult(status="done", text="", chat=chat, session_id=chat.session_id)
        if one_shot and command is not None and not command.one_shot:
            return CommandResult(status="error", text=f'The command "/{invoked.name}" is not supported in this mode.', command=command.name, session_id=session_id)
        if command is None:
            listing = ", ".join(f"/{c.name}" for c in TABLE)
            return CommandResult(
                status="error", text=f"Unknown command: {line.strip()[:200]}\nCommands: {listing}", commands=command_infos(), session_id=session_id
            )
        confirmed = self.state.confirmations.take(confirm, workspace, line) if confirm else None
        if confirm and confirmed is None:
            return CommandResult(status="error", text="That confirmation has expired: run the command again.", command=command.name, session_id=session_id)
        inv = Invocation(
            workspace=workspace, name=command.name, args=invoked.args, line=line, session_id=session_id,
            run_turn=run_turn, confirmed=confirmed, state=self.state,
        )
        result = await command.run(inv)
        if result.session_id is None and session_id is not None and result.status != "confirm":
            result = result.model_copy(update={"session_id": session_id})
        return result
