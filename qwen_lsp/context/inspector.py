"""What the next request would hold, section by section, in tokens (``qwen/context``).

The system prompt is split into the sections the assembler reports and
whatever joins them; the total is the sum of the parts, which is exactly how
the prompt size is counted when the endpoint reports no usage, so the
inspector and the status meter never disagree.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Protocol

from ..compaction.thresholds import Thresholds
from ..llm.content import Content
from ..protocol import ContextProblem, ContextResult, ContextSection, ThresholdTokens
from .sections import Section
from .text import Problem


class Counter(Protocol):
    def count(self, text: str) -> int: ...

    def count_content(self, content: Content) -> int: ...


def section_tokens(
    counter: Counter,
    *,
    system: str,
    sections: Sequence[Section],
    skills_listing: str | None,
    startup_reminder: str | None,
    history: Sequence[Content],
    tool_declarations: Sequence[dict[str, Any]],
    history_tokens: int | None = None,
    editor_context: str | None = None,
) -> list[tuple[str, int, Section | None]]:
    """``(name, tokens, section)`` per section (None for what is not a system-prompt section) of the next request; their sum is its size.

    ``startup_reminder`` counts only for a chat with no history yet (it goes in the first message);
    ``history_tokens`` is the history's count when the caller keeps one incrementally;
    ``editor_context`` the editor reminder the next message would carry (``docs/editor-context.md``).
    """
    count = counter.count
    out: list[tuple[str, int, Section | None]] = [(s.name, count(s.text), s) for s in sections]
    joined = sum(tokens for _, tokens, _ in out)
    out.append(("separators", max(0, count(system) - joined), None))
    if skills_listing:
        out.append(("skills", count(skills_listing), None))
    if startup_reminder is not None and not history:
        out.append(("environment", count(startup_reminder), None))
    if editor_context:
        out.append(("editor context", count(editor_context), None))
    # Always a row, 0 for a new chat: the parts then visibly add up to the total.
    tokens = history_tokens if history_tokens is not None else sum(counter.count_content(c) for c in history)
    out.append(("history", tokens, None))
    tools = json.dumps(list(tool_declarations), separators=(",", ":"), ensure_ascii=False)  # as the request body carries it
    out.append(("tools", count(tools), None))
    return out


def count_request(
    counter: Counter,
    *,
    thresholds: Thresholds,
    problems: Sequence[Problem] = (),
    **request: Any,
) -> ContextResult:
    """:func:`section_tokens` (``request`` its arguments) as the ``qwen/context`` result, with the thresholds and problems."""
    out = [
        ContextSection(name=name, tokens=tokens, source=s and s.source, path=s and s.path)
        for name, tokens, s in section_tokens(counter, **request)
    ]
    return ContextResult(
        sections=out,
        total_tokens=sum(s.tokens for s in out),
        window=thresholds.window,
        thresholds=ThresholdTokens.of(thresholds.warn, thresholds.auto, thresholds.hard),
        problems=[ContextProblem(path=p.path, message=p.message) for p in problems],
    )
