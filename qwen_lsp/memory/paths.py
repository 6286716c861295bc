"""Where each memory scope lives (Qwen Code's ``memory/paths.ts``; docs/memory.md), and which paths belong to which.

The roots must be the ones Qwen Code computes, byte for byte, or a user
switching between the CLI and the editor would see two different memories:

* base: ``QWEN_CODE_MEMORY_BASE_DIR`` (``~`` expanded) ?? ``QWEN_RUNTIME_DIR`` ??
  ``QWEN_HOME`` ?? ``~/.qwen`` (Qwen Code's ``Storage.getRuntimeBaseDir``);
* project: ``<base>/projects/<sanitizeCwd(gitRoot ?? resolve(projectRoot))>/memory/``
  (``resolve(projectRoot)`` alone with ``QWEN_CODE_MEMORY_PROJECT_SCOPE=workspace``),
  or ``<projectRoot>/.qwen/memory/`` with ``QWEN_CODE_MEMORY_LOCAL=1``;
* user: ``<base>/memories/``;
* team: ``<gitRoot ?? projectRoot>/.qwen/team-memory/`` — inside the repository.

Node's ``path.resolve`` is lexical (it does not follow symlinks), so the
project root is made absolute with :func:`os.path.abspath`, never
``Path.resolve``: a project opened through a symlinked path gets the same
directory name as in Qwen Code. Linked worktrees are not collapsed.

Containment has two flavours, as in Qwen Code. Project and user checks are
lexical (``path.relative``). The team check follows symlinks — including a
*dangling* leaf symlink — because a decoy link whose target does not exist
yet would otherwise be classified "not team" and skip the secret scan while
the write lands in team memory.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..files.containment import is_within
from ..files.paths import find_git_root, sanitize_cwd

log = logging.getLogger(__name__)

MEMORY_DIRNAME = "memory"
USER_MEMORY_DIRNAME = "memories"
TEAM_MEMORY_DIRNAME = "team-memory"
QWEN_DIRNAME = ".qwen"
INDEX_FILENAME = "MEMORY.md"
PINNED_DIRNAME = "pinned"
"""``memory/pinned/`` is protected: nothing here writes into it (as ``memory/paths.ts``)."""

MAX_SYMLINK_HOPS = 40
"""POSIX ``SYMLOOP_MAX``: how far a dangling leaf-symlink chain is followed."""


def expand_home(value: str, home: Path) -> str:
    """``~`` and ``~/…`` against ``home`` (not the process's HOME, so tests can use a scratch one)."""
    if value == "~":
        return str(home)
    if value.startswith("~/") or value.startswith("~" + os.sep):
        return os.path.join(str(home), value[2:])
    return value


def _absolute(value: str, home: Path) -> Path:
    return Path(os.path.abspath(expand_home(value, home)))


def memory_base(home: Path, env: Mapping[str, str]) -> Path:
    """The directory holding ``projects/`` and ``memories/`` (see the module docstring for the order)."""
    for name in ("QWEN_CODE_MEMORY_BASE_DIR", "QWEN_RUNTIME_DIR", "QWEN_HOME"):
        value = env.get(name, "").strip()
        if value:
            return _absolute(value, home)
    return Path(os.path.abspath(home)) / QWEN_DIRNAME


@dataclass(frozen=True)
class MemoryPaths:
    """Every root of one project's memory, computed once (Qwen Code memoises them too)."""

    project_root: Path
    """The workspace folder as given, made absolute lexically."""
    repo_root: Path
    """``gitRoot ?? projectRoot``: the anchor of project and team memory."""
    base: Path
    project: Path
    user: Path
    team: Path

    @property
    def state_dir(self) -> Path:
        """Parent of the project memory root: ``meta.json``, ``extract-cursor.json``, locks."""
        return self.project.parent


def workspace_scope(env: Mapping[str, str]) -> bool:
    """``QWEN_CODE_MEMORY_PROJECT_SCOPE=workspace`` (trimmed, any case): project memory is keyed by the
    workspace folder, not its git root, as Qwen Code 0.24.4's ``resolveWorkspaceProjectScope``; any
    other value keeps the git root (0.24.4 warns once about an unknown one)."""
    value = env.get("QWEN_CODE_MEMORY_PROJECT_SCOPE")
    if value is None:
        return False
    normalized = value.strip().lower()
    if normalized not in ("", "workspace", "git-root"):
        log.warning('Ignoring unrecognized QWEN_CODE_MEMORY_PROJECT_SCOPE="%s"; using "git-root".', value)
    return normalized == "workspace"


def memory_paths(project_root: Path, *, home: Path, env: Mapping[str, str]) -> MemoryPaths:
    root = Path(os.path.abspath(project_root))
    repo = find_git_root(root, resolve=False) or root
    base = memory_base(home, env)
    if env.get("QWEN_CODE_MEMORY_LOCAL") == "1":
        project = root / QWEN_DIRNAME / MEMORY_DIRNAME
    else:
        key = root if workspace_scope(env) else repo
        project = base / "projects" / sanitize_cwd(key) / MEMORY_DIRNAME
    return MemoryPaths(
        project_root=root,
        repo_root=repo,
        base=base,
        project=project,
        user=base / USER_MEMORY_DIRNAME,
        team=repo / QWEN_DIRNAME / TEAM_MEMORY_DIRNAME,
    )


def resolve_leaf_symlink(path: Path) -> Path:
    """Follow a symlink chain at ``path`` with ``lstat``/``readlink``, even when its end does not exist.

    ``os.path.exists`` reports a dangling link as missing, which is exactly
    what a decoy relies on; reading the link instead tells where the bytes of
    a write through it would land. Relative targets resolve against the
    link's *real* parent. At most :data:`MAX_SYMLINK_HOPS` hops; the caller
    range-checks whatever is reached.
    """
    current = os.path.abspath(path)
    for _ in range(MAX_SYMLINK_HOPS):
        try:
            if not os.path.islink(current):
                return Path(current)
            target = os.readlink(current)
        except OSError:
            return Path(current)
        if os.path.isabs(target):
            current = os.path.normpath(target)
        else:
            parent = os.path.dirname(current)
            try:
                parent = os.path.realpath(parent, strict=True)
            except OSError:
                pass
            current = os.path.normpath(os.path.join(parent, target))
    return Path(current)


def realpath_nearest_existing(path: Path) -> Path:
    """Where ``path`` really is: leaf links followed, then every link above it, the missing tail kept.

    A file that does not exist yet is placed where creating it would put
    it. Links in the middle are resolved even when they dangle (non-strict
    ``realpath``): ``root/link/x.md`` with ``link`` → ``/elsewhere/new`` is
    ``/elsewhere/new/x.md``, not ``root/link/x.md`` — walking up to the
    nearest *existing* ancestor (``os.path.exists`` is false for a dangling
    link) used to answer the latter, inside the root. A symlink loop is
    left where ``realpath`` stops.
    """
    return Path(os.path.realpath(resolve_leaf_symlink(path)))


def is_team_path(path: Path, paths: MemoryPaths) -> bool:
    """Spec ``isTeamAutoMemPath``: both sides through :func:`realpath_nearest_existing`."""
    return is_within(realpath_nearest_existing(paths.team), realpath_nearest_existing(path))
