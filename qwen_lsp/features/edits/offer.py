"""Which write tools the main chat is offered, from the approval mode and whether anyone can approve.

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

from collections.abc import Iterable

from ...agent.approvals import EDIT_TOOLS, PLAN_EXIT_TOOL, SHELL_TOOL, ApprovalMode, offered_mode
from ...agent.tool import Tool
from ...agent.tools.run_shell import CommandGuard, ShellTool
from .tools import ApprovedEditTool, ApprovedWriteFileTool

WRITE_TOOL_NAMES = EDIT_TOOLS | {SHELL_TOOL, PLAN_EXIT_TOOL}


def write_tools(
    mode: ApprovalMode,
    *,
    can_ask: bool,
    shell_enabled: bool,
    secrets: Iterable[str | None] = (),
    plan_exit: Tool | None = None,
    shell_guard: CommandGuard | None = None,
) -> list[Tool]:
    """In a fixed order, after the read-only tools; in ``plan`` only ``plan_exit`` (Qwen Code 0.24.4's
    ``exit_plan_mode``), and nothing when nobody could approve.

    ``secrets`` (the configured API key) are kept out of shell commands' environment; ``shell_guard``
    brackets each command that may write (``features/edits/shell_guard.py``).
    """
    if offered_mode(mode, can_ask) == "plan":
        return [plan_exit] if plan_exit is not None and mode == "plan" and can_ask else []
    tools: list[Tool] = [ApprovedEditTool(), ApprovedWriteFileTool()]
    if shell_enabled:
        tools.append(ShellTool(secrets=secrets, guard=shell_guard))
    return tools
