"""The plain data the skills core hands to its callers.

Kept apart from the loading code so the server, the CLI and the skill tool
can depend on these shapes without pulling in discovery or watching.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path


class SkillLevel(str, Enum):
    """Where a skill came from; earlier members win a name clash (Qwen Code's ``skill-manager.ts``)."""

    PROJECT = "project"
    USER = "user"
    BUNDLED = "bundled"


LEVEL_ORDER: tuple[SkillLevel, ...] = (SkillLevel.PROJECT, SkillLevel.USER, SkillLevel.BUNDLED)


@dataclass(frozen=True)
class SkillDefinition:
    """One parsed SKILL.md, without its body (the body is read when invoked)."""

    name: str
    description: str
    level: SkillLevel
    path: Path
    """The SKILL.md file, as found under its base directory (symlinks not resolved)."""
    when_to_use: str | None = None
    paths: tuple[str, ...] = ()
    """Globs from ``paths:``; non-empty makes the skill conditional."""
    path_problems: tuple[tuple[str, str], ...] = ()
    """``(glob, message)`` for each ``paths:`` entry that was dropped or looks wrong; listed as skill errors."""
    allowed_tools: tuple[str, ...] | None = None
    model: str | None = None
    argument_hint: str | None = None
    disable_model_invocation: bool = False
    user_invocable: bool | None = None
    priority: float | None = None

    @property
    def base_dir(self) -> Path:
        return self.path.parent

    @property
    def conditional(self) -> bool:
        return bool(self.paths)


@dataclass(frozen=True)
class SkillInfo:
    """A skill as listed to the user (``qwen/skills/list``, ``qwen-lsp skills list``)."""

    name: str
    description: str
    level: str
    path: str
    conditional: bool
    active: bool
    """False only for a conditional skill no matching file has touched yet."""
    model_invocable: bool = True
    when_to_use: str | None = None
    paths: tuple[str, ...] = ()


@dataclass(frozen=True)
class SkillError:
    """A problem the user should see; it never hides the other skills.

    ``path`` is the SKILL.md path, or ``<path>#paths[<glob>]`` for a dropped
    glob, or a skills directory for a level that failed to load.
    """

    path: str
    message: str


@dataclass(frozen=True)
class SkillSetChange:
    """How the model-visible skill set moved: names that appeared / disappeared."""

    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.added and not self.removed


class SkillInvocationError(Exception):
    """The skill tool could not load a skill; ``str(exc)`` is shown to the model."""


class SkillNotFound(SkillInvocationError, LookupError):
    """No model-invocable skill of that name; the message lists what exists."""


class SkillLoadError(SkillInvocationError):
    """The skill exists but its SKILL.md no longer reads or parses."""
