"""``run_shell_command`` where nobody can be asked: memory forks (extraction, dream), read-only commands only.

Qwen Code 0.24.4's memory fork allows ``run_shell_command`` only when the
command is read-only (``memory-scoped-agent-config.ts``); the judge here is
the same analyser the main chat uses (``shell/analysis.py``), with the
fork's memory folders as well as the workspace as the places files may be
read from. Anything it does not find read-only is refused with its reason,
before anything runs. An accepted command runs as the main chat's do
(``shell/run.py``: ``bash -c``, its own process group, a timeout, bounded
output), with an environment of ``PATH``, ``HOME`` and the locale only.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError

from ...files.containment import resolved_inside
from ...shell.analysis import analyse
from ...shell.run import report, run
from ...shell.syntax import MAX_COMMAND_CHARS
from ..tool import ToolContext, ToolResult
from .base import ToolArgs, copy_declaration, describe_validation_error, function_declaration
from .run_shell import NAME

TIMEOUT_SECONDS = 30.0
_ENVIRONMENT = ("PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TZ")


class ShellArgs(ToolArgs):
    command: str = Field(min_length=1, max_length=MAX_COMMAND_CHARS)
    description: str | None = None
    directory: str | None = None


class ReadOnlyShellTool:
    """The tool; stateless, so one instance serves every run."""

    name = NAME
    DECLARATION = function_declaration(
        NAME,
        "Runs a read-only shell command (ls, cat, head, tail, grep, rg, find, wc, sort, uniq, git log/status/diff…) in the "
        "project directory and returns its output. Commands that write, run other programs or read outside the "
        "workspace and the memory directories are refused.",
        {
            "properties": {
                "command": {"description": "The command to run, e.g. 'grep -rn \"term\" /abs/dir | tail -50'.", "type": "string"},
                "description": {"description": "Optional: a short description of what the command does.", "type": "string"},
                "directory": {"description": "Optional: the directory to run in, relative to the project root.", "type": "string"},
            },
            "required": ["command"],
            "type": "object",
        },
    )

    def declaration(self) -> dict[str, Any]:
        result: dict[str, Any] = copy_declaration(self.DECLARATION)
        return result

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        try:
            params = ShellArgs.model_validate(args if args is not None else {})
        except ValidationError as exc:
            return ToolResult(output=describe_validation_error(NAME, exc), is_error=True)
        root = ctx.workspace_root.resolve()
        base = ctx.cwd if not params.directory else ctx.workspace_root / params.directory
        cwd = await asyncio.to_thread(resolved_inside, base, root)
        if cwd is None or not cwd.is_dir():
            return ToolResult(output=f"Command refused: the directory {params.directory!r} is not a directory inside the workspace.", is_error=True)
        roots = [root, *ctx.read_roots]
        verdict = await asyncio.to_thread(analyse, params.command, cwd, roots)
        if not verdict.read_only:
            return ToolResult(output=f"Command refused: {verdict.reason}. Only read-only commands run here.", is_error=True)
        env = {k: v for k, v in os.environ.items() if k in _ENVIRONMENT}
        done = await run(params.command, str(cwd), TIMEOUT_SECONDS, env)
        return ToolResult(output=report(params.command, params.directory, done), is_error=False)


def fork_allows(command: str, cwd: Path, roots: list[Path]) -> tuple[bool, str]:
    """The memory fork's permission rule for a shell call: the analyser's verdict (blocking)."""
    verdict = analyse(command, cwd, roots)
    return verdict.read_only, verdict.reason
