"""Where Qwen Code keeps things on disk (docs/context.md, docs/memory.md), shared by every core.

One module owns these rules so that sessions, memory, skills and context
discovery agree with each other and with the Qwen Code CLI: a user who
switches between the CLI and this server must find the same files.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from .reading import read_bytes

_NON_ALNUM = re.compile(r"[^A-Za-z0-9]")
_MAX_POINTER = 4096
"""A ``.git`` file or ``HEAD`` holds one line."""


def home_dir() -> Path:
    """The user's home as Qwen Code sees it.

    When ``QWEN_HOME`` is set, ``~`` means its parent (docs/memory.md), so that
    ``~/.agents/skills`` and ``~/QWEN.md`` move together with ``~/.qwen``.
    """
    qwen_home = os.environ.get("QWEN_HOME", "").strip()
    if qwen_home:
        return Path(qwen_home).expanduser().resolve().parent
    return Path.home()


def global_qwen_dir() -> Path:
    """``~/.qwen`` or ``QWEN_HOME`` (Qwen Code's ``Storage.getGlobalQwenDir``)."""
    return Path(global_qwen_path())


def global_qwen_path() -> str:
    """:func:`global_qwen_dir` as a string, for the cold context build (a ``Path`` costs ~10 µs to make there)."""
    qwen_home = os.environ.get("QWEN_HOME", "").strip()
    if qwen_home:
        return str(Path(qwen_home).expanduser().resolve())
    return os.path.join(os.path.expanduser("~"), ".qwen")


def sanitize_cwd(path: str | os.PathLike[str]) -> str:
    """Qwen Code's ``sanitizeCwd``: every character outside ``[A-Za-z0-9]`` becomes ``-``.

    ``/home/a/repo`` → ``-home-a-repo``; ``/w/my_repo.v2`` → ``-w-my-repo-v2``.
    """
    return _NON_ALNUM.sub("-", str(path))


def project_state_dir(root: str | os.PathLike[str]) -> Path:
    """``~/.qwen/projects/<sanitized root>``: chats, memory and cursors of one project."""
    return global_qwen_dir() / "projects" / sanitize_cwd(Path(root).resolve())


def chats_dir(cwd: str | os.PathLike[str]) -> Path:
    """Where the session JSONL files of a working directory live."""
    return project_state_dir(cwd) / "chats"


def find_git_root(start: str | os.PathLike[str], *, resolve: bool = True) -> Path | None:
    """Nearest ancestor (or ``start`` itself) holding ``.git`` — a directory or a file.

    A ``.git`` *file* marks worktrees and submodules; Qwen Code counts it too.
    ``resolve=False`` walks the lexical path instead (``path.dirname`` steps,
    as Qwen Code's ``findGitRoot`` in ``memory/paths.ts``), so a project under
    a symlinked directory keeps the spelling Qwen Code derives its memory
    paths from. Context discovery asks a stricter question per directory
    (``context/text.py``'s ``GitAncestry``, memoised for a whole build).
    """
    cur = str(Path(start).resolve()) if resolve else os.path.abspath(start)
    while True:
        if os.path.exists(os.path.join(cur, ".git")):
            return Path(cur)
        parent = os.path.dirname(cur)
        if parent == cur:
            return None
        cur = parent


def git_branch(start: str | os.PathLike[str]) -> str | None:
    """The checked-out branch of the repository holding ``start``, read from ``HEAD``.

    Reads the file instead of running git: it is called once per session and
    must not fail or block when git is missing, nor on what a repository put in
    place of ``.git`` or ``HEAD`` (a FIFO, a huge file): each is read bounded,
    regular files only. A detached HEAD gives None.
    """
    root = find_git_root(start)
    if root is None:
        return None
    git = root / ".git"
    try:
        if git.is_file():  # worktree / submodule: "gitdir: <path>"
            pointer = read_bytes(git, _MAX_POINTER).decode("utf-8", errors="replace").strip()
            if not pointer.startswith("gitdir:"):
                return None
            git = (root / pointer.removeprefix("gitdir:").strip()).resolve()
        head = read_bytes(git / "HEAD", _MAX_POINTER).decode("utf-8", errors="replace").strip()
    except OSError:
        return None
    prefix = "ref: refs/heads/"
    return head[len(prefix) :] if head.startswith(prefix) else None
