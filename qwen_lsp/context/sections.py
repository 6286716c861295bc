"""A part of the system prompt, as the inspector lists it; its own module so the per-chat view and the assembler share it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Section:
    """One part of the system prompt, for the inspector."""

    name: str
    source: str | None
    text: str
