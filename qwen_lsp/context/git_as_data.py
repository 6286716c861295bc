"""Run ``git`` on a repository as data: with a configuration of ours, never the repository's (docs/security.md, "Git as data").

A repository's ``.git/config`` can name programs for git to run: filter
drivers (``filter.<any name>.clean`` / ``.process``, picked by
``.gitattributes``, run by ``git status`` whenever a file's stat differs from
the index), ``core.fsmonitor``, hooks and ``core.hooksPath``, ``gpg.program``,
``diff.<name>.textconv``, pagers, and ``include``/``includeIf`` can pull any
of those in from another file. Driver names cannot be listed in advance, so
neutralising them one ``-c`` at a time cannot be complete.

Instead git reads a configuration we wrote. ``GIT_COMMON_DIR`` points at a
scratch directory holding our ``config`` and links to the repository's
data only (``objects``, ``refs``, ``packed-refs``, ``info``, ``shallow``);
``GIT_DIR`` stays the real one for ``HEAD`` and the index. Git takes
``config`` and ``hooks`` from the common directory, so the repository's
config is never read; the system and global files are switched off too
(``GIT_CONFIG_NOSYSTEM``, ``GIT_CONFIG_GLOBAL=/dev/null``), and every
inherited ``GIT_*`` variable is dropped. With no driver configured, a
``filter=`` attribute is a no-op. Submodules are not entered
(``--ignore-submodules=all``): their own config would be read there.

Compared with Qwen Code 0.24.4's ``getRecentGitStatus``, which runs
``git -c core.fsmonitor= -c log.showSignature=false`` on the repository
as it is (and so runs its filters): the same commands and output, except
that the repository's own ``status.*`` preferences and dirty submodules are
not shown. Qwen Code takes the snapshot whatever the folder trust; so do we,
since nothing the repository configures runs.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import tempfile
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..files.reading import read_bytes

_DATA = ("objects", "refs", "packed-refs", "info", "shallow", "reftable")
"""What git reads from the common directory besides ``config`` and ``hooks``: data, linked as it is."""
_FORMAT_KEYS = {"objectformat", "refstorage"}
"""``extensions.*`` keys that describe how the data is stored (git cannot read a sha256 repository without them)."""
_MAX_CONFIG_BYTES = 1 << 20
_MAX_POINTER_BYTES = 4096  # a .git file or commondir holds one path
_OUR_CONFIG = (
    "[core]\n\trepositoryformatversion = {version}\n\tbare = false\n\tfsmonitor = false\n"
    "\thooksPath = /dev/null\n\tuntrackedCache = false\n[log]\n\tshowSignature = false\n{extensions}"
)


@dataclass(frozen=True)
class GitCommand:
    """One ``git`` invocation: its arguments, and whether it runs in the C locale (output that is parsed)."""

    args: tuple[str, ...]
    c_locale: bool = False


def located_repository(cwd: str) -> tuple[Path, Path, Path]:
    """The work tree, git directory and common directory of the repository holding ``cwd``; raises
    ``ValueError``/``OSError`` when there is none."""
    worktree, gitdir = _locate(Path(cwd))
    common = _common_dir(gitdir)
    if not _could_be_git_dir(gitdir, common):
        raise ValueError(f"{gitdir} is not a git directory (no HEAD, objects or refs)")
    return worktree, gitdir, common


StateMark = tuple[tuple[int, int, int] | None, ...]
"""``(mtime_ns, size, inode)`` of each of a repository's state files (None: absent)."""


def state_files(cwd: str) -> tuple[Path, ...]:
    """The files a commit, checkout, stage, reset or stash rewrites in the repository holding ``cwd``: its
    ``HEAD`` and ``index``, the ``packed-refs``, the reftable list and the checked-out branch's loose ref;
    none outside a repository. Blocking (reads ``HEAD``, bounded, regular files only); :func:`state_mark`
    then tells cheaply whether any of them changed."""
    try:
        _, gitdir, common = located_repository(cwd)
        head = read_bytes(gitdir / "HEAD", _MAX_POINTER_BYTES).decode("utf-8", errors="replace").strip()
    except (OSError, ValueError):
        return ()
    files = [gitdir / "HEAD", gitdir / "index", common / "packed-refs", common / "reftable" / "tables.list"]
    parts = head.removeprefix("ref: ").split("/") if head.startswith("ref: refs/") else []
    if parts and all(part not in ("", ".", "..") for part in parts):  # only ever lstat'ed, but kept below refs/
        files.append(common.joinpath(*parts))
    return tuple(files)


