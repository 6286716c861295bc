"""Undoing what an approved shell command wrote into team memory when it holds a secret.

The chat's ``write_file``/``edit`` are scanned before they write
(``team_guard.py``), as Qwen Code 0.24.4's ``checkTeamMemorySecrets``. A
shell command is not: 0.24.4's ``run_shell_command`` has no such check (run
against the scripted model in yolo, ``printf … > .qwen/team-memory/…`` with a
GitHub token left the file in place). Here it is refused all the same, with
the CLI's message, because ``.qwen/team-memory/`` is committed and a
credential there reaches every collaborator whichever tool put it there.

Why compare the folder before and after instead of refusing a command that
names it: a command reaches the folder in ways no reading of its text sees
(``cd .qwen && cd team-*``, a variable, a script or ``make`` target it runs,
``git checkout`` of a branch, a link made earlier), so judging the text would
refuse harmless commands and still miss writes. What the folder holds after
the command is the fact that matters, and it is checked only once the
command's whole process group is gone (``shell/run.py`` kills it),
also when the turn is cancelled. A process the command moved out of its
group (``setsid``) and left running can still write after the check: what
the guard sees is what the folder holds when the command is over.

So :func:`snapshot` records every entry below the team roots (a regular
file's bytes, a link's target text, a directory), links never followed;
:meth:`TeamSnapshot.undo_secret_writes` walks again and scans each entry the
command added or changed — a file's text, and a link's target text, which
git commits as the link. One that holds a secret is put back as it was (its
earlier bytes rewritten with no link followed on the way, its earlier link
made again) or removed when it is new, with the folders the command made for
it when they are left empty. Entries the command did not change stay, a
secret committed earlier included (it is not this command's). A changed file
larger than :data:`MAX_SCAN_BYTES` cannot be checked and is undone too.

Bounds: the snapshot keeps at most :data:`MAX_ENTRIES` entries and
:data:`MAX_SNAPSHOT_BYTES` of content; a larger team memory could not be put
back, so :class:`TeamMemoryTooLarge` refuses the command before it runs. A
root that resolves outside its repository (a planted link) is not walked:
the memory store refuses such a root and git commits only the link.

Everything here blocks on the file system: call it from a worker thread.
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ..errors import EngineError
from ..files.portability import open_for_reading
from .errors import SecretRefused
from .paths import QWEN_DIRNAME, TEAM_MEMORY_DIRNAME
from .secrets import scan_for_secrets
from ..files.nofollow_write import write_bytes_nofollow

log = logging.getLogger(__name__)

MAX_ENTRIES = 5_000
MAX_SNAPSHOT_BYTES = 16 * 1024 * 1024
MAX_SCAN_BYTES = 1024 * 1024

Kind = Literal["file", "link", "dir"]


@dataclass(frozen=True)
class _Entry:
    kind: Kind
    data: bytes = b""
    """A file's bytes or a link's target; empty for a directory."""
    stamp: tuple[int, int, int, int] = (0, 0, 0, 0)
    """``(inode, size, mtime_ns, ctime_ns)``: a file with the same stamp is unchanged and not read again."""


class TeamMemoryTooLarge(EngineError):
    """Team memory is too large to record, so what a command writes there could not be put back."""

    def __init__(self, root: Path) -> None:
        super().__init__(
            f"The command was not run: team memory ({root}) holds more than {MAX_ENTRIES} entries or "
            f"{MAX_SNAPSHOT_BYTES // (1024 * 1024)} MiB, too much to check what a shell command writes there. "
            "Write team memory with write_file or edit instead.",
            kind="memory_security",  # the guard cannot hold, as with a redirected root
        )


@dataclass
class SecretsUndone:
    """What :meth:`TeamSnapshot.undo_secret_writes` put back; ``message`` is Qwen Code's refusal."""

    labels: list[str] = field(default_factory=list)
    paths: list[Path] = field(default_factory=list)
    unchecked: list[Path] = field(default_factory=list)
    failed: list[Path] = field(default_factory=list)

    @property
    def message(self) -> str:
        lines = [SecretRefused(self.labels).message] if self.labels else []
        if self.unchecked:
            lines.append("Files too large to check for secrets were undone as well.")
        if self.paths or self.unchecked:
            lines.append("The command ran; its writes to team memory were undone: " + ", ".join(str(p) for p in self.paths + self.unchecked) + ".")
        if self.failed:
            lines.append("These could not be undone; remove the secret from them: " + ", ".join(str(p) for p in self.failed) + ".")
        return "\n".join(lines)


