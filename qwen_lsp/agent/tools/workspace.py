"""Keeping model-chosen paths inside the workspace.

Qwen Code asks the user before a read outside the workspace; this server has
no approval prompt for read-only tools, so such paths are refused outright.
Paths are resolved (symlinks followed) before the check, so a link pointing
out of the workspace is refused too.
"""

from __future__ import annotations

from pathlib import Path

from ...files.containment import resolved_inside
from ..tool import ToolContext
from .base import ToolInputError


def resolve_in_workspace(raw: str, ctx: ToolContext) -> Path:
    """``raw`` as an absolute, resolved path inside ``ctx.workspace_root``.

    Relative paths resolve against ``ctx.cwd`` (the declarations ask for
    absolute paths, but refusing a usable relative one only costs a turn).
    """
    text = raw.strip()
    if not text:
        raise ToolInputError("The path must not be empty.")
    if "\x00" in text:
        raise ToolInputError("The path contains a NUL character.")
    candidate = Path(text).expanduser()
    if not candidate.is_absolute():
        candidate = ctx.cwd / candidate
    root = ctx.workspace_root.resolve()
    resolved = resolved_inside(candidate, root)
    for extra in ctx.read_roots:
        if resolved is None:
            resolved = resolved_inside(candidate, extra)  # resolved when the context was made: a link planted since cannot move it
    if resolved is None:
        raise ToolInputError(
            f"Path {text} is outside the workspace ({root}). Only files inside the workspace can be accessed."
        )
    return resolved


def relative_display(path: Path, ctx: ToolContext) -> str:
    """``path`` relative to the workspace root, for short human-facing summaries."""
    try:
        rel = path.relative_to(ctx.workspace_root.resolve())
    except ValueError:
        return str(path)
    return rel.as_posix() or "."


def search_root(raw: str | None, ctx: ToolContext) -> Path:
    """Where a search tool starts: the given path inside the workspace, or ``ctx.cwd`` when omitted."""
    return resolve_in_workspace(raw if raw else str(ctx.cwd), ctx)
