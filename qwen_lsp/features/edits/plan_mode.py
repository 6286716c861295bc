"""Plan mode as Qwen Code 0.24.4: the reminder every turn carries, and ``exit_plan_mode``, the way out.

Every user turn in ``plan`` mode carries 0.24.4's ``getPlanModeSystemReminder``
text, word for word, as the last reminder before the user's text (the CLI's
order). As in the CLI, it goes with the turn's request but not into the
recorded session, so a chat resumed after plan mode does not read as still
planning. Where nobody can approve a plan (no editor to ask) the reminder
is the CLI's plan-only variant, which says to present the plan directly.

``exit_plan_mode`` has 0.24.4's name, description and ``plan`` parameter
(its ``originalRequest``/``researchSummary``, used only by the CLI's
teammates, are left out). Called in plan mode, it asks the user "Would you
like to proceed?" with the plan: *allow* switches this workspace to
``default`` (0.24.4's "proceed once"), *allow always* to ``auto-edit``
("proceed always"), *deny* stays in plan mode. The switch holds until the
editor's settings change. The answer the model reads is 0.24.4's. The turn
then ends, because a turn's tools are fixed when it starts: the write tools
arrive with the next message (the CLI goes on in the same turn).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import Field, ValidationError

from ...agent.approvals import PLAN_EXIT_TOOL, Approval, ApprovalMode, ToolPermission
from ...agent.tool import ToolContext, ToolResult
from ...agent.tools.base import ToolArgs, copy_declaration, describe_validation_error, function_declaration

NAME = PLAN_EXIT_TOOL
MAX_PLAN_CHARS = 50_000

_REMINDER_HEAD = "<system-reminder>\nPlan mode is active. The user indicated that they do not want you to execute yet -- you MUST NOT make any edits, run tools classified as state-modifying (including changing configs or making commits), or otherwise make changes to the system. A shell command whose safety cannot be determined may run only after the user explicitly approves that exact invocation once, and only when it is necessary for the investigation. This supersedes any other instructions you have received (for example, to make edits).\n\n## Iterative Planning Workflow\n\nYou are pair-planning with the user. Explore the code to build context, ask the user questions when you hit decisions you cannot make alone, and refine your plan incrementally.\n\n### The Loop\n\nRepeat this cycle until the plan is complete:\n\n1. **Explore** — Use read-only tools (read_file, grep_search, glob) to read code. Look for existing functions, utilities, and patterns to reuse. For broader or ambiguous tasks, use multiple parallel exploration passes (directly or via agents when appropriate) to understand different parts of the codebase.\n2. **Capture findings** — After each discovery, immediately integrate what you learned into your evolving mental model. Do not wait until the end to synthesize.\n3. **Ask the user** — When you hit an ambiguity or decision you cannot resolve from code alone, use ask_user_question. Then go back to step 1.\n\n### First Turn\n\nStart by quickly scanning a few key files to form an initial understanding of the task scope. Then ask the user your first round of questions if any exist. Do not explore exhaustively before engaging the user.\n\n### Asking Good Questions\n\n- Never ask what you could find out by reading the code\n- Batch related questions together (use multi-question ask_user_question calls)\n- Focus on things only the user can answer: requirements, preferences, tradeoffs, edge case priorities\n- Scale depth to the task — a vague feature request needs many rounds; a focused bug fix may need one or none\n\n### Planning Principles\n\n- Build a global understanding of how the relevant pieces fit together before deciding on local edits. Do not jump from the first relevant file straight into a plan when the task likely spans multiple files or behaviors.\n- Design an implementation approach that fits the existing codebase rather than inventing a parallel pattern.\n- Reference existing functions and utilities you found that should be reused, with their file paths.\n- Include a verification section describing how to test the changes end-to-end.\n\n### When a Tool is Blocked by Plan Mode\n\nIf a non-read-only tool is blocked:\n- Do NOT retry the blocked tool or repeatedly attempt similar non-read-only tools\n- Do NOT use wrappers, quoting tricks, aliases, or obfuscation to make a blocked write look unknown\n- Do NOT immediately call exit_plan_mode just to unblock it — continue gathering context with read-only tools first\n- Pivot to read-only tools (read_file, grep_search, glob, agents) to gather the information the blocked tool would have provided\n- Once you have enough context to form a complete plan, call exit_plan_mode\n\nAn exact one-off approval for an unknown shell command approves only that invocation. It does not approve the plan, authorize related commands, or exit Plan mode.\n\n### When to Converge\n\nYour plan is ready when you have addressed all ambiguities and it covers: what to change, which files to modify, what existing code to reuse (with file paths), and how to verify the changes. "
_REMINDER_TAIL = " Do NOT make any file changes or run any tools that modify the system state in any way until the user has confirmed the plan.\n</system-reminder>"
_EXIT_BY_TOOL = "Present your plan by calling the exit_plan_mode tool, which will prompt the user to confirm the plan."


def reminder(can_exit: bool) -> str:
    """The plan-mode reminder; ``can_exit`` False gives 0.24.4's plan-only variant (present the plan directly)."""
    return _REMINDER_HEAD + (_EXIT_BY_TOOL if can_exit else "Present your plan directly.") + _REMINDER_TAIL


