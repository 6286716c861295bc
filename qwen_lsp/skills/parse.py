"""SKILL.md parsing, as Qwen Code's ``SkillManager.parseSkillContent`` (``skills/skill-manager.ts``).

Every failure becomes ``SkillParseError`` with the reference wording, so the
``/skills``-style error list reads the same in both tools. Nothing here
touches the filesystem except :func:`read_skill_file`.

YAML: one loader with rule frontmatter, :mod:`qwen_lsp.text.yaml_frontmatter`:
the YAML 1.2 core schema of Qwen Code's ``yaml`` package (``yes``, ``on``,
bare dates and ``1_000`` stay strings), bounded so that a hostile SKILL.md
(a billion-laughs alias bomb, 5,000 nested brackets, a 5,000-digit number)
becomes an entry in the skills error list instead of eating the server.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import yaml

from ..files.reading import read_bytes
from ..text.yaml_frontmatter import FrontmatterRefused, js_string, load_frontmatter
from .model import SkillDefinition, SkillLevel

_FRONTMATTER = re.compile(r"^---\n([\s\S]*?)\n---(?:\n|$)([\s\S]*)$")
# `^[\p{L}\p{N}_:.-]+$`: Python's `\w` on str is exactly letters, numbers and `_`.
_NAME_OK = re.compile(r"^[\w:.-]+$")
_NAME_PATTERN_TEXT = r"/^[\p{L}\p{N}_:.-]+$/u"
_DRIVE = re.compile(r"^[A-Za-z]:")


class SkillParseError(ValueError):
    """A SKILL.md that cannot become a skill; the message is user-facing."""


def normalize_content(text: str) -> str:
    """Drop a BOM and turn CRLF/CR into LF, as ``normalizeContent``."""
    if text.startswith("\ufeff"):
        text = text[1:]
    return text.replace("\r\n", "\n").replace("\r", "\n")


def split_frontmatter(text: str) -> tuple[str, str]:
    """``(yaml, rest)`` of a normalised file, or raise the reference error."""
    match = _FRONTMATTER.match(text)
    if match is None:
        raise SkillParseError("Invalid format: missing YAML frontmatter")
    return match.group(1), match.group(2)


def read_skill_file(path: Path) -> str:
    """The file as text; undecodable bytes become U+FFFD like Node's ``utf8`` read."""
    return read_bytes(path).decode("utf-8", errors="replace")


def parse_skill(content: str, path: Path, level: SkillLevel) -> tuple[SkillDefinition, str]:
    """Parse one SKILL.md into its definition and trimmed body.

    Raises :class:`SkillParseError` whose message is already wrapped as
    ``Failed to parse skill file: <reason>``.
    """
    try:
        return _parse(content, path, level)
    except SkillParseError as exc:
        raise SkillParseError(f"Failed to parse skill file: {exc}") from None
    except yaml.YAMLError as exc:
        raise SkillParseError(f"Failed to parse skill file: {_yaml_message(exc)}") from None


def _yaml_message(exc: yaml.YAMLError) -> str:
    """One line naming the problem and where it is in the frontmatter."""
    if isinstance(exc, FrontmatterRefused):
        return f"frontmatter refused: {exc}"
    if isinstance(exc, yaml.MarkedYAMLError) and exc.problem:
        where = exc.problem_mark or exc.context_mark
        at = f" at line {where.line + 2}, column {where.column + 1}" if where is not None else ""
        context = f" ({exc.context})" if exc.context else ""
        return f"invalid YAML frontmatter{at}: {exc.problem}{context}"
    return f"invalid YAML frontmatter: {' '.join(str(exc).split())}"


