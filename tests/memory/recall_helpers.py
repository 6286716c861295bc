"""Building memory documents and scripted selectors for the recall / forget tests."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from qwen_lsp.memory.model import MemoryDoc, Scope, Topic

NOW = 1_780_000_000.0
DAY = 86_400.0


def doc(
    name: str,
    *,
    type: Topic = "feedback",
    scope: Scope = "project",
    title: str | None = None,
    description: str = "",
    body: str = "",
    age_days: float = 0.0,
    root: str = "/mem/project",
) -> MemoryDoc:
    rel = f"{type}/{name}.md"
    return MemoryDoc(
        scope=scope,
        type=type,
        path=Path(root) / rel,
        relative_path=rel,
        title=title if title is not None else name,
        description=description,
        body=body,
        mtime=NOW - age_days * DAY,
    )


class Selector:
    """A SideQuery that records each call and answers with ``answer(call)`` (a str, or an exception to raise)."""

    def __init__(self, answer: Callable[[Mapping[str, Any]], str]) -> None:
        self.answer = answer
        self.calls: list[dict[str, Any]] = []

    async def __call__(self, *, system: str, user: str, json_schema: Mapping[str, Any] | None, timeout: float) -> str:
        call = {"system": system, "user": user, "json_schema": json_schema, "timeout": timeout}
        self.calls.append(call)
        return self.answer(call)
