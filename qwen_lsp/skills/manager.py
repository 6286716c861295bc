"""The skill registry of one workspace: load, watch, activate, invoke.

A refresh rebuilds everything from disk into a new immutable-ish catalog
and swaps it in, so readers never see half a load and activations start
over (as Qwen Code's ``SkillActivationRegistry``, which is what makes an
edited ``paths:`` take effect at once). While watching, the disk work of a
refresh runs on a worker thread and the swap happens on the event loop.
"""

from __future__ import annotations

import asyncio
import logging
import os
import stat
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..text.collation import locale_key
from ..matching.globs import ActivationIndex, project_relative
from .discovery import ParseCache, default_bundled_dir, level_dirs, load_level
from .listing import SkillEntry
from .model import (
    LEVEL_ORDER,
    SkillDefinition,
    SkillError,
    SkillInfo,
    SkillLevel,
    SkillLoadError,
    SkillNotFound,
    SkillSetChange,
)
from .parse import SkillParseError, parse_skill, read_skill_file

if TYPE_CHECKING:  # watchdog loads only when watching starts: a one-shot `qwen-lsp chat` never watches
    from ..files.watching import DebouncedWatcher

log = logging.getLogger(__name__)

WATCH_DEBOUNCE_SECONDS = 0.15
WATCH_MAX_DEPTH = 2
"""chokidar ``depth`` in Qwen Code: ``<name>/SKILL.md`` needs no more, and deeper watches exhaust inotify."""


def build_skill_llm_content(base_dir: Path, body: str) -> str:
    """What the skill tool returns: the base-directory preamble, then the body."""
    return (
        f"Base directory for this skill: {base_dir}\n"
        "Important: ALWAYS resolve absolute paths from this base directory when working with skills.\n\n"
        f"{body}\n"
    )


@dataclass
class _Catalog:
    skills: list[SkillDefinition] = field(default_factory=list)
    """Deduplicated across levels, in precedence order."""
    errors: list[SkillError] = field(default_factory=list)
    index: ActivationIndex = field(default_factory=lambda: ActivationIndex([]))
    watch_roots: dict[Path, tuple[Path, ...]] = field(default_factory=dict)
    """Watched directory → the missing skills bases it stands in for (empty: it is a base itself)."""
    flat_roots: frozenset[Path] = frozenset()
    """Stand-ins for missing bases, watched only for their direct entries."""
    cache: ParseCache = field(default_factory=dict)
    activated: set[str] = field(default_factory=set)
    opened: dict[str, str] = field(default_factory=dict)
    """Activated conditional skill → the project-relative file that switched it on first."""

    def __post_init__(self) -> None:
        self.by_name = {s.name: s for s in self.skills}
        # Visible whatever is activated; with `activated` (conditional names only), the visible set.
        self.always_visible = frozenset(s.name for s in self.skills if not s.disable_model_invocation and not s.conditional)
        # What ``qwen/skills/list`` shows, minus activation: equal signatures mean the set on disk did
        # not move. Computed here, where the catalog is loaded (a worker thread), not on the event loop.
        self.signature = (
            tuple((s.name, s.level.value, str(s.path), s.description, s.conditional, s.paths) for s in sorted(self.skills, key=lambda s: locale_key(s.name))),
            tuple((e.path, e.message) for e in sorted(self.errors, key=lambda e: e.path)),
        )

    def visible(self, skill: SkillDefinition) -> bool:
        if skill.disable_model_invocation:
            return False
        return not skill.conditional or skill.name in self.activated


