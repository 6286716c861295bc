"""``run_shell_command`` for the main chat: a real shell, off unless ``tools.shell.enabled``, always approved.

Parameters are Qwen Code's (``command``, ``description``, ``directory``,
``is_background``); background commands are refused, since a language
server has no place to keep them running. The command runs with
``bash -c`` in the workspace (or ``directory`` inside it), in its own
process group, stdin closed, with a timeout and at most
``MAX_OUTPUT_CHARS`` of combined output kept. On timeout, overflow or a
cancelled turn the whole group is killed, so a ``make`` does not leave
its children running.

The command's environment is the server's without the endpoint's key
(:func:`shell_environment`). Asking happens before anything starts (``ctx.approve``), with the command
itself as the title (``visible_text.shown_title``: hidden characters
written out, multi-line commands flagged), except for a read-only command
(``agent/readonly_shell.py``), which runs without asking as in Qwen Code
0.24.4's ``default`` mode; memory forks use
the read-only variant in ``shell.py`` instead, never this one.

A ``guard`` (:data:`CommandGuard`) brackets every command that may write:
the edits feature passes one that undoes secrets written into team memory
(``memory/shell_guard.py``), so the refusal is the tool's result.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

from pydantic import Field, ValidationError

from qwen_lsp.errors import EngineError
from qwen_lsp.files.containment import resolved_inside
from qwen_lsp.agent.approvals import Approval, ToolPermission
from qwen_lsp.agent.readonly_shell import is_read_only
from qwen_lsp.agent.tool import ToolContext, ToolResult
from qwen_lsp.agent.tools.base import ToolArgs, copy_declaration, describe_validation_error, function_declaration
from qwen_lsp.agent.tools.shell import MAX_COMMAND_CHARS, MAX_OUTPUT_CHARS, NAME, read_bounded, reap
from qwen_lsp.visible_text import shown_title

TIMEOUT_SECONDS = 120.0

AfterCommand = Callable[[], Awaitable[str | None]]
CommandGuard = Callable[[], Awaitable[AfterCommand]]
"""Called once the command is approved, before it starts; raising :class:`EngineError` refuses it unrun.
What it returns is called once the command's process group is gone: a refusal for the model, or None."""


class RunShellArgs(ToolArgs):
    command: str = Field(min_length=1, max_length=MAX_COMMAND_CHARS)
    description: str | None = None
    directory: str | None = None
    is_background: bool = False


