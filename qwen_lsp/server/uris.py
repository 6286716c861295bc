"""File URIs as the server's paths (resolved, so a symlinked spelling finds the same file)."""

from __future__ import annotations

from pathlib import Path

from pygls.uris import to_fs_path


def uri_to_path(uri: str) -> Path | None:
    fs = to_fs_path(uri)
    return Path(fs).resolve() if fs else None