class SkillManager:
    """Skills of one project root (see the package docstring for the levels)."""

    def __init__(self, project_root: Path, *, enabled: bool = True, bundled_dir: Path | None = None) -> None:
        self._root = Path(project_root)
        self._real_root = self._root.resolve()
        self._enabled = enabled
        self._bundled_dir = bundled_dir if bundled_dir is not None else default_bundled_dir()
        self._catalog = _Catalog()
        self._watcher: DebouncedWatcher | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._on_change: Callable[[SkillSetChange], None] | None = None
        self._generation = 0
        self._loaded = False

    @property
    def project_root(self) -> Path:
        return self._root

    # -- loading ---------------------------------------------------------

    def refresh(self) -> SkillSetChange:
        """Reload every level from disk now; returns how the model-visible set moved."""
        return self._install(self._load(self._catalog.cache))

    async def reload(self) -> SkillSetChange:
        """:meth:`refresh` with the disk work on a worker thread, for a change of our own (an accepted proposal).

        A watcher refresh still in flight is dropped: it may have read the disk before the change.
        """
        self._generation += 1
        catalog = await asyncio.to_thread(self._load_and_watch, self._catalog.cache)
        return self._install(catalog, watch=False)

    def _load_and_watch(self, previous: ParseCache) -> _Catalog:
        """Blocking: load, then point the watches at the new roots (registering them walks the trees)."""
        catalog = self._load(previous)
        self._set_watches(catalog)
        return catalog

    @property
    def enabled(self) -> bool:
        """``skills.enabled``; after changing it, call :meth:`refresh` to apply."""
        return self._enabled

    @enabled.setter
    def enabled(self, value: bool) -> None:
        self._enabled = value

    def _load(self, previous: ParseCache) -> _Catalog:
        if not self._enabled:
            # The parse cache outlives the switch: turning skills back on re-reads only changed files.
            return _Catalog(cache=previous)
        cache: ParseCache = {}
        errors: list[SkillError] = []
        merged: list[SkillDefinition] = []
        seen: set[str] = set()
        watch_roots: dict[Path, tuple[Path, ...]] = {}
        for level in LEVEL_ORDER:
            bases = level_dirs(level, self._root, self._bundled_dir)
            try:
                result = load_level(level, bases, previous, cache)
            except Exception as exc:  # noqa: BLE001 - one broken level must not hide the others
                log.warning("failed to load %s level skills: %s", level.value, exc)
                where = str(bases[0]) if bases else level.value
                errors.append(SkillError(where, f"Failed to load {level.value} level skills: {exc}"))
                continue
            errors.extend(result.errors)
            for skill in result.skills:
                if skill.name not in seen:
                    seen.add(skill.name)
                    merged.append(skill)
            if level is not SkillLevel.BUNDLED:  # bundled skills ship with the package and never change
                for root, stands_for in self._watch_roots_for(bases).items():
                    watch_roots[root] = watch_roots.get(root, ()) + stands_for
                watch_roots.update((target, ()) for target in result.symlink_targets)
        conditional = [(s.name, s.paths) for s in merged if s.paths and not s.disable_model_invocation]
        index = ActivationIndex(conditional)
        paths_by_name = {s.name: s.path for s in merged}
        errors.extend(
            SkillError(f"{skill.path}#paths[{pattern}]", message) for skill in merged for pattern, message in skill.path_problems
        )
        for dropped in index.dropped:
            log.warning("skill %s: invalid glob %r dropped: %s", dropped.skill, dropped.pattern, dropped.message)
            errors.append(
                SkillError(
                    f"{paths_by_name[dropped.skill]}#paths[{dropped.pattern}]",
                    f'Invalid glob in "paths": {dropped.pattern} \u2014 {dropped.message}',
                )
            )
        flat = frozenset(root for root, stands_for in watch_roots.items() if stands_for)
        return _Catalog(merged, errors, index, watch_roots, flat, cache)

    @staticmethod
    def _watch_roots_for(bases: list[Path]) -> dict[Path, tuple[Path, ...]]:
        """Existing bases; a missing base is noticed through its nearest existing parent.

        The stand-in (``.qwen``/``.agents``, or the project root or home
        directory above them) is watched flat — only its own entries — since
        ``~/.qwen`` holds chats and memories and a project root holds
        everything: far too busy to watch whole. Once the base appears, the
        refresh that notices it watches the base itself.
        """
        roots: dict[Path, tuple[Path, ...]] = {}
        for base in bases:
            if base.is_dir():
                roots[base] = ()
                continue
            parent = base.parent if base.parent.is_dir() else base.parent.parent
            if parent.is_dir():
                roots[parent] = roots.get(parent, ()) + (base,)
        return roots

    def _install(self, catalog: _Catalog, *, watch: bool = True) -> SkillSetChange:
        self._loaded = True
        # Sets built on the worker: sorting 1,500 names twice here was the longest callback on the loop.
        before = self._catalog.always_visible | self._catalog.activated
        self._catalog = catalog
        after = catalog.always_visible | catalog.activated
        if watch and self._watcher is not None:
            self._set_watches(catalog)
        return SkillSetChange(added=sorted(after - before), removed=sorted(before - after))

    # -- watching --------------------------------------------------------

    def start_watching(self, loop: asyncio.AbstractEventLoop, on_change: Callable[[SkillSetChange], None]) -> None:
        """Follow project and user skill directories; ``on_change`` runs on ``loop`` after each refresh.

        It is called after every refresh the watcher triggers, also when the
        visible set did not move (a description may have changed). Loads
        the skills first if :meth:`refresh` was never called, since only
        existing skill directories can be watched.
        """
        from ..files.watching import DebouncedWatcher  # here, not at the top: see the TYPE_CHECKING import

        self.stop_watching()
        if not self._loaded:
            self.refresh()
        self._loop = loop
        self._on_change = on_change
        self._watcher = DebouncedWatcher(
            self._on_disk_change,
            debounce=WATCH_DEBOUNCE_SECONDS,
            ignore=self._ignored,
            max_depth=WATCH_MAX_DEPTH,
            loop=loop,
        )
        self._set_watches(self._catalog)

    def _set_watches(self, catalog: _Catalog) -> None:
        if self._watcher is not None:
            recursive = [r for r in catalog.watch_roots if r not in catalog.flat_roots]
            self._watcher.set_roots(recursive, flat=catalog.flat_roots)

    def stop_watching(self) -> None:
        if self._watcher is not None:
            self._watcher.stop()
            self._watcher = None

    @property
    def watched_dirs(self) -> frozenset[Path]:
        return self._watcher.watched if self._watcher is not None else frozenset()

    def _ignored(self, path: Path) -> bool:
        """Skip ``.git``, sockets/FIFOs/devices, and siblings of a not-yet-existing base."""
        if ".git" in path.parts:
            return True
        roots = self._catalog.watch_roots
        if not any(path.is_relative_to(r) for r, stands_for in roots.items() if not stands_for):
            # seen through a stand-in watch: only the way down to a missing base
            # (<root>/.qwen, then .qwen/skills/...) matters
            missing = [b for stands_for in roots.values() for b in stands_for]
            if not any(path.is_relative_to(b) or b.is_relative_to(path) for b in missing):
                return True
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            return False  # deleted: still worth a refresh
        return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode))

    def _on_disk_change(self, _paths: frozenset[Path]) -> None:
        """On the loop thread: load on a worker, install back on the loop."""
        loop = self._loop
        if loop is None or self._watcher is None:
            return
        self._generation += 1
        generation = self._generation
        future = loop.run_in_executor(None, self._load, self._catalog.cache)
        future.add_done_callback(lambda done: self._finish_refresh(generation, done))

    def _finish_refresh(self, generation: int, done: asyncio.Future[_Catalog] | Future[_Catalog]) -> None:
        if generation != self._generation or self._watcher is None:
            return  # a newer refresh is on its way, or watching stopped
        if done.cancelled():
            return
        exc = done.exception()
        if exc is not None:
            log.error("skill refresh failed: %s", exc)
            return
        change = self._install(done.result())
        if self._on_change is not None:
            try:
                self._on_change(change)
            except Exception:  # a failing listener must not stop later refreshes
                log.exception("skills change listener failed")

    # -- activation ------------------------------------------------------

    def activate_for_paths(self, paths: Iterable[Path | str]) -> list[str]:
        """Activate conditional skills whose globs match any of ``paths``; returns the new names.

        Paths may be absolute or relative to the project root; paths outside
        the root never match. Activation lasts until the next refresh.
        """
        catalog = self._catalog
        if not len(catalog.index):
            return []
        newly: list[str] = []
        for path in paths:
            rel = project_relative(path, self._root)
            if rel is None and self._real_root != self._root:
                rel = project_relative(path, self._real_root)
            if rel is None:
                continue
            for name in catalog.index.match(rel, catalog.activated.__contains__):
                catalog.activated.add(name)
                catalog.opened.setdefault(name, rel)
                newly.append(name)
        if newly:
            log.info("activated skills %s", ", ".join(newly))
        return newly

    # -- queries ---------------------------------------------------------

    def opened_by(self, name: str) -> str | None:
        """For a conditional skill a file switched on: that file (project-relative); else None."""
        return self._catalog.opened.get(name)

    def skill_path(self, name: str) -> str | None:
        """The skill's SKILL.md, absolute (None: no such skill)."""
        skill = self._catalog.by_name.get(name)
        return str(skill.path) if skill is not None else None

    def skills(self) -> list[SkillInfo]:
        """Every loaded skill (after precedence), sorted by name, with its activation state."""
        catalog = self._catalog
        return [
            SkillInfo(
                name=s.name,
                description=s.description,
                level=s.level.value,
                path=str(s.path),
                conditional=s.conditional,
                active=not s.conditional or s.name in catalog.activated,
                model_invocable=not s.disable_model_invocation,
                when_to_use=s.when_to_use,
                paths=s.paths,
            )
            for s in sorted(catalog.skills, key=lambda s: locale_key(s.name))
        ]

    @property
    def signature(self) -> tuple[object, ...]:
        """Equal between two loads when what ``qwen/skills/list`` shows (activation aside) did not change."""
        return self._catalog.signature

    def errors(self) -> list[SkillError]:
        return sorted(self._catalog.errors, key=lambda e: e.path)

    def get(self, name: str) -> SkillDefinition | None:
        return self._catalog.by_name.get(name)

    def visible_names(self) -> list[str]:
        """Skills the model may invoke right now."""
        catalog = self._catalog
        return sorted((s.name for s in catalog.skills if catalog.visible(s)), key=locale_key)

    def visible_entries(self) -> list[SkillEntry]:
        catalog = self._catalog
        return [
            SkillEntry(s.name, s.description, s.level.value, s.when_to_use)
            for s in catalog.skills
            if catalog.visible(s)
        ]

    # -- invocation ------------------------------------------------------

    def invocation_text(self, name: str) -> str:
        """The skill's current body with its base-directory preamble, read from disk now."""
        catalog = self._catalog
        skill = catalog.by_name.get(name)
        if skill is None or skill.disable_model_invocation:
            raise SkillNotFound(self._not_found_message(name))
        if not catalog.visible(skill):
            raise SkillNotFound(
                f'Skill "{name}" is gated by path-based activation (paths: frontmatter) and is not yet '
                "available. Access a file matching its paths patterns first to activate it."
            )
        try:
            _definition, body = parse_skill(read_skill_file(skill.path), skill.path, skill.level)
        except (OSError, SkillParseError) as exc:
            raise SkillLoadError(f'Failed to load skill "{name}": {exc}') from None
        return build_skill_llm_content(skill.base_dir, body)

    def _not_found_message(self, name: str) -> str:
        available = self.visible_names()
        text = f'Skill "{name}" not found. ' + (
            f"Available skills: {', '.join(available)}" if available else "No skills are currently available."
        )
        related = [e for e in self._catalog.errors if name and name in e.path]
        if related:
            text += "\nErrors:\n" + "\n".join(f"Parse error at {e.path}: {e.message}" for e in related)
        return text
