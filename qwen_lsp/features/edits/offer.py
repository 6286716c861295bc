"""Which write tools the main chat is offered, from the approval mode, the tool settings and whether anyone can approve.

``run_shell_command`` is offered by default, as Qwen Code 0.24.4 offers it,
also in ``plan`` mode (where its plan-mode policy decides, ``agent/approvals.py``);
``tools.shell.enabled: false`` turns it off, and so do 0.24.4's
``tools.core`` (when not empty, only the tools it names) and ``tools.exclude``,
which name a tool by 0.24.4's name or aliases (``run_shell_command``,
``Shell``, ``ShellTool``; ``edit``, ``Edit``, ``EditTool``, ``replace``;
``write_file``, ``WriteFile``, ``WriteFileTool``), ``tools.core`` entries
also as ``run_shell_command(git status)`` (``isToolEnabled``; the part in
parentheses is not a restriction here: every command is judged as usual).

The ``tools`` array heads the prompt-cache prefix, and the system prompt
names the tools too, so changing ``tools.approvalMode`` to or from
``plan`` (or ``tools.shell.enabled``) changes both: the next request after
such a change re-prefills from the start once; requests after it hit the
cache again. Changes among ``default``/``auto-edit``/``yolo`` keep the array
as it is (only the asking differs). Declaring ``edit``/``write_file`` in
the main chat also gives memory forks the byte-identical array they need
(``agent/fork.py``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ...agent.approvals import EDIT_TOOLS, PLAN_EXIT_TOOL, SHELL_TOOL, ApprovalMode, offered_mode
from ...agent.tool import Tool
from ...agent.tools.run_shell import CommandGuard, JobsFor, ShellTool
from .tools import ApprovedEditTool, ApprovedWriteFileTool

WRITE_TOOL_NAMES = EDIT_TOOLS | {SHELL_TOOL, PLAN_EXIT_TOOL}
ALIASES = {
    SHELL_TOOL: frozenset({SHELL_TOOL, "Shell", "ShellTool"}),
    "edit": frozenset({"edit", "Edit", "EditTool", "replace"}),
    "write_file": frozenset({"write_file", "WriteFile", "WriteFileTool"}),
}
"""0.24.4's names for each tool in ``tools.core`` / ``tools.exclude`` (``getAliasSetForTool``)."""


def tool_enabled(name: str, core: Sequence[str], exclude: Sequence[str]) -> bool:
    """0.24.4's ``isToolEnabled``: named in ``core`` (when it is not empty, ``name(args)`` too) and not in ``exclude``."""
    aliases = ALIASES.get(name, frozenset({name}))
    core_names = [c.strip().lstrip("_") for c in core if c and c.strip()]
    if core_names and not any(c in aliases or c.split("(", 1)[0].strip() in aliases for c in core_names):
        return False
    return not any(e.strip().lstrip("_") in aliases for e in exclude if e and e.strip())


def write_tools(
    mode: ApprovalMode,
    *,
    can_ask: bool,
    shell_enabled: bool,
    core: Sequence[str] = (),
    exclude: Sequence[str] = (),
    secrets: Iterable[str | None] = (),
    plan_exit: Tool | None = None,
    shell_guard: CommandGuard | None = None,
    jobs: JobsFor | None = None,
) -> list[Tool]:
    """In a fixed order, after the read-only tools; in ``plan`` ``plan_exit`` (Qwen Code 0.24.4's
    ``exit_plan_mode``) and the shell; only the shell (its read-only commands) when nobody could approve.

    ``secrets`` (the configured API key) are kept out of shell commands' environment; ``shell_guard``
    brackets each command that may write (``features/edits/shell_guard.py``); ``jobs`` keeps each chat's
    background commands.
    """
    shell: list[Tool] = []
    if shell_enabled and tool_enabled(SHELL_TOOL, core, exclude):
        shell.append(ShellTool(secrets=secrets, guard=shell_guard, jobs=jobs))
    if offered_mode(mode, can_ask) == "plan":
        return [*([plan_exit] if plan_exit is not None and mode == "plan" and can_ask else []), *shell]
    tools: list[Tool] = [t for t in (ApprovedEditTool(), ApprovedWriteFileTool()) if tool_enabled(t.name, core, exclude)]
    return [*tools, *shell]
