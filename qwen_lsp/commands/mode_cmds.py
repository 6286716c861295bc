"""``/model``, ``/approval-mode``, ``/plan``: what the chat runs with, changed for this workspace.

As Qwen Code 0.24.4 (``modelCommand.ts``, ``approvalModeCommand.ts``, ``planCommand.ts``): the
change lasts for the session (the server's life here), is not written to a settings file, and
applies from the next request. ``/model`` alone names the model in use (0.24.4 opens a picker);
``/approval-mode`` alone names the mode and the valid ones (0.24.4 opens a dialog).
"""

from __future__ import annotations

from typing import cast

from ..agent.approvals import ApprovalMode
from ..protocol import CommandResult
from .base import Command, Invocation

APPROVAL_MODES = ("plan", "default", "auto-edit", "auto", "yolo")
"""0.24.4's ``APPROVAL_MODES``, in its order."""
_MODE_NAMES = {"plan": "plan mode", "default": "Ask permissions", "auto-edit": "auto-accept edits", "auto": "Auto mode", "yolo": "YOLO mode"}
"""0.24.4's ``formatApprovalModeName``."""
_MAX_MODEL_ID = 200


async def model(inv: Invocation) -> CommandResult:
    wanted = inv.args.strip()
    current = inv.workspace.settings.model.name or "(none configured)"
    if not wanted:
        return inv.done(f'Current model: {current}\nUse "/model <model-id>" to switch models for this session.')
    if len(wanted) > _MAX_MODEL_ID or any(c.isspace() or not c.isprintable() for c in wanted) or wanted.startswith("--"):
        return inv.error('Usage: /model <model-id> (the flags --fast, --vision, --project and --global are not offered by qwen-lsp).')
    await inv.workspace.set_model(wanted)
    return inv.done(f"Model switched to {wanted} for this session.", session_id=inv.session_id)


async def approval_mode(inv: Invocation) -> CommandResult:
    arg = inv.args.strip().lower()
    current = inv.workspace.settings.tools.approval_mode
    if not arg:
        return inv.done(f'Approval mode: "{_MODE_NAMES[current]}" ({current}). Valid modes: {", ".join(APPROVAL_MODES)}')
    if arg not in APPROVAL_MODES:
        return inv.error(f'Invalid approval mode "{inv.args.strip()}". Valid modes: {", ".join(APPROVAL_MODES)}')
    await inv.workspace.set_approval_mode(cast(ApprovalMode, arg))
    return inv.done(f'Approval mode set to "{_MODE_NAMES[arg]}"', session_id=inv.session_id)


async def plan(inv: Invocation) -> CommandResult:
    arg = inv.args.strip()
    workspace = inv.workspace
    current = workspace.settings.tools.approval_mode
    key = id(workspace)
    if arg == "exit":
        if current != "plan":
            return inv.error('Not in plan mode. Use "/plan" to enter plan mode first.')
        await workspace.set_approval_mode(cast(ApprovalMode, inv.state.pre_plan_mode.pop(key, "default")))
        return inv.done("Exited plan mode. Previous approval mode restored.", session_id=inv.session_id)
    if current != "plan":
        inv.state.pre_plan_mode[key] = current
        await workspace.set_approval_mode("plan")
        if not arg:
            return inv.done("Enabled plan mode. The agent will analyze and plan without executing tools.", session_id=inv.session_id)
    elif not arg:
        return inv.done('Already in plan mode. Use "/plan exit" to exit plan mode.', session_id=inv.session_id)
    return await inv.prompt(arg, shown=arg)


COMMANDS = (
    Command("model", "Switch the model for this session.", model, "[<model-id>]", one_shot=True),
    Command("approval-mode", "View or change the approval mode for tool usage.", approval_mode, "<mode>"),
    Command("plan", "Switch to plan mode or exit plan mode.", plan, "[exit | <task>]"),
)
