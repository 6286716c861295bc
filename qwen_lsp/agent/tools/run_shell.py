"""``run_shell_command`` for the main chat, as Qwen Code 0.24.4 offers it: on by default, read-only commands without a question.

Name, parameters (``command``, ``description``, ``directory``,
``is_background``, ``timeout``) and the result text are 0.24.4's
(``shell.ts``). ``tools.shell.enabled: false``, or ``tools.core`` /
``tools.exclude`` leaving it out, turn it off (``features/edits/offer.py``).

Before anything starts, the command analyser (``shell/analysis.py``, the
one every unattended path uses) judges it in its directory: a read-only
command runs without asking in every mode; anything else goes to the
approval policy (``agent/approvals.py``) with the command itself as the
title (hidden characters written out), its directory, the "Allow always"
rules (``shell/rules.py``) and — when any word of it names a protected
file (``protected_paths``) — the protected-path question, which only a
person answers. ``directory`` must be inside the workspace.

Running is ``shell/run.py``'s: ``bash -c`` in its own process group (Stop
kills the group), the environment without the endpoint's key or any
configured secret (:func:`shell_environment`), a timeout, output cut
head-and-tail as 0.24.4 cuts it. A background command gets a file for its
output, in a directory the analyser also treats as readable, so
``tail -n 50 <file>`` runs without a question; it is stopped when the chat
is deleted or the server ends.

A ``guard`` (:data:`CommandGuard`) brackets every command that may write:
the edits feature passes one that undoes secrets written into team memory
(``memory/shell_guard.py``), so the refusal is the tool's result.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError

from ...errors import EngineError
from ...files.containment import resolved_inside
from ...files.protected import protected_reason
from ...shell.analysis import Verdict, analyse, mentioned_paths
from ...shell.rules import command_rules, covered
from ...shell.run import BackgroundJobs, report, run, started_report
from ...shell.syntax import MAX_COMMAND_CHARS
from ...text.visible import shown_title
from ..approvals import Approval, ToolPermission
from ..tool import ToolContext, ToolResult
from .base import ToolArgs, copy_declaration, describe_validation_error, function_declaration

NAME = "run_shell_command"
TIMEOUT_SECONDS = 120.0
MAX_TIMEOUT_MS = 600_000

AfterCommand = Callable[[], Awaitable[str | None]]
CommandGuard = Callable[[], Awaitable[AfterCommand]]
"""Called once the command is approved, before it starts; raising :class:`EngineError` refuses it unrun.
What it returns is called once the command's process group is gone: a refusal for the model, or None."""
JobsFor = Callable[[str], BackgroundJobs]
"""A chat's background commands, by chat id."""


class RunShellArgs(ToolArgs):
    command: str = Field(min_length=1, max_length=MAX_COMMAND_CHARS)
    description: str | None = None
    directory: str | None = None
    is_background: bool = False
    timeout: int | None = Field(None, ge=1, le=MAX_TIMEOUT_MS)


DESCRIPTION = (
    "Executes a given shell command as `bash -c <command>` in the project directory (or `directory`) and returns "
    "its output, exit code and signal. Read-only commands (ls, cat, grep, git status/log/diff, find…) run at once; "
    "other commands are shown to the user for approval first. Use `is_background: true` for servers and watchers. "
    "Do not use it to read, search or edit files when read_file, grep_search, glob or edit can do it."
)


