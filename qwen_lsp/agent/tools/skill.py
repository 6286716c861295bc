"""The ``skill`` tool: the model loads a skill's instructions by name.

Its declaration is a constant — the usage text of Qwen Code 0.24's
``SKILL_TOOL_DESCRIPTION`` without the extension and slash-command parts
this server has no equivalent for — and names no skill. Which skills exist
reaches the model through ``<system-reminder>`` snapshots and deltas
(:mod:`qwen_lsp.skills.listing`), so adding, editing or activating a skill
never changes the bytes of the tools block that heads the prompt cache.

The parameters are what Qwen Code 0.24.4 puts on the wire (its ``$schema``
and ``additionalProperties`` keys are stripped before sending), minus the
``args`` field that only its slash commands use.
"""

from __future__ import annotations

from typing import Any

from ...skills import SkillInvocationError, SkillManager
from ..tool import ToolContext, ToolResult
from .base import copy_declaration

SKILL_TOOL_NAME = "skill"

SKILL_TOOL_DESCRIPTION = """Execute a skill within the main conversation

<skills_instructions>
When users ask you to perform tasks, check if any of the available skills can help complete the task more effectively. Skills provide specialized capabilities and domain knowledge.

How to invoke:
- Use this tool with the skill name only (no arguments)
- Name the skill exactly as it appears in the available-skills listing; do not shorten or guess a spelling.
- Examples:
  - `skill: "pdf"` - invoke the pdf skill
  - `skill: "xlsx"` - invoke the xlsx skill

Important:
- Available skills are listed in <system-reminder> messages in the conversation; only use skills listed there.
- When a skill is relevant, you must invoke this tool IMMEDIATELY as your first action
- NEVER just announce or mention a skill in your text response without actually calling this tool
- This is a BLOCKING REQUIREMENT: invoke the relevant Skill tool BEFORE generating any other response about the task
- Do not invoke a skill that is already running
- When executing scripts or loading referenced files, ALWAYS resolve absolute paths from skill's base directory. Examples:
  - `bash scripts/init.sh` -> `bash /path/to/skill/scripts/init.sh`
  - `python scripts/helper.py` -> `python /path/to/skill/scripts/helper.py`
  - `reference.md` -> `/path/to/skill/reference.md`
</skills_instructions>"""

_DECLARATION: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": SKILL_TOOL_NAME,
        "description": SKILL_TOOL_DESCRIPTION,
        "parameters": {
            "type": "object",
            "properties": {
                "skill": {
                    "type": "string",
                    "description": 'The skill name (no arguments). E.g., "pdf" or "xlsx"',
                },
            },
            "required": ["skill"],
        },
    },
}


class SkillTool:
    """Loads a skill body (with its base-directory line) from a :class:`SkillManager`."""

    name = SKILL_TOOL_NAME

    def __init__(self, manager: SkillManager) -> None:
        self._manager = manager

    def declaration(self) -> dict[str, Any]:
        result: dict[str, Any] = copy_declaration(_DECLARATION)
        return result

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        raw = args.get("skill")
        if not isinstance(raw, str) or not raw.strip():
            return ToolResult('Parameter "skill" must be a non-empty string.', is_error=True)
        name = raw.strip()
        try:
            text = self._manager.invocation_text(name)
        except SkillInvocationError as exc:
            return ToolResult(str(exc), is_error=True)
        skill = self._manager.get(name)
        extra: dict[str, Any] = {"skill": name}
        if skill is not None:
            extra["model"] = skill.model
            extra["allowedTools"] = list(skill.allowed_tools or ())
        return ToolResult(text, display=skill.description if skill else name, extra=extra)
