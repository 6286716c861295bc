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


def count_request(
    counter: Counter,
    *,
    system: str,
    sections: Sequence[Section],
    skills_listing: str | None,
    startup_reminder: str | None,
    history: Sequence[Content],
    tool_declarations: Sequence[dict[str, Any]],
    thresholds: Thresholds,
    problems: Sequence[Problem] = (),
    history_tokens: int | None = None,
    editor_context: str | None = None,
) -> ContextResult:
    """Per-section tokens; ``startup_reminder`` only for a chat with no history yet (it goes in the first message).

    ``history_tokens`` is the history's count when the caller keeps one incrementally;
    ``editor_context`` the editor reminder the next message would carry (``docs/editor-context.md``).
    """
    count = counter.count
    out = [ContextSection(name=s.name, tokens=count(s.text), source=s.source) for s in sections]
    joined = sum(s.tokens for s in out)
    out.append(ContextSection(name="separators", tokens=max(0, count(system) - joined)))
    if skills_listing:
        out.append(ContextSection(name="skills", tokens=count(skills_listing)))
    if startup_reminder is not None and not history:
        out.append(ContextSection(name="environment", tokens=count(startup_reminder)))
    if editor_context:
        out.append(ContextSection(name="editor context", tokens=count(editor_context)))
    if history:
        tokens = history_tokens if history_tokens is not None else sum(counter.count_content(c) for c in history)
        out.append(ContextSection(name="history", tokens=tokens))
    tools = json.dumps(list(tool_declarations), separators=(",", ":"))
    out.append(ContextSection(name="tools", tokens=count(tools)))
    return ContextResult(
        sections=out,
        total_tokens=sum(s.tokens for s in out),
        window=thresholds.window,
        thresholds=ThresholdTokens.of(thresholds.warn, thresholds.auto, thresholds.hard),
        problems=[ContextProblem(path=p.path, message=p.message) for p in problems],
    )