class ShellTool:
    name = NAME
    DECLARATION = function_declaration(
        NAME,
        DESCRIPTION,
        {
            "properties": {
                "command": {"description": "Exact bash command to execute as `bash -c <command>`.", "type": "string"},
                "is_background": {
                    "description": "Optional: run in the background (long-running servers, watchers). Defaults to false.",
                    "type": "boolean",
                },
                "timeout": {"description": "Optional timeout in milliseconds (max 600000).", "maximum": MAX_TIMEOUT_MS, "minimum": 1, "type": "integer"},
                "description": {"description": "Brief description of the command for the user.", "type": "string"},
                "directory": {
                    "description": "(OPTIONAL) The absolute path of the directory to run the command in; the project root when omitted. Must be inside the workspace.",
                    "type": "string",
                },
            },
            "required": ["command"],
            "type": "object",
        },
    )

    def __init__(
        self,
        timeout: float = TIMEOUT_SECONDS,
        *,
        secrets: Iterable[str | None] = (),
        guard: CommandGuard | None = None,
        jobs: JobsFor | None = None,
    ) -> None:
        self._timeout = timeout
        self._secrets = frozenset(s for s in secrets if s)
        self._guard = guard
        self._jobs = jobs

    def declaration(self) -> dict[str, Any]:
        result: dict[str, Any] = copy_declaration(self.DECLARATION)
        return result

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        try:
            params = RunShellArgs.model_validate(args if args is not None else {})
        except ValidationError as exc:
            return ToolResult(output=describe_validation_error(NAME, exc), is_error=True)
        if params.is_background and self._jobs is None:
            return ToolResult(output="Background commands are not available here; run the command in the foreground.", is_error=True)
        root = ctx.workspace_root.resolve()
        base = ctx.cwd if not params.directory else Path(params.directory) if os.path.isabs(params.directory) else ctx.workspace_root / params.directory
        cwd = await asyncio.to_thread(_directory_inside, base, root)
        if cwd is None:
            return ToolResult(output=f"The directory {params.directory!r} is not a directory inside the workspace.", is_error=True)
        jobs = self._jobs(ctx.chat_id) if self._jobs is not None else None
        roots = [root, *([jobs.directory] if jobs is not None else [])]
        permission = await asyncio.to_thread(_permission, params.command, cwd, root, roots)
        approval = await ctx.approve(ctx.call_id, permission) if ctx.approve is not None else Approval("deny")
        decision = approval.decision
        if decision == "deny":
            return ToolResult(output=approval.refusal(), is_error=True, display=f"Declined: {params.command[:80]}", extra=approval.denial_extra())
        after: AfterCommand | None = None
        if self._guard is not None and not permission.read_only:
            try:
                after = await self._guard()
            except EngineError as exc:
                return ToolResult(output=exc.message, is_error=True, display=f"Refused: {params.command[:80]}", extra={"decision": decision})
        env = shell_environment(os.environ, self._secrets)
        if params.is_background and jobs is not None:
            return await _start_background(jobs, params.command, str(cwd), env, decision)
        timeout = params.timeout / 1000 if params.timeout else self._timeout
        try:
            done = await run(params.command, str(cwd), timeout, env)
        except asyncio.CancelledError:
            if after is not None:  # a cancelled turn still gets its writes checked (the group is gone by now)
                await asyncio.shield(after())
            raise
        text = report(params.command, params.directory, done)
        refusal = await after() if after is not None else None
        if refusal is not None:  # the command and its output are left out: either may quote the secret
            first = refusal.split("\n", 1)[0]
            return ToolResult(output=f"{refusal}\n\nExit Code: {done.exit_code}", is_error=True, display=f"Refused: {first}", extra={"decision": decision})
        failed = done.error is not None or done.timed_out or done.exit_code != 0
        display = "Timed out" if done.timed_out else done.error or (f"Exit code {done.exit_code}" if done.exit_code is not None else f"Signal {done.signal}")
        return ToolResult(output=text, is_error=failed, display=display, extra={"decision": decision})


def _directory_inside(base: Path, root: Path) -> Path | None:
    found = resolved_inside(base, root)
    return found if found is not None and found.is_dir() else None


def _permission(command: str, cwd: Path, root: Path, roots: list[Path]) -> ToolPermission:
    """What the policy is asked (blocking: the analyser stats files and may read git's configuration)."""
    verdict: Verdict = analyse(command, cwd, roots)
    protected = None
    if not verdict.read_only:
        for raw in mentioned_paths(command):
            target = resolved_inside(Path(raw) if os.path.isabs(raw) else cwd / raw, root)
            if target is not None and (protected := protected_reason(target.relative_to(root).as_posix())) is not None:
                break
    rules = () if verdict.read_only else command_rules(command, cwd, roots)
    return ToolPermission(
        tool=NAME,
        title=shown_title("Run: ", command),  # what will run, never the model's description of it
        command=command,
        directory=str(cwd),
        read_only=verdict.read_only,
        writes=verdict.safety == "write",
        protected=protected,
        rules=rules,
        covered=lambda allowed: covered(command, cwd, roots, allowed),
    )


async def _start_background(jobs: BackgroundJobs, command: str, cwd: str, env: Mapping[str, str], decision: str) -> ToolResult:
    try:
        job = await jobs.start(command, cwd, env)
    except (OSError, RuntimeError) as exc:
        return ToolResult(output=f"The background command could not start: {exc}", is_error=True, extra={"decision": decision})
    return ToolResult(output=started_report(job), display=f"Background shell {job.id} started (pid {job.pid}).", extra={"decision": decision})


CREDENTIAL_VARIABLES = ("OPENAI_API_KEY", "DASHSCOPE_API_KEY")
"""Where the endpoint's key comes from (``settings/config.py``); an approved command has no use for it."""


def shell_environment(environ: Mapping[str, str], secrets: Iterable[str] = ()) -> dict[str, str]:
    """The server's environment without the endpoint's credentials and bash's start-up hooks.

    Removed: :data:`CREDENTIAL_VARIABLES`, every variable holding one of
    their values or one of ``secrets`` (the configured key, perhaps from a
    settings file), so the same key exported under another name goes too,
    and :data:`SHELL_STARTUP` and ``BASH_FUNC_*``.
    A command the user approved (or yolo ran) may still be one the model
    chose to print its environment to the endpoint or anywhere else.
    """
    hidden = {v for v in secrets if v} | {environ[name] for name in CREDENTIAL_VARIABLES if environ.get(name)}
    return {
        k: v
        for k, v in environ.items()
        if k not in CREDENTIAL_VARIABLES and k not in SHELL_STARTUP and not k.startswith("BASH_FUNC_") and not any(h in v for h in hidden)
    }


SHELL_STARTUP = ("BASH_ENV", "ENV")
"""Variables that make ``bash -c`` run a file first; with them (and exported ``BASH_FUNC_*`` functions, which
can stand in for any program name) the command that runs would not be the one the analyser judged."""
