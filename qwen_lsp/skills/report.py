"""Skill listings for people: the ``qwen/skills/list`` result and the CLI table.

Both views come from the same :class:`SkillManager` queries so the editor
panel and ``qwen-lsp skills list`` never disagree.
"""

from __future__ import annotations

from ..protocol import SkillItem, SkillProblem, SkillsListResult
from .manager import SkillManager


def skills_list_result(manager: SkillManager) -> SkillsListResult:
    """The ``qwen/skills/list`` result (docs/protocol.md)."""
    return SkillsListResult(
        skills=[
            SkillItem(
                name=s.name,
                description=s.description,
                level=s.level,
                path=s.path,
                conditional=s.conditional,
                active=s.active,
                model_invocable=s.model_invocable,
                paths=list(s.paths),
            )
            for s in manager.skills()
        ],
        errors=[SkillProblem(path=e.path, message=e.message) for e in manager.errors()],
    )


def format_skill_list(manager: SkillManager) -> str:
    """A plain-text table: one line per skill, conditional state and globs, then errors."""
    skills = manager.skills()
    errors = manager.errors()
    lines = [f"Skills ({len(skills)}):" if skills else "No skills found."]
    width = max((len(s.name) for s in skills), default=0)
    for s in skills:
        state = ""
        if s.conditional:
            state = f" [{'active' if s.active else 'waiting for'}: {', '.join(s.paths)}]"
        if not s.model_invocable:
            state += " [user only]"
        first_line = s.description.split("\n", 1)[0]
        lines.append(f"  {s.name.ljust(width)}  {s.level:<7}  {first_line}{state}")
    if errors:
        lines.append(f"Errors ({len(errors)}):")
        lines.extend(f"  {e.path}: {e.message}" for e in errors)
    return "\n".join(lines)
