"""The model ↔ tool loop against the scripted endpoint, with tools defined here."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from support.scripted_openai import Reply, ScriptedOpenAI, Stall, ToolCallSpec

from qwen_lsp.agent.events import TurnEvent
from qwen_lsp.agent.loop import TurnRequest, run_turn
from qwen_lsp.agent.tool import ToolContext, ToolResult
from qwen_lsp.llm.client import ChatClient
from qwen_lsp.llm.content import Content, to_openai_messages


class EchoTool:
    name = "echo"

    def declaration(self) -> dict[str, Any]:
        return {"type": "function", "function": {"name": "echo", "description": "Echo.", "parameters": {"type": "object", "properties": {"text": {"type": "string"}}}}}

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return ToolResult(output=f"echo: {args.get('text')}")


class SlowTool(EchoTool):
    name = "slow"
    started: asyncio.Event

    def __init__(self) -> None:
        self.started = asyncio.Event()

    def declaration(self) -> dict[str, Any]:
        return {**super().declaration(), "function": {"name": "slow", "description": "Slow.", "parameters": {"type": "object"}}}

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        self.started.set()
        await asyncio.sleep(3600)
        raise AssertionError("unreachable")


class Crashy(EchoTool):
    name = "crashy"

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        raise RuntimeError("tool bug")


def request(history: list[Content], tools: list[Any], tmp_path: Path) -> TurnRequest:
    return TurnRequest(system="sys", history=history, tools=tools, tool_context=ToolContext(workspace_root=tmp_path, cwd=tmp_path))


async def run(scripted: ScriptedOpenAI, req: TurnRequest, **kw: Any):
    events: list[TurnEvent] = []
    recorded: list[tuple[Content, dict]] = []
    async with ChatClient(scripted.base_url, "k", "m") as client:
        outcome = await run_turn(client, req, emit=events.append, record=lambda c, **m: recorded.append((c, m)), **kw)
    return outcome, events, recorded


async def test_tool_round_then_answer(scripted: ScriptedOpenAI, tmp_path: Path):
    scripted.enqueue(Reply(chunks=["Checking."], tool_calls=[ToolCallSpec("echo", {"text": "x"}, id="c1")]), Reply(chunks=["Done."]))
    history: list[Content] = [{"role": "user", "parts": [{"text": "go"}]}]
    outcome, events, recorded = await run(scripted, request(history, [EchoTool()], tmp_path))
    assert outcome.text == "Checking.Done." and outcome.rounds == 2 and outcome.finish_reason == "stop"
    assert [c["role"] for c, _ in recorded] == ["model", "user", "model"]
    assert history[2]["parts"][0]["functionResponse"]["response"] == {"output": "echo: x"}
    assert [e.kind for e in events] == ["text", "toolCall", "toolResult", "text"]
    assert scripted.chat_requests()[-1].body["messages"] == to_openai_messages("sys", history[:-1])


async def test_unknown_and_failing_tools_answer_the_model_with_errors(scripted: ScriptedOpenAI, tmp_path: Path):
    scripted.enqueue(
        Reply(chunks=[], tool_calls=[ToolCallSpec("nope", {}, id="a"), ToolCallSpec("crashy", {}, id="b")]),
        Reply(chunks=["ok"]),
    )
    history: list[Content] = [{"role": "user", "parts": [{"text": "go"}]}]
    outcome, events, _ = await run(scripted, request(history, [EchoTool(), Crashy()], tmp_path))
    responses = [p["functionResponse"] for p in history[2]["parts"]]
    assert "Unknown tool 'nope'" in responses[0]["response"]["error"] and "echo" in responses[0]["response"]["error"]
    assert "tool bug" in responses[1]["response"]["error"]
    assert outcome.text == "ok"
    assert [e.tool["isError"] for e in events if e.kind == "toolResult"] == [True, True]


async def test_cancel_during_a_tool_keeps_the_history_sendable(scripted: ScriptedOpenAI, tmp_path: Path):
    slow = SlowTool()
    scripted.enqueue(Reply(chunks=[], tool_calls=[ToolCallSpec("slow", {}, id="s1"), ToolCallSpec("echo", {"text": "y"}, id="s2")]))
    history: list[Content] = [{"role": "user", "parts": [{"text": "go"}]}]
    task = asyncio.ensure_future(run(scripted, request(history, [EchoTool(), slow], tmp_path)))
    await asyncio.wait_for(slow.started.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    ids = [p["functionResponse"]["id"] for p in history[-1]["parts"]]
    assert ids == ["s1", "s2"]
    assert all("Cancelled" in p["functionResponse"]["response"]["error"] for p in history[-1]["parts"])
    messages = to_openai_messages("sys", history)
    assert [m["role"] for m in messages][-3:] == ["assistant", "tool", "tool"]


async def test_cancel_while_streaming_records_partial_text(scripted: ScriptedOpenAI, tmp_path: Path):
    scripted.enqueue(Stall(chunks=["half an ans"]))
    history: list[Content] = [{"role": "user", "parts": [{"text": "go"}]}]
    recorded: list[tuple[Content, dict]] = []
    seen = asyncio.Event()

    async def go() -> None:
        async with ChatClient(scripted.base_url, "k", "m") as client:
            await run_turn(client, request(history, [], tmp_path), emit=lambda e: seen.set(), record=lambda c, **m: recorded.append((c, m)))

    task = asyncio.ensure_future(go())
    await asyncio.wait_for(seen.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert recorded == [({"role": "model", "parts": [{"text": "half an ans"}]}, {"interrupted": True})]
    assert scripted.wait_for_disconnect(5)


async def test_round_budget_ends_the_turn_with_a_status(scripted: ScriptedOpenAI, tmp_path: Path):
    scripted.default = Reply(chunks=[], tool_calls=[ToolCallSpec("echo", {"text": "again"})])
    history: list[Content] = [{"role": "user", "parts": [{"text": "loop"}]}]
    outcome, events, _ = await run(scripted, request(history, [EchoTool()], tmp_path), max_rounds=3)
    assert outcome.rounds == 3 and outcome.finish_reason == "length"
    assert events[-1].kind == "status" and "3 tool rounds" in events[-1].text