class ShellTool:
    name = NAME
    DECLARATION = function_declaration(
        NAME,
        "Runs a shell command with 'bash -c' in the project directory and returns its combined output and exit "
        f"code. The user approves each command first, except read-only ones (ls, cat, grep... inside the project). Commands are stopped after {TIMEOUT_SECONDS:g} seconds; "
        "interactive and background commands are not supported.",
        {
            "properties": {
                "command": {"description": "The exact bash command to run.", "type": "string"},
                "description": {"description": "A short description of what the command does, shown to the user.", "type": "string"},
                "directory": {"description": "Optional: the directory to run in, relative to the project root.", "type": "string"},
                "is_background": {"description": "Must be false: background commands are not supported here.", "type": "boolean"},
            },
            "required": ["command"],
            "type": "object",
        },
    )

    def __init__(self, timeout: float = TIMEOUT_SECONDS, *, secrets: Iterable[str | None] = (), guard: CommandGuard | None = None) -> None:
        self._timeout = timeout
        self._secrets = frozenset(s for s in secrets if s)
        self._guard = guard

    def declaration(self) -> dict[str, Any]:
        result: dict[str, Any] = copy_declaration(self.DECLARATION)
        return result

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        try:
            params = RunShellArgs.model_validate(args if args is not None else {})
        except ValidationError as exc:
            return ToolResult(output=describe_validation_error(NAME, exc), is_error=True)
        if params.is_background:
            return ToolResult(output="Background commands are not supported here; run the command in the foreground.", is_error=True)
        base = ctx.cwd if not params.directory else ctx.workspace_root / params.directory
        cwd = await asyncio.to_thread(resolved_inside, base, ctx.workspace_root.resolve())
        if cwd is None or not cwd.is_dir():
            return ToolResult(output=f"The directory {params.directory!r} is not a directory inside the workspace.", is_error=True)
        title = shown_title("Run: ", params.command)  # what will run, never the model's description of it
        read_only = await asyncio.to_thread(is_read_only, params.command, cwd, ctx.workspace_root)
        request = ToolPermission(tool=NAME, title=title, command=params.command, directory=str(cwd), read_only=read_only)
        approval = await ctx.approve(ctx.call_id, request) if ctx.approve is not None else Approval("deny")
        decision = approval.decision
        if decision == "deny":
            return ToolResult(output=approval.refusal(), is_error=True, display=f"Declined: {params.command[:80]}", extra={"decision": decision})
        after: AfterCommand | None = None
        if self._guard is not None and not read_only:
            try:
                after = await self._guard()
            except EngineError as exc:
                return ToolResult(output=exc.message, is_error=True, display=f"Refused: {params.command[:80]}", extra={"decision": decision})
        try:
            result = await run_command(params.command, str(cwd), self._timeout, shell_environment(os.environ, self._secrets))
        except asyncio.CancelledError:
            if after is not None:  # a cancelled turn still gets its writes checked (the group is gone by now)
                await asyncio.shield(after())
            raise
        refusal = await after() if after is not None else None
        if refusal is not None:
            first = refusal.split("\n", 1)[0]
            return ToolResult(output=f"{refusal}\n\n{result.output}", is_error=True, display=f"Refused: {first}", extra={"decision": decision})
        return ToolResult(output=result.output, is_error=result.is_error, display=result.display, extra={"decision": decision})


CREDENTIAL_VARIABLES = ("OPENAI_API_KEY", "DASHSCOPE_API_KEY")
"""Where the endpoint's key comes from (``settings/config.py``); an approved command has no use for it."""


def shell_environment(environ: Mapping[str, str], secrets: Iterable[str] = ()) -> dict[str, str]:
    """The server's environment without the endpoint's credentials.

    Removed: :data:`CREDENTIAL_VARIABLES`, and every variable holding one of
    their values or one of ``secrets`` (the configured key, perhaps from a
    settings file), so the same key exported under another name goes too.
    A command the user approved (or yolo ran) may still be one the model
    chose to print its environment to the endpoint or anywhere else.
    """
    hidden = {v for v in secrets if v} | {environ[name] for name in CREDENTIAL_VARIABLES if environ.get(name)}
    return {k: v for k, v in environ.items() if k not in CREDENTIAL_VARIABLES and v not in hidden}


async def run_command(command: str, cwd: str, timeout: float, env: Mapping[str, str]) -> ToolResult:
    """Run ``bash -c command`` in its own process group; the group is killed however this ends early."""
    try:
        proc = await asyncio.create_subprocess_exec(
            "bash", "-c", command,
            cwd=cwd,
            env=dict(env),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
    except OSError as exc:
        return ToolResult(output=f"Command failed to start: {exc.strerror or exc}", is_error=True)
    try:
        async with asyncio.timeout(timeout):
            out, cut = await read_bounded(proc)
            if not cut:
                await proc.wait()
    except TimeoutError:
        return ToolResult(output=f"Command timed out after {timeout:g} s and was stopped.", is_error=True)
    finally:
        # Also after a normal exit: whatever the command left running in its group goes with it.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        if proc.returncode is None:
            with contextlib.suppress(Exception):
                await asyncio.shield(reap(proc))
    text = _text(out)
    if cut:
        text += f"\n... [output cut at {MAX_OUTPUT_CHARS} characters; the command was stopped]"
        return ToolResult(output=text, is_error=False, display=f"Output cut at {MAX_OUTPUT_CHARS} characters")
    code = proc.returncode
    output = f"{text or '(no output)'}\nExit code: {code}"
    return ToolResult(output=output, is_error=code != 0, display=f"Exit code {code}")


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace")