DESCRIPTION = "Use this tool when you are in plan mode and have finished presenting your plan and are ready to code. This will prompt the user to exit plan mode.\n\n## When to Use This Tool\nIMPORTANT: Only use this tool when the task requires planning the implementation steps of a task that requires writing code. For research tasks where you're gathering information, searching files, reading files or in general trying to understand the codebase - do NOT use this tool.\n\n## Before Using This Tool\nEnsure your plan is complete and unambiguous:\n- If you have unresolved questions about requirements or approach, use AskUserQuestion first (in earlier phases)\n- The plan parameter MUST contain your actual plan content — empty strings will be rejected\n- Once your plan is finalized, use THIS tool to request approval\n\n**Important:** Do NOT use AskUserQuestion to ask \"Is this plan okay?\" or \"Should I proceed?\" - that's exactly what THIS tool does. ExitPlanMode inherently requests user approval of your plan.\n\n## Examples\n1. Initial task: \"Search for and understand the implementation of vim mode in the codebase\" - Do not use the exit plan mode tool because you are not planning the implementation steps of a task.\n2. Initial task: \"Help me implement yank mode for vim\" - Use the exit plan mode tool after you have finished planning the implementation steps of the task.\n3. Initial task: \"Add a new feature to handle user authentication\" - If unsure about auth method (OAuth, JWT, etc.), use AskUserQuestion first, then use exit plan mode tool after clarifying the approach.\n"

APPROVED = "User approved. You can now start coding. Start with updating your todo list if applicable."
NOT_APPROVED = "Plan execution was not approved. Remaining in plan mode."


def not_in_plan_mode(mode: str) -> str:
    return (
        f"You are not in plan mode (current mode: {mode}). The user may have manually switched modes via Shift+Tab or "
        "/approval-mode. Do not call exit_plan_mode again. Continue working in the current mode."
    )


class ExitPlanArgs(ToolArgs):
    plan: str = Field(max_length=MAX_PLAN_CHARS)


class ExitPlanModeTool:
    name = NAME
    DECLARATION = function_declaration(
        NAME,
        DESCRIPTION,
        {
            "type": "object",
            "properties": {"plan": {"type": "string", "description": "The plan you came up with, that you want to run by the user for approval. Supports markdown. The plan should be pretty concise. Must contain your actual plan content — empty strings will be rejected."}},
            "required": ["plan"],
            "additionalProperties": False,
        },
    )

    def __init__(self, mode: Callable[[], ApprovalMode], switch: Callable[[ApprovalMode], None]) -> None:
        self._mode = mode
        self._switch = switch

    def declaration(self) -> dict[str, Any]:
        result: dict[str, Any] = copy_declaration(self.DECLARATION)
        return result

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        try:
            params = ExitPlanArgs.model_validate(args if args is not None else {})
        except ValidationError as exc:
            return ToolResult(output=describe_validation_error(NAME, exc), is_error=True)
        if not params.plan.strip():
            return ToolResult(output='Parameter "plan" must be a non-empty string.', is_error=True)
        mode = self._mode()
        if mode != "plan":
            return ToolResult(output=not_in_plan_mode(mode), is_error=True)
        request = ToolPermission(tool=NAME, title="Would you like to proceed?", plan=params.plan)
        approval = await ctx.approve(ctx.call_id, request) if ctx.approve is not None else Approval("deny")
        if approval.decision == "deny":
            return ToolResult(output=NOT_APPROVED, display="Plan not approved", extra={"decision": "deny", "stop": approval.by_user})
        target: ApprovalMode = "auto-edit" if approval.decision == "allowAlways" else "default"
        self._switch(target)
        return ToolResult(output=APPROVED, display=f"Plan approved: {target} mode", extra={"decision": approval.decision, "stop": True})
