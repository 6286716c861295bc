"""Files the editor attached to a prompt, as the block Qwen Code sends for ``@file`` references.

An attachment is named by the editor, but what it holds belongs to the
repository: a link inside the project may point at ``~/.ssh`` or
``/proc/self/environ``, and a file may be 300 MB of zeros. So every
attachment is resolved (symlinks followed) and refused unless it stays in
the workspace, refused past Qwen Code's 10 MB read limit or when it looks
binary, and otherwise read through the same bounded window as ``read_file``
(1000 lines, 25 000 characters, 2000 per line; a selection reads only up
to its last line). A refusal or a cut is a line in the block, like
``[unreadable: …]``; it never fails the turn.
"""

from __future__ import annotations

from ..llm.content import Part

import base64
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..files.reading import read_bytes
from ..files.text import DEFAULT_LINE_LIMIT, looks_binary, read_head, read_window, size_refusal
from ..text.visible import prompt_name

MAX_IMAGE_BYTES = 10 * 1024 * 1024
"""Qwen Code's 10 MB read limit, for an image too."""
BLOCK_START = "--- Content from referenced files ---"
BLOCK_END = "--- End of content ---"
TRUNCATED_WARNING = (
    "[WARNING: This file was truncated. To view the full content, use the 'read_file' tool on this specific file.]"
)
"""Qwen Code's ``read_many_files`` note for a file shown in part."""


@dataclass(frozen=True)
class PastedImage:
    """An image pasted into the editor, as the server wrote it and read it back (``clipboard.py``)."""

    mime: str
    data: bytes


@dataclass
class Attachment:
    path: Path
    start_line: int | None = None
    """0-based first line of a selection (LSP range), or None for the whole file."""
    end_line: int | None = None
    pasted: PastedImage | None = None
    """Set by the server only (``PastedImages.claim``), never from what a client sends: the file lies outside the workspace."""


def image_mime(head: bytes) -> str | None:
    """The image type a file's first bytes show (PNG, JPEG, GIF, WebP), else None. By content, never by name."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def attached_image(path: Path, root: Path) -> str | None:
    """Blocking: the mime type when ``path`` is an image inside ``root`` that will be sent as one, else None."""
    try:
        resolved = path.resolve()
        if not resolved.is_relative_to(root.resolve()) or size_refusal(resolved):
            return None
        return image_mime(read_head(resolved)[:16])
    except OSError:
        return None


def attachment_parts(attachments: Sequence[Attachment], root: Path) -> list[Part]:
    """Attached files as one text part, then each whole-file image as an image part (none when nothing is attached).

    An image goes as Qwen Code's ``inlineData`` part (base64), named in the text block; whether the
    model takes images is decided before the turn (``llm/modalities.py``)."""
    if not attachments:
        return []
    root = root.resolve()
    blocks: list[str] = []
    images: list[Part] = []
    for att in attachments:
        mime = att.pasted.mime if att.pasted else attached_image(att.path, root) if att.start_line is None else None
        if mime is not None:
            try:
                raw = att.pasted.data if att.pasted else read_bytes(att.path.resolve(), MAX_IMAGE_BYTES)
            except (OSError, ValueError) as exc:
                blocks.append(f"Content from @{_shown(att.path, root)}:\n[unreadable: {exc}]")
                continue
            data = base64.b64encode(raw).decode("ascii")
            images.append({"inlineData": {"mimeType": mime, "data": data}})
            blocks.append(f"Content from @{_shown(att.path, root)}:\n[image: {mime}, sent as an image part]")
            continue
        blocks.append(f"Content from @{_shown(att.path, root)}:\n{_content(att, root)}")
    return [{"text": f"{BLOCK_START}\n" + "\n".join(blocks) + f"\n{BLOCK_END}"}, *images]


def _content(att: Attachment, root: Path) -> str:
    """The attachment's text, or one bracketed line saying why it is not there."""
    try:
        resolved = att.path.resolve()
        if not resolved.is_relative_to(root):
            return "[not attached: it resolves outside the workspace]"
        too_large = size_refusal(resolved)
        if too_large:
            return f"[not attached: {too_large}]"
        head = read_head(resolved)
        if looks_binary(head):
            return "[not attached: binary file]"
        if att.start_line is None:
            window = read_window(resolved, head, 0, DEFAULT_LINE_LIMIT, count_all=False)
            text = "".join(line.text + line.ending for line in window.lines)
            truncated = window.more
        else:
            end = att.end_line if att.end_line is not None else att.start_line
            window = read_window(resolved, head, att.start_line, max(end - att.start_line + 1, 1), count_all=False)
            text = "\n".join(line.text for line in window.lines)
            truncated = False  # lines after a selection were not asked for
    except OSError as exc:
        return f"[unreadable: {exc.strerror or exc}]"
    if truncated or window.cut_by_chars or any(line.cut for line in window.lines):
        return f"{TRUNCATED_WARNING}\n\n{text}"
    return text


def _shown(path: Path, root: Path) -> str:
    """The path as the user named it (a link's own name), relative to the workspace when it is inside, as prompt text."""
    for candidate in (Path(os.path.normpath(os.path.abspath(path))), path.resolve()):
        if candidate.is_relative_to(root):
            return prompt_name(candidate.relative_to(root).as_posix())
    return prompt_name(str(path))
