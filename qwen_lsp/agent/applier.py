"""Where a main-chat write lands: the editor's buffers, or the disk when there is no editor.

An ``Applier`` reads the text a change is computed against and then applies
the change. In the editor that text is the open buffer, unsaved changes
included, and the change goes back as ``workspace/applyEdit`` (the server's
``EditorApplier``): the server never writes a workspace file behind an LSP
client's back. In the CLI there is no editor, so :class:`DiskApplier` reads
the file and writes it atomically.

A ``Snapshot`` carries what the change was computed against (for an open
buffer, its version), so a buffer edited while the user was deciding is
not overwritten: the editor refuses the stale edit and the tool says so.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ..files.nofollow_write import write_text_nofollow
from ..files.text import looks_binary, read_head, size_refusal


class ApplyError(Exception):
    """The change was not applied; the message is for the model."""


@dataclass(frozen=True)
class Snapshot:
    text: str | None
    """The current text; None when the file does not exist."""
    version: int | None = None
    """The open buffer's version (None: the file on disk)."""
    uri: str | None = None
    """The open buffer's URI as the editor spelled it."""


class Applier(Protocol):
    async def read(self, path: Path) -> Snapshot: ...

    def buffer_text(self, path: Path) -> str | None:
        """The open buffer's text (None: not open, read the file); called from worker threads by ``read_file``."""
        ...

    async def write(self, path: Path, before: Snapshot, text: str) -> str:
        """Apply; returns a short note on where it landed (``"in the editor"``, ``"on disk"``). Raises ``ApplyError``."""
        ...


def read_disk_text(path: Path) -> str | None:
    """A workspace file's text as the write tools see it; blocking. ``ApplyError`` for what cannot be edited as text."""
    if not path.exists():
        return None
    if path.is_dir():
        raise ApplyError(f"Path is a directory, not a file: {path}")
    refusal = size_refusal(path)
    if refusal:
        raise ApplyError(f"{refusal}: {path}")
    try:
        if looks_binary(read_head(path)):
            raise ApplyError(f"Cannot edit {path}: it is a binary file.")
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ApplyError(f"Cannot edit {path}: it is not UTF-8 text.") from None
    except OSError as exc:
        raise ApplyError(f"Cannot read {path}: {exc.strerror or exc}") from None


class DiskApplier:
    """The CLI's applier: the file on disk, replaced atomically.

    Written through ``nofollow_write``: the path was resolved and checked
    before the user was asked, and a directory swapped for a symlink while
    the question waited must not carry the write outside the workspace.
    """

    async def read(self, path: Path) -> Snapshot:
        return Snapshot(await asyncio.to_thread(read_disk_text, path))

    def buffer_text(self, path: Path) -> str | None:
        return None

    async def write(self, path: Path, before: Snapshot, text: str) -> str:
        try:
            await asyncio.to_thread(write_text_nofollow, path, text)
        except OSError as exc:
            raise ApplyError(f"Could not write {path}: {exc.strerror or exc}") from None
        return "on disk"