def state_mark(files: Sequence[Path]) -> StateMark:
    """Each file's ``lstat`` (nothing opened, no link followed): a few system calls, fine on the event loop."""
    marks: list[tuple[int, int, int] | None] = []
    for path in files:
        try:
            st = os.lstat(path)
        except OSError:
            marks.append(None)
        else:
            marks.append((st.st_mtime_ns, st.st_size, st.st_ino))
    return tuple(marks)


def clean_env() -> dict[str, str]:
    """This process's environment without any ``GIT_*`` variable: none of them may point git elsewhere."""
    return {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}


def git_env(worktree: Path, gitdir: Path, scratch: Path) -> dict[str, str]:
    """The environment of every git this server runs (one list, for reading and for team sync alike): the
    repository named explicitly, its configuration read only from ``scratch`` (the shadow copy), no
    system or global configuration or attributes, no prompt, no pager."""
    return {
        **clean_env(),
        "GIT_DIR": str(gitdir),
        "GIT_COMMON_DIR": str(scratch),
        "GIT_WORK_TREE": str(worktree),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_ATTR_NOSYSTEM": "1",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_PAGER": "cat",
    }


def run_git_as_data(cwd: str, commands: Sequence[GitCommand], *, timeout: float) -> list[str]:
    """The output of each of ``commands`` in ``cwd`` with our configuration, run at the same time, all
    within ``timeout``; raises ``OSError``/``SubprocessError``/``ValueError`` when any fails.

    At the same time because each is a process start (a few milliseconds) on a new chat's path to
    its first request; they only read (``GIT_OPTIONAL_LOCKS=0``), so they cannot disturb each other.
    """
    worktree, gitdir, common = located_repository(cwd)
    shadow = _shadow_for(common)
    with shadow.synced() as scratch:
        env = {**git_env(worktree, gitdir, scratch), "GIT_OPTIONAL_LOCKS": "0"}
        deadline = time.monotonic() + timeout
        procs: list[subprocess.Popen[bytes]] = []
        try:
            for command in commands:
                procs.append(subprocess.Popen(
                    ["git", "--no-pager", "--no-optional-locks", *command.args],
                    cwd=cwd,
                    env={**env, "LC_ALL": "C"} if command.c_locale else env,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                ))
            outputs = []
            for proc in procs:
                out, err = proc.communicate(timeout=max(0.0, deadline - time.monotonic()))
                if proc.returncode:
                    raise subprocess.CalledProcessError(proc.returncode, proc.args, out, err)
                outputs.append(out.decode("utf-8", errors="replace"))
            return outputs
        finally:
            for proc in procs:
                if proc.poll() is None:
                    proc.kill()
                proc.communicate()


class _Shadow:
    """Our common directory for one repository, kept while it is in use or among the recent ones.

    Made once instead of per snapshot: creating the scratch directory, its config and links and
    removing them again were ~4 ms of file-system work on every new chat's path. Each use still
    re-reads the repository's config and re-checks which data entries exist, so the directory
    always matches the repository as it is now; it is removed when dropped or at exit.
    """

    def __init__(self, common: Path) -> None:
        self._dir = tempfile.TemporaryDirectory(prefix="qwen-lsp-git-")
        self.path = Path(self._dir.name)
        self._common = common
        self._lock = threading.Lock()
        self._config: str | None = None

    @contextlib.contextmanager
    def synced(self, extra: str = "") -> Iterator[Path]:
        """The directory, brought in line with the repository; held (not removed) until the block ends.

        ``extra`` is appended to our config (``git_sync.py``'s carried remote and branch keys)."""
        config = _our_config(self._common / "config") + extra
        with self._lock:
            if config != self._config:
                staged = self.path / "config.new"
                staged.write_text(config)
                os.replace(staged, self.path / "config")  # a git reading it sees the old or the new file whole
                self._config = config
            for name in _DATA:
                theirs, ours = self._common / name, self.path / name
                if os.path.lexists(theirs) != os.path.lexists(ours):
                    if os.path.lexists(ours):
                        ours.unlink()
                    else:
                        ours.symlink_to(theirs)
        yield self.path


