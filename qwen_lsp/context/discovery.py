"""Hierarchical discovery of ``QWEN.md`` / ``AGENTS.md`` (spec §2.2–2.3, as Qwen Code 0.24 does it).

The order of the blocks is what the model reads as precedence, so it must
be exactly Qwen Code's:

* **grouped by filename**: for each name in the list (``QWEN.md`` then
  ``AGENTS.md``), the global ``~/.qwen/<name>`` first, then the upward scan
  from cwd, outermost first;
* the upward scan stops at the parent of the git root (a ``.git``
  directory *or file*), that stop directory included; with no git root it
  stops at the parent of HOME; it never enters ``~/.qwen``;
* when cwd is HOME, only ``~/<name>`` is looked at (no scan);
* extra files (``output-language.md``) after every filename group;
* ``<git root>/.qwen/QWEN.local.md`` last, only when there is a real git
  root and the folder is trusted;
* duplicates removed by real path, the first lexical path kept.

An untrusted folder gets only the global files. Subdirectories below cwd
are never scanned. Each file is read as UTF-8 (bad bytes replaced),
imports expanded, and attached as a ``--- Context from: <path relative to
cwd> ---`` block if its trimmed text is not blank.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass, field

from .imports import ImportTrace, process_imports
from .text import Problem, find_project_root, js_trim, lexical_abspath, read_text, relative_path, strip_ansi_and_control

log = logging.getLogger(__name__)

LOCAL_CONTEXT_FILENAME = "QWEN.local.md"
QWEN_DIR = ".qwen"


@dataclass(frozen=True)
class ContextFile:
    path: str  # absolute, lexical
    display: str  # path relative to cwd, as in the block markers
    content: str | None  # imports expanded; None when the file could not be read

    @property
    def attached(self) -> bool:
        return self.content is not None and bool(js_trim(self.content))

    def block(self) -> str:
        assert self.content is not None
        return (
            f"--- Context from: {self.display} ---\n{js_trim(self.content)}\n"
            f"--- End of Context from: {self.display} ---"
        )


@dataclass
class Discovery:
    """The result of one discovery pass, with everything needed to know when it goes stale."""

    files: list[ContextFile]
    project_root: str | None  # the real git root, if any
    scanned_dirs: list[str]  # directories where a new context file would change the result
    dependencies: set[str] = field(default_factory=set)  # every file read or looked for by imports
    problems: list[Problem] = field(default_factory=list)

    def text(self) -> str:
        return "\n\n".join(f.block() for f in self.files if f.attached)


def _readable(path: str) -> bool:
    return os.access(path, os.R_OK)


def _scan_dirs(cwd: str, home: str, global_dir: str, root: str | None) -> list[str]:
    """The directories of the upward scan, innermost first (the filesystem root is never scanned)."""
    stop = os.path.dirname(root) if root else os.path.dirname(home)
    home_qwen = os.path.join(home, QWEN_DIR)
    dirs: list[str] = []
    cur = cwd
    while cur:
        parent = os.path.dirname(cur)
        if parent == cur or cur == global_dir or cur == home_qwen:
            break
        dirs.append(cur)
        if cur == stop:
            break
        cur = parent
    return dirs


def context_file_paths(
    cwd: str,
    filenames: Sequence[str],
    *,
    home: str,
    global_dir: str,
    trusted: bool,
    extra_paths: Sequence[str] = (),
    roots: dict[str, str | None] | None = None,
) -> tuple[list[str], str | None, list[str]]:
    """Ordered, de-duplicated context file paths; also the git root and the scanned directories.

    ``roots`` is the pass's ``find_project_root`` memo, shared with import
    expansion so the walk to the git root is done once.
    """
    cwd = lexical_abspath(cwd)
    home = lexical_abspath(home)
    global_dir = lexical_abspath(global_dir)
    root = find_project_root(cwd, roots)
    if cwd == home:  # lexical, as Qwen Code compares them: a symlink to HOME is not HOME
        dirs = [home]
    elif trusted:
        dirs = _scan_dirs(cwd, home, global_dir, root)
    else:
        dirs = []
    scanned = [global_dir, *(d for d in dirs if d != global_dir)]
    outermost_first = dirs[::-1]
    ordered: list[str] = []
    for name in filenames:
        global_path = os.path.join(global_dir, name)
        if _readable(global_path):
            ordered.append(global_path)
        for directory in outermost_first:
            candidate = os.path.join(directory, name)
            if candidate != global_path and _readable(candidate):
                ordered.append(candidate)
    ordered.extend(extra_paths)
    if trusted and root is not None:
        local = os.path.join(root, QWEN_DIR, LOCAL_CONTEXT_FILENAME)
        scanned.append(os.path.join(root, QWEN_DIR))
        if _readable(local):
            ordered.append(local)
    return _dedupe_by_realpath(list(dict.fromkeys(ordered))), root, scanned


def _dedupe_by_realpath(paths: list[str]) -> list[str]:
    """Keep the first lexical path of each real file (0.24's canonical dedupe).

    ``realpath`` is slow, and two paths can only share a real path if they
    share an inode, so it is computed only for inode collisions.
    """
    inodes: dict[tuple[int, int], int] = {}
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            continue
        key = (st.st_dev, st.st_ino)
        inodes[key] = inodes.get(key, 0) + 1
    if all(n == 1 for n in inodes.values()):
        return list(dict.fromkeys(paths))
    seen: set[str] = set()
    kept: list[str] = []
    for path in paths:
        try:
            identity = os.path.realpath(path, strict=True)
        except OSError:
            identity = lexical_abspath(path)
        if identity not in seen:
            seen.add(identity)
            kept.append(path)
    return kept


def display_path(path: str, cwd: str) -> str:
    return strip_ansi_and_control(relative_path(path, cwd) if os.path.isabs(path) else path)


def discover(
    cwd: str,
    filenames: Sequence[str],
    *,
    home: str,
    global_dir: str,
    trusted: bool = True,
    import_format: str = "tree",
    extra_paths: Sequence[str] = (),
) -> Discovery:
    """Find, read and import-expand every context file for ``cwd``. Never raises for bad files."""
    cwd = lexical_abspath(cwd)
    trace = ImportTrace()
    paths, root, scanned = context_file_paths(
        cwd, filenames, home=home, global_dir=global_dir, trusted=trusted, extra_paths=extra_paths, roots=trace.roots
    )
    files: list[ContextFile] = []
    for path in paths:
        trace.dependencies.add(path)
        try:
            raw = read_text(path, trace.problems)
        except OSError as exc:
            message = f"could not read context file: {exc.strerror or exc}"
            log.warning("%s: %s", path, message)
            trace.problems.append(Problem(path, message))
            files.append(ContextFile(path, display_path(path, cwd), None))
            continue
        content = process_imports(raw, path, import_format=import_format, trace=trace)
        files.append(ContextFile(path, display_path(path, cwd), content))
    return Discovery(files, root, scanned, trace.dependencies, trace.problems)
