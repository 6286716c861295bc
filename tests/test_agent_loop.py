"""The model ↔ tool loop against the scripted endpoint, with tools defined here."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from support.scripted_openai import Raw, Reply, ScriptedOpenAI, Stall, ToolCallSpec

from qwen_lsp.agent.events import TurnEvent
from qwen_lsp.agent.loop import TurnRequest, run_turn
from qwen_lsp.agent.tool import ToolContext, ToolResult
from qwen_lsp.llm.client import ChatClient, Timeouts
from qwen_lsp.llm.content import Content, to_openai_messages
from qwen_lsp.llm.errors import LLMError


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


async def test_length_inside_a_tool_call_runs_nothing_and_ends_length(scripted: ScriptedOpenAI, tmp_path: Path):
    scripted.enqueue(Reply(chunks=["Echoing."], tool_calls=[ToolCallSpec("echo", '{"text": "cut of', id="c1")], finish_reason="length"))
    history: list[Content] = [{"role": "user", "parts": [{"text": "go"}]}]
    outcome, events, recorded = await run(scripted, request(history, [EchoTool()], tmp_path))
    assert outcome.finish_reason == "length" and outcome.rounds == 1
    assert [e.kind for e in events] == ["text", "status"] and "cut off" in (events[-1].text or "")
    assert [c for c, _ in recorded] == [{"role": "model", "parts": [{"text": "Echoing."}]}]
    assert len(scripted.chat_requests()) == 1


async def test_arguments_that_are_not_json_are_reported_to_the_model(scripted: ScriptedOpenAI, tmp_path: Path):
    scripted.enqueue(Reply(chunks=[], tool_calls=[ToolCallSpec("echo", "{text: x}", id="c1")]), Reply(chunks=["ok"]))
    history: list[Content] = [{"role": "user", "parts": [{"text": "go"}]}]
    outcome, events, _ = await run(scripted, request(history, [EchoTool()], tmp_path))
    error = history[2]["parts"][0]["functionResponse"]["response"]["error"]
    assert "were not valid JSON" in error and "{text: x}" in error
    assert [e.tool["isError"] for e in events if e.kind == "toolResult"] == [True]
    assert outcome.finish_reason == "stop"


@pytest.mark.parametrize("failure", ["stall", "eof"])
async def test_text_before_a_stall_or_early_eof_is_recorded_interrupted(scripted: ScriptedOpenAI, tmp_path: Path, failure: str):
    chunk = {"choices": [{"index": 0, "delta": {"content": "half an ans"}, "finish_reason": None}]}
    scripted.enqueue(Stall(chunks=["half an ans"]) if failure == "stall" else Raw([chunk], done=False))
    history: list[Content] = [{"role": "user", "parts": [{"text": "go"}]}]
    recorded: list[tuple[Content, dict]] = []
    async with ChatClient(scripted.base_url, "k", "m", timeouts=Timeouts(stall=0.3)) as client:
        with pytest.raises(LLMError) as info:
            await run_turn(client, request(history, [], tmp_path), emit=lambda e: None, record=lambda c, **m: recorded.append((c, m)))
    assert info.value.kind == ("stall" if failure == "stall" else "protocol")
    assert recorded == [({"role": "model", "parts": [{"text": "half an ans"}]}, {"interrupted": True})]
    assert history[-1] == {"role": "model", "parts": [{"text": "half an ans"}]}


async def test_a_tool_name_that_is_an_object_leaves_the_history_sendable(scripted: ScriptedOpenAI, tmp_path: Path):
    bad = {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "c1", "function": {"name": {"n": 1}, "arguments": "{}"}}]}, "finish_reason": "tool_calls"}]}
    scripted.enqueue(Raw([bad]), Reply(chunks=["fine"]))
    history: list[Content] = [{"role": "user", "parts": [{"text": "go"}]}]
    async with ChatClient(scripted.base_url, "k", "m") as client:
        with pytest.raises(LLMError) as info:
            await run_turn(client, request(history, [EchoTool()], tmp_path), emit=lambda e: None, record=lambda c, **m: None)
        assert info.value.kind == "protocol"
        history.append({"role": "user", "parts": [{"text": "again"}]})
        outcome = await run_turn(client, request(history, [EchoTool()], tmp_path), emit=lambda e: None, record=lambda c, **m: None)
    assert outcome.text == "fine"
    assert all("tool_calls" not in m for m in scripted.chat_requests()[-1].body["messages"])
