"""Skills core: discover SKILL.md files, watch them, activate by path, list them to the model.

Levels (Qwen Code's ``skill-manager.ts``): project (``<root>/.qwen/skills``, ``<root>/.agents/skills``;
skipped when the root is the home directory), user (``~/.qwen/skills``,
``~/.agents/skills``) and bundled (shipped in this package). Project beats
user beats bundled; within a level the first provider directory wins.

This package never imports the server: the engine owns a
:class:`SkillManager` per workspace and one :class:`SkillListingTracker`
per chat session.
"""

from .listing import SkillListingTracker, build_delta_reminder, build_snapshot_reminder
from .manager import SkillManager, build_skill_llm_content
from .model import (
    SkillDefinition,
    SkillError,
    SkillInfo,
    SkillInvocationError,
    SkillLevel,
    SkillLoadError,
    SkillNotFound,
    SkillSetChange,
)
from .report import format_skill_list, skills_list_result

__all__ = [
    "SkillDefinition",
    "SkillError",
    "SkillInfo",
    "SkillInvocationError",
    "SkillLevel",
    "SkillListingTracker",
    "SkillLoadError",
    "SkillManager",
    "SkillNotFound",
    "SkillSetChange",
    "build_delta_reminder",
    "build_skill_llm_content",
    "build_snapshot_reminder",
    "format_skill_list",
    "skills_list_result",
]