def _stamp(info: os.stat_result) -> tuple[int, int, int, int]:
    return (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def _read(path: Path, limit: int) -> bytes | None:
    """Up to ``limit + 1`` bytes of the regular file at ``path`` (no link followed); None when it is not one."""
    try:
        fd = open_for_reading(path, follow_links=False)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            return None
        return handle.read(limit + 1)


def _walk(root: Path, read_files: bool, budget: list[int]) -> dict[Path, _Entry]:
    """Every entry below ``root`` (``root`` itself when it is a directory), links recorded, never followed.

    ``budget`` is ``[entries left, bytes left]``; running out raises :class:`TeamMemoryTooLarge`.
    """
    out: dict[Path, _Entry] = {}
    if not root.is_dir():
        return out
    out[root] = _Entry("dir")
    stack = [root]  # no depth limit: links are never followed, so the walk cannot loop, and git commits any depth
    while stack:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for item in entries:
            budget[0] -= 1
            if budget[0] < 0:
                raise TeamMemoryTooLarge(root)
            path = Path(item.path)
            try:
                info = item.stat(follow_symlinks=False)
                if stat.S_ISLNK(info.st_mode):
                    out[path] = _Entry("link", os.fsencode(os.readlink(path)))
                elif stat.S_ISDIR(info.st_mode):
                    out[path] = _Entry("dir")
                    stack.append(path)
                elif stat.S_ISREG(info.st_mode):
                    data = b""
                    if read_files:
                        budget[1] -= info.st_size
                        if budget[1] < 0:
                            raise TeamMemoryTooLarge(root)
                        data = _read(path, info.st_size) or b""
                    out[path] = _Entry("file", data, _stamp(info))
            except OSError:
                continue
    return out


def team_roots(workspace_root: Path, repo_root: Path) -> list[Path]:
    """The workspace's team-memory folders to watch: the repository's (where both tools read it) and the folder's own."""
    roots = [repo_root / QWEN_DIRNAME / TEAM_MEMORY_DIRNAME, workspace_root / QWEN_DIRNAME / TEAM_MEMORY_DIRNAME]
    return list(dict.fromkeys(Path(os.path.abspath(r)) for r in roots))


def _contained(root: Path, repo_root: Path) -> bool:
    return Path(os.path.realpath(root)).is_relative_to(Path(os.path.realpath(repo_root)))


def snapshot(roots: Iterable[Path], repo_root: Path) -> TeamSnapshot:
    """Record the team roots before a command (see the module doc); raises :class:`TeamMemoryTooLarge`."""
    budget = [MAX_ENTRIES, MAX_SNAPSHOT_BYTES]
    watched = [r for r in roots if _contained(r, repo_root)]
    before: dict[Path, _Entry] = {}
    for root in watched:
        before.update(_walk(root, True, budget))
    return TeamSnapshot(watched, repo_root, before)


@dataclass
class TeamSnapshot:
    roots: list[Path]
    repo_root: Path
    before: dict[Path, _Entry]

    def undo_secret_writes(self) -> SecretsUndone | None:
        """Put back every added or changed entry that holds a secret; None when there was none."""
        undone = SecretsUndone()
        made_dirs: set[Path] = set()
        for root in self.roots:
            if not _contained(root, self.repo_root):
                continue
            after = _walk(root, False, [sys.maxsize, 0])  # what the command made is read only where it changed
            made_dirs.update(p for p, e in after.items() if e.kind == "dir" and self.before.get(p, _Entry("file")).kind != "dir")
            for path, entry in sorted(after.items()):
                if entry.kind == "dir":
                    continue
                verdict = self._judge(path, entry)
                if verdict is None:
                    continue
                undone.labels.extend(label for label in verdict if label not in undone.labels)
                try:
                    self._put_back(path)
                except OSError as exc:
                    log.warning("team memory: could not put back %s after a shell command: %s", path, exc)
                    undone.failed.append(path)
                    continue
                (undone.paths if verdict else undone.unchecked).append(path)
        if not (undone.paths or undone.unchecked or undone.failed):
            return None
        for folder in sorted(made_dirs, key=lambda p: len(p.parts), reverse=True):
            with contextlib.suppress(OSError):
                os.rmdir(folder)  # only when the command's folder is left empty
        return undone

    def _judge(self, path: Path, entry: _Entry) -> list[str] | None:
        """None: leave it; a list of labels: it holds a secret; an empty list: changed but too large to check."""
        old = self.before.get(path)
        if entry.kind == "link":
            if old == entry:
                return None
            return [m.label for m in scan_for_secrets(os.fsdecode(entry.data))] or None
        if old is not None and old.kind == "file" and old.stamp == entry.stamp:
            return None
        data = _read(path, MAX_SCAN_BYTES)
        if data is None or (old is not None and old.kind == "file" and old.data == data):
            return None
        if len(data) > MAX_SCAN_BYTES:
            return []
        return [m.label for m in scan_for_secrets(data.decode("utf-8", "replace"))] or None

    def _put_back(self, path: Path) -> None:
        """The entry as it was before the command (its folder resolved, so no link is followed writing it)."""
        parent = Path(os.path.realpath(path.parent))
        if not any(parent.is_relative_to(os.path.realpath(r)) for r in self.roots):
            return
        target = parent / path.name
        old = self.before.get(path)
        with contextlib.suppress(FileNotFoundError):
            if old is None or old.kind != "file":
                os.unlink(target)
        if old is None:
            return
        if old.kind == "file":
            write_bytes_nofollow(target, old.data)
        elif old.kind == "link":
            os.symlink(os.fsdecode(old.data), target)
        else:
            os.mkdir(target)
