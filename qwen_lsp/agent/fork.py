"""Forked runs: the agent loop with its own prompt, tools and budget, beside the user's chat.

Memory extraction, dream, speculation and skill review all ask the model
something on the side. They reuse :func:`~.loop.run_turn` with a history of
their own, so nothing they do reaches the user's session, transcript or
chat events, and they stop at their own round budget.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..llm.content import Content
from .events import TurnEvent, TurnOutcome
from .loop import StreamingModel, TurnRequest, run_turn
from .tool import Tool, ToolContext


async def run_fork(
    model: StreamingModel,
    *,
    system: str,
    prompt: str,
    root: Path,
    tools: Sequence[Tool] = (),
    history: Sequence[Content] = (),
    max_rounds: int = 5,
    max_tokens: int | None = None,
) -> tuple[TurnOutcome, list[Content]]:
    """Run one side turn; returns its outcome and the Contents it produced (after ``history``)."""
    own: list[Content] = [*history, {"role": "user", "parts": [{"text": prompt}]}]
    start = len(own)

    def ignore(_event: TurnEvent) -> None:
        return None

    def keep(content: Content, **meta: Any) -> None:
        return None

    req = TurnRequest(system=system, history=own, tools=tools, tool_context=ToolContext(workspace_root=root, cwd=root), max_tokens=max_tokens)
    outcome = await run_turn(model, req, emit=ignore, record=keep, max_rounds=max_rounds)
    return outcome, own[start:]
