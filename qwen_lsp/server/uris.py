"""File URIs as the server's paths (resolved, so a symlinked spelling finds the same file)."""

from __future__ import annotations

from pathlib import Path

from pygls.uris import to_fs_path


def uri_to_path(uri: str) -> Path | None:
    """``None`` for what names no file: a non-file URI, or a ``%00`` that no file system accepts (resolving it raises)."""
    fs = to_fs_path(uri)
    return Path(fs).resolve() if fs and "\x00" not in fs else None
