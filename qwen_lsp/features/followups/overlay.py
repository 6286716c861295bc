"""The copy-on-write layer a speculation writes into (Qwen Code's ``OverlayFs``).

A speculation runs before the user has said yes, so none of its writes may
reach the workspace. Each write goes to a shadow file in a directory of its
own (under the project's state area, never inside the workspace), at the
same relative path as the workspace file it stands for; reads of a file the
speculation wrote are served from the shadow, everything else from the
workspace. Accepting copies the shadows' texts to the workspace (through the
editor); dismissing deletes the directory, so the workspace was never
touched.

A speculation that stopped part-way is accepted only up to its last
complete round (model answer plus every tool result): the writes of the
round it stopped in must not land. So the overlay keeps an undo journal of
the writes since the last :meth:`Overlay.checkpoint` (taken as each round
starts), and :meth:`Overlay.rewind` undoes them. The journal holds only the
current round's overwritten shadows, never the whole run.

Paths are the model's, hence untrusted: a path is mapped only when, with
its symlinks resolved, it lies inside the workspace — ``..`` and links that
lead out are refused (:class:`OutsideWorkspace`), so a shadow can never be
written outside the overlay directory either. Blocking: call the file
methods from a worker thread.
"""

from __future__ import annotations

import os
import shutil
import threading
from dataclasses import dataclass
from pathlib import Path

from ...files.reading import atomic_write_text


class OutsideWorkspace(ValueError):
    """The path does not lie inside the workspace once its links are followed."""


@dataclass(frozen=True)
class Change:
    """One workspace file the speculation wrote: where, what it read first, what it leaves."""

    path: Path
    """The workspace path (resolved)."""
    base: str | None
    """The workspace text when the speculation first wrote it (None: the file did not exist)."""
    text: str
    """The speculation's text."""


class Overlay:
    def __init__(self, workspace: Path, directory: Path) -> None:
        self.workspace = workspace.resolve()
        self.directory = directory
        if self.directory.resolve().is_relative_to(self.workspace):
            raise ValueError(f"an overlay directory must lie outside the workspace: {directory}")
        self._bases: dict[Path, str | None] = {}
        """Workspace path → its text before the first write (insertion order = write order)."""
        self._lock = threading.Lock()
        self._discarded = False
        """Set by :meth:`discard`; a write still in flight on a worker thread then fails instead of re-creating the directory."""
        self._sealed = False
        """Set by :meth:`rewind`: the run is over, a late write (a cancelled tool's thread) must not add to what accept applies."""
        self._journal: list[tuple[Path, str | None]] = []
        """Writes since the last checkpoint: (workspace path, its shadow's text before the write, None when it had none)."""

    def workspace_path(self, raw: str | os.PathLike[str]) -> Path:
        """``raw`` resolved (links followed) and checked to lie inside the workspace."""
        text = os.fspath(raw)
        if "\x00" in text:
            raise OutsideWorkspace("the path contains a NUL character")
        candidate = Path(text)
        if not candidate.is_absolute():
            candidate = self.workspace / candidate
        try:
            resolved = candidate.resolve()
        except (OSError, RuntimeError) as exc:  # a symlink loop
            raise OutsideWorkspace(f"{text}: {exc}") from None
        if resolved == self.workspace or not resolved.is_relative_to(self.workspace):
            raise OutsideWorkspace(f"{text} is not a file inside the workspace {self.workspace}")
        return resolved

    def shadow(self, path: Path) -> Path:
        """Where the shadow of the (resolved, contained) workspace ``path`` lives."""
        return self.directory / path.relative_to(self.workspace)

    def touched(self) -> list[Path]:
        """Workspace paths the speculation wrote, in the order first written."""
        return list(self._bases)

    def touches(self, raw: str | os.PathLike[str]) -> bool:
        try:
            return self.workspace_path(raw) in self._bases
        except OutsideWorkspace:
            return False

    def read_text(self, raw: str | os.PathLike[str]) -> str | None:
        """The shadow's text when the speculation wrote this file, else None (read the workspace)."""
        try:
            path = self.workspace_path(raw)
        except OutsideWorkspace:
            return None
        if path not in self._bases:
            return None
        return self.shadow(path).read_text(encoding="utf-8")

    def write_text(self, raw: str | os.PathLike[str], text: str, *, base: str | None) -> Path:
        """Write the shadow of ``raw``; ``base`` is the text the change was computed on (kept from the first write)."""
        path = self.workspace_path(raw)
        target = self.shadow(path)
        with self._lock:
            if self._discarded or self._sealed:
                raise OutsideWorkspace("the speculation was discarded" if self._discarded else "the speculation has ended")
            target.parent.mkdir(parents=True, exist_ok=True)
            if not target.parent.resolve().is_relative_to(self.directory.resolve()):  # a link planted in the overlay
                raise OutsideWorkspace(f"the shadow of {path} would leave the overlay directory {self.directory}")
            previous = target.read_text(encoding="utf-8") if path in self._bases else None
            atomic_write_text(target, text)
            self._journal.append((path, previous))
            self._bases.setdefault(path, base)
        return path

    def checkpoint(self) -> None:
        """The writes so far are kept for good; :meth:`rewind` undoes only later ones. Cheap (no IO)."""
        with self._lock:
            self._journal.clear()

    def rewind(self) -> None:
        """Undo every write since the last checkpoint and refuse further writes (idempotent)."""
        with self._lock:
            self._sealed = True
            for path, previous in reversed(self._journal):
                if previous is None:
                    self.shadow(path).unlink(missing_ok=True)
                    self._bases.pop(path, None)
                else:
                    atomic_write_text(self.shadow(path), previous)
            self._journal.clear()

    def shadows_under(self, path: Path) -> list[Path]:
        """Workspace paths written by the speculation at or below the (resolved) ``path``."""
        return [p for p in self._bases if p == path or p.is_relative_to(path)]

    def changes(self) -> list[Change]:
        return [Change(p, base, self.shadow(p).read_text(encoding="utf-8")) for p, base in self._bases.items()]

    def discard(self) -> None:
        """Delete the overlay directory and forget every shadow (idempotent); later writes fail."""
        with self._lock:
            self._discarded = True
            self._bases.clear()
            self._journal.clear()
            shutil.rmtree(self.directory, ignore_errors=True)