def _parse(content: str, path: Path, level: SkillLevel) -> tuple[SkillDefinition, str]:
    front_text, rest = split_frontmatter(normalize_content(content))
    front = load_frontmatter(front_text)
    if not isinstance(front, dict):
        front = {}
    name_raw = front.get("name")
    desc_raw = front.get("description")
    if name_raw is None or name_raw == "":
        raise SkillParseError('Missing "name" in frontmatter')
    if desc_raw is None or desc_raw == "":
        raise SkillParseError('Missing "description" in frontmatter')
    name = js_string(name_raw)
    if not _NAME_OK.match(name):
        raise SkillParseError(
            f'"name" must match {_NAME_PATTERN_TEXT} (letters, digits, _, :, ., -); got "{name}"'
        )
    description = js_string(desc_raw)
    if not description.strip():
        raise SkillParseError('Validation failed: "description" cannot be empty')

    paths, path_problems = parse_paths_field(front.get("paths"))
    definition = SkillDefinition(
        name=name,
        description=description,
        level=level,
        path=path,
        when_to_use=_optional_str(front.get("when_to_use")),
        paths=paths,
        path_problems=path_problems,
        allowed_tools=_parse_allowed_tools(front.get("allowedTools")),
        model=_parse_model(front),
        argument_hint=_optional_str(front.get("argument-hint")),
        disable_model_invocation=_is_true(front.get("disable-model-invocation")),
        user_invocable=_parse_user_invocable(front.get("user-invocable")),
        priority=_parse_priority(front.get("priority")),
    )
    return definition, rest.strip()


def _optional_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _parse_allowed_tools(raw: Any) -> tuple[str, ...] | None:
    if raw is None:
        return None
    if not isinstance(raw, list):
        raise SkillParseError('"allowedTools" must be an array')
    return tuple(js_string(item) for item in raw)


def _parse_model(front: dict[str, Any]) -> str | None:
    if "model" not in front:
        return None
    raw = front["model"]
    if not isinstance(raw, str):
        raise SkillParseError('"model" must be a string')
    trimmed = raw.strip()
    return None if trimmed in ("", "inherit") else trimmed


def _is_true(raw: Any) -> bool:
    """``true`` or ``'true'`` exactly (``1`` is not, as in JS's ``===``)."""
    return raw is True or raw == "true"


def _parse_user_invocable(raw: Any) -> bool | None:
    if _is_true(raw):
        return True
    if raw is False or raw == "false":
        return False
    return None


def _parse_priority(raw: Any) -> float | None:
    """A finite number, else ignored (the reference only warns)."""
    if raw is None or raw == "" or isinstance(raw, bool):
        return None
    if isinstance(raw, (int, float)) and math.isfinite(raw):
        return raw
    return None


def parse_paths_field(raw: Any) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """``paths:`` globs (empty means unconditional) and ``(glob, message)`` problems.

    Absolute patterns and ``..`` segments can never match (activation only
    sees project-relative paths), so each such glob is dropped and reported
    and the skill's other globs still apply. Only when nothing is left is the
    skill refused: dropping every glob would silently turn a conditional
    skill into an always-on one. A ``[`` that is never closed is kept (it
    matches literally, as in picomatch) but reported, since it is almost
    always a typo.
    """
    if raw is None:
        return (), ()
    if not isinstance(raw, list):
        raise SkillParseError('"paths" must be an array of glob patterns')
    cleaned = [p for p in (js_string(item).strip() for item in raw) if p]
    kept: list[str] = []
    problems: list[tuple[str, str]] = []
    for pattern in cleaned:
        why = _unusable_glob(pattern)
        if why is not None:
            problems.append((pattern, f'Invalid glob in "paths": {pattern} \u2014 {why}; dropped'))
            continue
        kept.append(pattern)
        if _has_unclosed_bracket(pattern):
            message = '"[" is never closed, so it only matches that text literally'
            problems.append((pattern, f'Suspicious glob in "paths": {pattern} \u2014 {message}'))
    if cleaned and not kept:
        raise SkillParseError(f"{problems[0][1]}; no usable glob is left, so the skill could never activate")
    return tuple(kept), tuple(problems)


def _unusable_glob(pattern: str) -> str | None:
    """Why a glob can never match a project-relative path, or None."""
    normalized = pattern.replace("\\", "/")
    if normalized.startswith("/") or _DRIVE.match(normalized):
        return "looks absolute; patterns are project-root-relative (drop the leading slash / drive letter)"
    if ".." in normalized.split("/"):
        return 'contains a ".." segment that escapes the project root; patterns must stay within the project'
    return None


def _has_unclosed_bracket(pattern: str) -> bool:
    """A ``[`` (not escaped) with no ``]`` after it."""
    opened = False
    escaped = False
    for ch in pattern:
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == "[":
            opened = True
        elif ch == "]":
            opened = False
    return opened
