"""The editor-context reminder, worded, capped and ordered as Qwen Code 0.24.4's ``getIdeContextParts``.

A chat's first turn (or one after a compression, a resume or a failed request) gets
the whole context: the active file with its cursor and selected text, then the other
open files. Later turns get only the changes since the context last sent: files
opened, files closed, the active file changed, the cursor moved, the selection
changed; nothing at all when nothing changed. The text rides with the user's message
inside ``<system-reminder>`` (``wrapIdeContext``), never in the system prompt, so the
cached prefix of the request stays byte-stable.
"""

from __future__ import annotations

from ...skills.listing import wrap_system_reminder
from ...text.visible import prompt_name
from .state import EditorSnapshot, OpenFile

FULL_INTRO = (
    "Here is the user's current editor context. Use it when relevant, including to answer questions about "
    "the active file, open files, cursor, or selected text."
)
DELTA_INTRO = (
    "Here is a summary of changes in the user's current editor context. Use it with the previous editor "
    "context when relevant, including to answer questions about the active file, open files, cursor, or "
    "selected text."
)


def _selection(lines: list[str], text: str) -> None:
    lines.extend(["  Selected text:", "```", text, "```"])


def _file_block(lines: list[str], heading: str, f: OpenFile) -> None:
    lines.append(heading)
    lines.append(f"  Path: {prompt_name(f.path)}")
    if f.cursor is not None:
        lines.append(f"  Cursor: line {f.cursor.line}, character {f.cursor.character}")
    if f.selected_text:
        _selection(lines, f.selected_text)


def _section(lines: list[str]) -> None:
    if lines:
        lines.append("")


def full_text(now: EditorSnapshot) -> str | None:
    """The whole context, or ``None`` when the editor shows nothing to tell."""
    lines: list[str] = []
    active = now.active
    if active is not None:
        _file_block(lines, "Active file:", active)
    others = now.others
    if others:
        _section(lines)
        lines.append("Other open files:")
        lines.extend(f"  - {prompt_name(f.path)}" for f in others)
    return "\n".join([FULL_INTRO, "\n".join(lines)]) if lines else None


def delta_text(before: EditorSnapshot, now: EditorSnapshot) -> str | None:
    """What changed since ``before`` was sent, or ``None`` when nothing did."""
    lines: list[str] = []
    old = {f.path for f in before.files}
    new = {f.path for f in now.files}
    opened = [f.path for f in now.files if f.path not in old]
    closed = [f.path for f in before.files if f.path not in new]
    if opened:
        lines.append("Files opened:")
        lines.extend(f"  - {prompt_name(p)}" for p in opened)
    if closed:
        _section(lines)
        lines.append("Files closed:")
        lines.extend(f"  - {prompt_name(p)}" for p in closed)
    was, active = before.active, now.active
    if active is not None:
        if was is None or was.path != active.path:
            _section(lines)
            _file_block(lines, "Active file changed:", active)
        else:
            if active.cursor is not None and active.cursor != was.cursor:
                _section(lines)
                lines += [
                    "Cursor moved:",
                    f"  Path: {prompt_name(active.path)}",
                    f"  New position: line {active.cursor.line}, character {active.cursor.character}",
                ]
            if (was.selected_text or "") != (active.selected_text or ""):
                _section(lines)
                lines += ["Selection changed:", f"  Path: {prompt_name(active.path)}"]
                if active.selected_text:
                    _selection(lines, active.selected_text)
                else:
                    lines.append("  Selected text: (none)")
    elif was is not None:
        _section(lines)
        lines += ["Active file changed:", "  No active file", f"  Previous path: {prompt_name(was.path)}"]
    return "\n".join([DELTA_INTRO, "\n".join(lines)]) if lines else None


def wrap(text: str) -> str:
    """``wrapIdeContext``: the text inside ``<system-reminder>``, its own reminder tags neutralised."""
    return wrap_system_reminder(text)