_SHADOWS: OrderedDict[tuple[Path, str], _Shadow] = OrderedDict()
_SHADOWS_LOCK = threading.Lock()
_MAX_SHADOWS = 16
"""Repositories whose shadow is kept; an older one is removed once no snapshot uses it."""


def _shadow_for(common: Path, purpose: str = "read") -> _Shadow:
    """``purpose`` keeps the snapshot's shadow apart from a sync's, whose config differs (``git_sync.py``)."""
    with _SHADOWS_LOCK:
        shadow = _SHADOWS.pop((common, purpose), None)
        if shadow is None or not shadow.path.is_dir():  # new, or removed under us (a /tmp cleaner)
            shadow = _Shadow(common)
        _SHADOWS[(common, purpose)] = shadow
        while len(_SHADOWS) > _MAX_SHADOWS:
            _SHADOWS.popitem(last=False)  # removed by its finalizer when its last user lets go
        return shadow


def _locate(start: Path) -> tuple[Path, Path]:
    """The work tree holding ``start`` and its git directory (a ``.git`` file's ``gitdir:`` followed)."""
    cur = start.resolve()
    while not os.path.lexists(cur / ".git"):
        if cur.parent == cur:
            raise ValueError("not in a git repository")
        cur = cur.parent
    dotgit = cur / ".git"
    if dotgit.is_dir():
        return cur, dotgit
    first = read_bytes(dotgit, _MAX_POINTER_BYTES).decode("utf-8", errors="replace").splitlines()[:1]
    if not first or not first[0].startswith("gitdir:"):
        raise ValueError(f"{dotgit} is neither a directory nor a gitdir file")
    return cur, (cur / first[0][len("gitdir:") :].strip()).resolve()


def _could_be_git_dir(gitdir: Path, common: Path) -> bool:
    """False when git would refuse ``gitdir`` at once: its ``HEAD``, or the common directory's ``objects`` or
    ``refs``, is missing.

    Git's ``is_git_directory`` (``setup.c``) requires all three before it reads anything else, and
    with ``GIT_DIR`` set it then dies with "not a git repository". An empty ``.git`` folder (a
    placeholder, a half-copied tree) is such a directory: finding it out here costs three
    ``lstat`` calls instead of a ``git`` process start per command on a new chat's way to its first
    request. Only the absent entries are decided here; anything present is left to git.
    """
    return os.path.lexists(gitdir / "HEAD") and os.path.lexists(common / "objects") and os.path.lexists(common / "refs")


def _common_dir(gitdir: Path) -> Path:
    """Where a linked worktree's shared data lives (its ``commondir`` file), else the git directory itself."""
    try:
        pointer = read_bytes(gitdir / "commondir", _MAX_POINTER_BYTES).decode("utf-8", errors="replace").strip()
    except FileNotFoundError:
        return gitdir
    return (gitdir / pointer).resolve()


def _our_config(theirs: Path) -> str:
    """Our config, carrying over only the ``extensions`` that say how the repository's data is stored."""
    try:
        text = read_bytes(theirs, _MAX_CONFIG_BYTES).decode("utf-8", errors="replace")
    except OSError:
        text = ""
    found: dict[str, str] = {}
    section = ""
    for line in text.splitlines():
        line = line.strip()
        header = re.match(r"\[\s*([A-Za-z0-9.-]+)\s*\]", line)
        if header:
            section = header.group(1).lower()
            continue
        entry = re.match(r"([A-Za-z][A-Za-z0-9-]*)\s*=\s*([A-Za-z0-9_-]+)\s*$", line)
        if section == "extensions" and entry and entry.group(1).lower() in _FORMAT_KEYS:
            found[entry.group(1).lower()] = entry.group(2)
    extensions = "".join(f"\t{k} = {v}\n" for k, v in sorted(found.items()))
    return _OUR_CONFIG.format(version=1 if found else 0, extensions=f"[extensions]\n{extensions}" if found else "")
