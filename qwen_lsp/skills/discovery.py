"""Finding SKILL.md files on disk: levels, provider directories, precedence (Qwen Code's ``skill-manager.ts``).

A skill is ``<base>/<name>/SKILL.md`` where ``<base>`` is one of the
provider directories of a level. Within a level the first provider wins a
name; across levels project beats user beats bundled. Skill directories may
be symlinks, also to targets outside the base (the supported "one skills
repo, many links" workflow, docs/skills.md).

Parsing is memoised by ``(mtime, size)`` so a refresh after one edit
re-reads one file; the cache is rebuilt per load (never mutated), which lets
a load run on a worker thread while the previous result stays in use.
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..background import pace
from ..files.paths import global_qwen_dir, home_dir
from .model import SkillDefinition, SkillError, SkillLevel
from .parse import SkillParseError, parse_skill, read_skill_file

log = logging.getLogger(__name__)

PROVIDER_DIRS: tuple[str, ...] = (".qwen", ".agents")
SKILLS_DIR = "skills"
MANIFEST = "SKILL.md"
_INSTALL_ARTIFACT = re.compile(r"\.(?:backup|installing)-\d+-\d+$")

_StatKey = tuple[int, int, int]
ParseCache = dict[tuple[Path, SkillLevel], tuple[_StatKey, SkillDefinition | None, SkillError | None]]


def default_bundled_dir() -> Path:
    return Path(__file__).parent / "bundled"


def level_dirs(level: SkillLevel, project_root: Path, bundled_dir: Path) -> list[Path]:
    """The base directories of a level, in provider precedence order."""
    if level is SkillLevel.PROJECT:
        if _same_dir(project_root, home_dir()):
            return []  # the project would shadow the user level with the same files
        return [project_root / p / SKILLS_DIR for p in PROVIDER_DIRS]
    if level is SkillLevel.USER:
        return [global_qwen_dir() / SKILLS_DIR, home_dir() / ".agents" / SKILLS_DIR]
    return [bundled_dir]


def _same_dir(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


@dataclass
class LevelResult:
    skills: list[SkillDefinition] = field(default_factory=list)
    errors: list[SkillError] = field(default_factory=list)
    symlink_targets: list[Path] = field(default_factory=list)
    """Resolved targets of symlinked skill directories (watched in addition to the bases)."""


def load_level(level: SkillLevel, bases: list[Path], previous: ParseCache, cache: ParseCache) -> LevelResult:
    """Load every base of one level; first provider wins a duplicate name.

    ``previous`` is read, ``cache`` receives every entry seen this time.
    """
    result = LevelResult()
    seen: set[str] = set()
    for base in bases:
        for skill_dir, manifest in _skill_dirs(base, result):
            pace()  # a worker thread lets the event loop in between skills
            definition, error = _parse_cached(manifest, level, previous, cache)
            if error is not None:
                result.errors.append(error)
            if definition is None:
                continue
            if definition.name in seen:
                log.debug("skipping duplicate %s skill %s from %s", level.value, definition.name, base)
                continue
            seen.add(definition.name)
            result.skills.append(definition)
    return result


def _skill_dirs(base: Path, result: LevelResult) -> list[tuple[Path, Path]]:
    try:
        entries = sorted(os.scandir(base), key=lambda e: e.name)
    except FileNotFoundError:
        return []
    except OSError as exc:
        log.debug("cannot read skills directory %s: %s", base, exc)
        return []
    found = []
    for entry in entries:
        pace()
        if _INSTALL_ARTIFACT.search(entry.name):
            continue
        try:
            if entry.is_symlink():
                target = Path(entry.path).resolve(strict=True)
                if not target.is_dir():
                    log.warning("skipping symlink %s that does not point to a directory", entry.path)
                    continue
                result.symlink_targets.append(target)
            elif not entry.is_dir():
                continue
        except OSError as exc:
            log.warning("skipping invalid symlink %s: %s", entry.path, exc)
            continue
        manifest = Path(entry.path) / MANIFEST
        if manifest.is_file():
            found.append((Path(entry.path), manifest))
    return found


def _parse_cached(
    manifest: Path, level: SkillLevel, previous: ParseCache, cache: ParseCache
) -> tuple[SkillDefinition | None, SkillError | None]:
    try:
        st = manifest.stat()
    except OSError as exc:
        return None, SkillError(str(manifest), f"Failed to read skill file: {exc}")
    key = (st.st_mtime_ns, st.st_size, st.st_ino)
    hit = previous.get((manifest, level))
    if hit is not None and hit[0] == key:
        cache[(manifest, level)] = hit
        return hit[1], hit[2]
    definition, error = parse_manifest(manifest, level)
    cache[(manifest, level)] = (key, definition, error)
    return definition, error


def parse_manifest(manifest: Path, level: SkillLevel) -> tuple[SkillDefinition | None, SkillError | None]:
    """Read and parse one SKILL.md; a failure is returned, never raised."""
    try:
        text = read_skill_file(manifest)
    except OSError as exc:
        return None, SkillError(str(manifest), f"Failed to read skill file: {exc}")
    try:
        definition, _body = parse_skill(text, manifest, level)
    except SkillParseError as exc:
        log.warning("skill %s: %s", manifest, exc)
        return None, SkillError(str(manifest), str(exc))
    except Exception as exc:  # noqa: BLE001 - e.g. RecursionError from absurd YAML: one file, one error
        log.warning("skill %s: unexpected parse failure: %r", manifest, exc)
        return None, SkillError(str(manifest), f"Failed to parse skill file: {exc!r}")
    return definition, None
