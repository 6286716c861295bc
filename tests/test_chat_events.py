"""``qwen/chatEvent`` emission: gap-free seq, coalescing without a timer, order kept."""

from __future__ import annotations

import asyncio

from qwen_lsp.agent.events import TurnEvent
from qwen_lsp.protocol import CHAT_EVENT
from qwen_lsp.server.events import ChatEventStream


def make() -> tuple[ChatEventStream, list[dict]]:
    sent: list[dict] = []

    def notify(method: str, params: dict) -> None:
        assert method == CHAT_EVENT.method
        sent.append(params)

    return ChatEventStream(notify, "s1", "t1"), sent


async def test_idle_delta_goes_out_at_once_and_busy_ones_merge():
    stream, sent = make()
    stream(TurnEvent("text", text="a"))  # pipe idle: written immediately
    assert [e["text"] for e in sent] == ["a"]
    stream(TurnEvent("text", text="b"))  # same loop iteration: the pipe was just written
    stream(TurnEvent("text", text="c"))
    assert len(sent) == 1
    await asyncio.sleep(0)
    assert [e["text"] for e in sent] == ["a", "bc"]
    await asyncio.sleep(0)
    stream(TurnEvent("text", text="d"))  # idle again
    assert [e["text"] for e in sent] == ["a", "bc", "d"]
    assert [e["seq"] for e in sent] == [0, 1, 2]
    assert all(e["sessionId"] == "s1" and e["turnId"] == "t1" for e in sent)


async def test_other_kinds_flush_pending_text_first_and_keep_order():
    stream, sent = make()
    stream(TurnEvent("thought", text="hmm"))
    stream(TurnEvent("text", text="x"))
    stream(TurnEvent("text", text="y"))
    stream(TurnEvent("toolCall", tool={"id": "1", "name": "read_file", "args": {}}))
    stream(TurnEvent("text", text="z"))
    stream.close()
    assert [(e["kind"], e.get("text")) for e in sent] == [("thought", "hmm"), ("text", "xy"), ("toolCall", None), ("text", "z")]
    assert [e["seq"] for e in sent] == list(range(4))
    await asyncio.sleep(0)  # nothing left for the idle callback
    assert len(sent) == 4


async def test_events_after_close_are_dropped():
    stream, sent = make()
    stream(TurnEvent("text", text="done"))
    stream.close()
    stream(TurnEvent("text", text="late"))
    await asyncio.sleep(0)
    assert [e["text"] for e in sent] == ["done"]
