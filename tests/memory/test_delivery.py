"""When a turn's recalled memories are handed over (``memory.delivery``), as Qwen Code 0.24.4's client.ts does."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from qwen_lsp.memory.delivery import TurnRecall
from qwen_lsp.memory.recall import recall

from .recall_helpers import NOW, Selector, doc

DOCS = [doc(f"deploy-{i}", title=f"deploy step {i}", description="how we deploy", age_days=i) for i in range(4)]


def turn(select: Selector, surfaced: set[Path], **kw: Any) -> TurnRecall:
    return TurnRecall(lambda on_fast: recall("deploy", DOCS, select=select, now=NOW, on_fast_result=on_fast), surfaced=surfaced, clock=lambda: NOW, **kw)


async def test_a_hung_selector_gets_the_keyword_top_two_first_and_the_rest_after_a_tool_result() -> None:
    release = asyncio.Event()
    chosen = [str(DOCS[0].path), str(DOCS[3].path)]

    class Gated(Selector):
        async def __call__(self, **kw: Any) -> str:
            await release.wait()
            return json.dumps({"selected_memories": chosen})

    surfaced: set[Path] = set()
    delivery = turn(Gated(lambda _c: ""), surfaced, initial_wait=30.0)  # the early result ends the wait, not the budget
    first = await delivery.initial()
    assert len(first) == 1 and "deploy step 0" in first[0] and "deploy step 1" in first[0] and "deploy step 3" not in first[0]
    assert surfaced == {DOCS[0].path, DOCS[1].path}
    assert delivery.take() == []  # the selector is still out
    release.set()
    while not delivery._task.done():
        await asyncio.sleep(0)
    later = delivery.take()
    # Only what the early delivery did not send, re-rendered.
    assert len(later) == 1 and "deploy step 3" in later[0] and "deploy step 0" not in later[0]
    assert later[0].startswith("## Relevant memory") and surfaced == {DOCS[0].path, DOCS[1].path, DOCS[3].path}
    assert delivery.take() == [] and await delivery.initial() == []  # each moment hands over once


async def test_a_settled_recall_is_delivered_whole_at_the_first_request() -> None:
    select = Selector(lambda _c: json.dumps({"selected_memories": [str(DOCS[2].path)]}))
    surfaced: set[Path] = set()
    delivery = turn(select, surfaced, initial_wait=30.0)
    while not delivery._task.done():  # the selector answers at once; the wait ends with it
        await asyncio.sleep(0)
    first = await delivery.initial()
    assert len(first) == 1 and "deploy step 2" in first[0] and "deploy step 0" not in first[0]
    assert surfaced == {DOCS[2].path} and delivery.take() == []


async def test_nothing_within_the_budget_leaves_the_recall_running_and_cancel_drops_it() -> None:
    never = asyncio.Event()

    async def start(_on_fast: Any) -> Any:
        await never.wait()

    delivery = TurnRecall(start, surfaced=set(), clock=lambda: NOW, initial_wait=0.0)
    assert await delivery.initial() == []
    task = delivery._task
    assert not task.done()
    delivery.cancel()
    await asyncio.gather(task, return_exceptions=True)
    assert task.cancelled() and delivery.take() == []
