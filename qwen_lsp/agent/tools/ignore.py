"""A minimal ``.gitignore`` so searches skip what the project itself ignores.

Qwen Code filters through its full git/qwen ignore service. This is the
small part of it that matters most for a read-only search: ``.git`` and
``node_modules`` are always skipped, and the patterns of the workspace
root's ``.gitignore`` (and ``.qwenignore``) apply. Known gaps, on purpose:
nested ignore files and ``!`` negations are not read.

Pattern rules follow gitignore: a trailing ``/`` matches directories only;
a pattern with a ``/`` elsewhere is anchored at the root; one without
matches the name at any depth.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ...files.containment import resolved_inside
from ...files.reading import read_bytes

log = logging.getLogger(__name__)

ALWAYS_SKIPPED = frozenset({".git", "node_modules"})
IGNORE_FILES = (".gitignore", ".qwenignore")


@dataclass(frozen=True)
class _Pattern:
    text: str
    anchored: bool
    dir_only: bool


@dataclass
class IgnoreRules:
    """Which paths under ``root`` a search should not enter or report."""

    root: Path
    patterns: list[_Pattern] = field(default_factory=list)

    @classmethod
    def for_workspace(cls, root: Path) -> IgnoreRules:
        rules = cls(root=root.resolve())
        for name in IGNORE_FILES:
            try:
                text = read_bytes(rules.root / name).decode("utf-8", errors="replace")
            except OSError:
                continue
            for line in text.splitlines():
                pattern = _parse(line)
                if pattern is not None:
                    rules.patterns.append(pattern)
        return rules

    def ignored(self, path: Path, is_dir: bool) -> bool:
        """True when ``path`` (absolute, under ``root``) is skipped. Parents are not checked: callers prune."""
        if path.name in ALWAYS_SKIPPED:
            return True
        if not self.patterns:
            return False
        from wcmatch import fnmatch, glob  # imported when a search first meets a pattern, not when the tools are declared

        try:
            rel = path.relative_to(self.root).as_posix()
        except ValueError:
            return False
        for pattern in self.patterns:
            if pattern.dir_only and not is_dir:
                continue
            if pattern.anchored:
                if glob.globmatch(rel, pattern.text, flags=glob.GLOBSTAR | glob.DOTGLOB | glob.BRACE):
                    return True
            elif fnmatch.fnmatch(path.name, pattern.text, flags=fnmatch.DOTMATCH | fnmatch.BRACE):
                return True
        return False


def _parse(line: str) -> _Pattern | None:
    text = line.rstrip()
    if not text or text.startswith("#") or text.startswith("!"):
        return None
    if text.startswith("\\"):
        text = text[1:]
    dir_only = text.endswith("/")
    text = text.rstrip("/")
    anchored = "/" in text
    text = text.lstrip("/")
    if not text:
        return None
    return _Pattern(text=text, anchored=anchored, dir_only=dir_only)


def walk_files(start: Path, rules: IgnoreRules) -> Iterator[Path]:
    """Files under ``start`` in a stable order, pruning ignored directories.

    Symlinked directories are not entered (so link loops cannot trap the
    walk), and a symlinked file is yielded only when it resolves inside the
    workspace: the repository may hold ``pw -> /etc/passwd``.
    """
    for here, dirnames, filenames in _walk_top_down(start):
        dirnames[:] = sorted(d for d in dirnames if not rules.ignored(here / d, is_dir=True))
        for name in sorted(filenames):
            path = here / name
            if rules.ignored(path, is_dir=False):
                continue
            if path.is_symlink() and resolved_inside(path, rules.root) is None:
                log.debug("Skipping %s: its link leads outside the workspace", path)
                continue
            yield path


def _walk_top_down(start: Path) -> Iterator[tuple[Path, list[str], list[str]]]:
    """``os.walk`` top-down without following links, on an explicit stack.

    Python 3.11's ``os.walk`` recurses once per level: a directory nested
    1,100 deep raised ``RecursionError`` and broke ``grep_search`` and
    ``glob`` for the whole workspace. The caller may prune ``dirnames`` in
    place, as with ``os.walk``; directories are visited in the order given.
    """
    stack = [start]
    while stack:
        here = stack.pop()
        dirnames: list[str] = []
        filenames: list[str] = []
        links: set[str] = set()
        try:
            with os.scandir(here) as entries:
                for entry in entries:
                    try:
                        is_dir = entry.is_dir()  # as os.walk: a link to a directory is listed as one, never entered
                        if is_dir and entry.is_symlink():
                            links.add(entry.name)
                    except OSError:
                        is_dir = False
                    (dirnames if is_dir else filenames).append(entry.name)
        except OSError as exc:
            log.debug("Skipping unreadable directory: %s", exc)
            continue
        yield here, dirnames, filenames
        stack.extend(here / name for name in reversed(dirnames) if name not in links)
