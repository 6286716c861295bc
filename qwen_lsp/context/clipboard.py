"""Images pasted into the editor's composer: kept in Qwen Code's clipboard folder, attachable from outside the workspace.

Qwen Code 0.24.4 saves a pasted image as ``clipboard-<Date.now()>-<n><ext>`` in its global temp
folder ``~/.qwen/tmp/clipboard`` (``promotePastedImagePaths``), never in the project, and attaches
it; once that folder holds more than 100 images, the 50 least recently read are deleted
(``cleanupOldClipboardImages``). Here the same, under :func:`~qwen_lsp.files.paths.global_qwen_dir`.

An attachment outside the workspace is otherwise refused (``attachments.py``), and a client names
attachments by path. Were "anything in the clipboard folder" readable, a link put there, or a
client naming ``…/clipboard/../../.ssh/id_rsa`` or a name the server never wrote, would send any
file to the model. So only a file this server wrote is attachable from there: it is recognised by
its exact path, read without following a link, and sent only when its bytes are the ones written
(SHA-256). Whatever happened to the file since (replaced, turned into a link, rewritten), nothing
but what was pasted can leave this way.
"""

from __future__ import annotations

import binascii
import hashlib
import os
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from ..errors import EngineError
from ..files.nofollow_write import write_bytes_nofollow
from ..files.paths import global_qwen_dir
from ..files.reading import read_bytes
from .attachments import MAX_IMAGE_BYTES, Attachment, PastedImage, image_mime

MAX_IMAGES = 100
"""Qwen Code's ``cleanupOldClipboardImages``: past this many images in the folder, the oldest are deleted…"""
CLEANUP_COUNT = 50
"""…this many of them, least recently read (atime) first."""
_EXTENSIONS = {"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp"}
_CLEANED = re.compile(r"clipboard-.*\.(?:png|jpg|webp|heic|heif|tiff|gif|bmp)", re.DOTALL)
"""The names ``cleanupOldClipboardImages`` counts and deletes (the CLI's too: the folder is shared)."""


def clipboard_dir() -> Path:
    """``~/.qwen/tmp/clipboard`` (Qwen Code's ``Storage.getGlobalTempDir()`` + ``clipboard``), the Qwen home resolved."""
    return global_qwen_dir().resolve() / "tmp" / "clipboard"


@dataclass(frozen=True)
class Saved:
    path: Path
    size: int


class PastedImages:
    """The images this server wrote to the clipboard folder, by path, with the digest of what was written.

    Remembers the last :data:`MAX_IMAGES` (the folder keeps about as many); thread-safe, as pastes
    and chats read it from worker threads.
    """

    def __init__(self) -> None:
        self._written: OrderedDict[Path, bytes] = OrderedDict()
        self._lock = threading.Lock()
        self._count = 0

    def save(self, data_b64: str) -> Saved:
        """Blocking: decode a pasted image, check it is one (by its bytes), write it under a name of the server's choosing."""
        try:
            data = binascii.a2b_base64(data_b64, strict_mode=True)
        except binascii.Error:
            raise EngineError("The pasted data is not base64.", kind="invalid_params", param="data") from None
        if len(data) > MAX_IMAGE_BYTES:
            raise EngineError(
                f"The pasted image is {len(data) / 2**20:.1f} MB; an image can be at most {MAX_IMAGE_BYTES // 2**20} MB.",
                kind="invalid_params",
                param="data",
            )
        mime = image_mime(data[:16])
        if mime is None:
            raise EngineError("The pasted data is not a PNG, JPEG, GIF or WebP image.", kind="invalid_params", param="data")
        folder = clipboard_dir()
        try:
            path = self._fresh_name(folder, _EXTENSIONS[mime])
            write_bytes_nofollow(path, data)
        except OSError as exc:  # a link where a folder should be (PathChanged), a full disk
            raise EngineError(f"The pasted image could not be saved in {folder}: {exc}", kind="engine") from None
        with self._lock:
            self._written[path] = hashlib.sha256(data).digest()
            while len(self._written) > MAX_IMAGES:
                self._written.popitem(last=False)
        for gone in remove_old_images(folder):
            with self._lock:
                self._written.pop(gone, None)
        return Saved(path=path, size=len(data))

    def claim(self, attachments: Sequence[Attachment]) -> list[Attachment]:
        """Blocking: each attachment naming an image this server wrote, with its bytes; the others as they were.

        The bytes are read here, once, and sent as read: a file swapped after this check is not read
        again. A path this server wrote whose bytes are no longer those is an error, before anything
        is sent; a path it never wrote stays an ordinary attachment (refused outside the workspace)."""
        out: list[Attachment] = []
        for att in attachments:
            with self._lock:
                digest = self._written.get(att.path) if att.start_line is None else None
            if digest is None:
                out.append(att)
                continue
            try:
                data = read_bytes(att.path, MAX_IMAGE_BYTES, follow_links=False)
            except OSError as exc:
                raise EngineError(f"The pasted image {att.path.name} cannot be read ({exc.strerror or exc}): paste it again.", kind="invalid_params", param="attachments") from None
            mime = image_mime(data[:16])
            if mime is None or hashlib.sha256(data).digest() != digest:
                raise EngineError(f"The pasted image {att.path.name} changed since it was pasted: paste it again.", kind="invalid_params", param="attachments")
            out.append(replace(att, pasted=PastedImage(mime=mime, data=data)))
        return out

    def _fresh_name(self, folder: Path, ext: str) -> Path:
        """``clipboard-<ms>-<n><ext>``, ``n`` counting this server's pastes, past any name already there (another window's)."""
        while True:
            with self._lock:
                n = self._count
                self._count += 1
            path = folder / f"clipboard-{time.time_ns() // 1_000_000}-{n}{ext}"
            if not os.path.lexists(path):
                return path


def remove_old_images(folder: Path) -> list[Path]:
    """Blocking: Qwen Code's ``cleanupOldClipboardImages`` — past :data:`MAX_IMAGES` images, delete the :data:`CLEANUP_COUNT`
    least recently read. Links are deleted, never followed; a failure leaves the rest as they are, as there."""
    try:
        with os.scandir(folder) as entries:
            found = [(e.stat(follow_symlinks=False).st_atime, Path(e.path)) for e in entries if _CLEANED.fullmatch(e.name)]
    except OSError:
        return []
    if len(found) <= MAX_IMAGES:
        return []
    found.sort(key=lambda item: item[0])
    removed: list[Path] = []
    for _atime, path in found[:CLEANUP_COUNT]:
        try:
            os.unlink(path)
        except OSError:
            break
        removed.append(path)
    return removed
