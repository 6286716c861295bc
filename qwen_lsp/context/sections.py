"""A part of the system prompt, as the inspector lists it; its own module so the per-chat view and the assembler share it."""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class Section:
    """One part of the system prompt, for the inspector."""

    name: str
    source: str | None
    """How an editor names the file it comes from (:func:`shown_path`)."""
    text: str
    path: str | None = None
    """The file itself (absolute), for an editor to open."""


def shown_path(path: str, cwd: str, home: str) -> str:
    """A file as a person reads it: relative to the workspace when inside it, ``~/…`` under the home folder
    (never ``../home/…``), else relative to the workspace as the prompt's block markers name it."""
    inside = os.path.relpath(path, cwd).replace("\\", "/")
    if not inside.startswith("../"):
        return inside
    if home:
        below_home = os.path.relpath(path, home).replace("\\", "/")
        if not below_home.startswith("../") and below_home != "..":
            return "~/" + below_home
    return inside
