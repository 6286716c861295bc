"""An endpoint that sends too much: one endless line, an endless answer, endless tool-call arguments.

The campaign measured one 400 MB SSE line without a newline (server RSS
1.3 GB, a cheap request waited 1.6 s), a 300 MB answer (1.65 GB) and a
50 MB tool-call argument (2.7 GB, the loop blocked 30 s). Each stream here
is made by the scripted server piece by piece (``Flood``), so the test
process never holds it; the client must stop reading at its cap, say which
cap in its error, and keep what came before.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException
from support.scripted_openai import Flood, Raw, Reply, ScriptedOpenAI

from lsp_harness import as_dict, chat, running_server, session_records, wait_for
from qwen_lsp.llm.client import MAX_ANSWER_CHARS, MAX_ARGUMENT_CHARS, MAX_TOOL_CALLS, ChatClient, TextDelta, ThoughtDelta
from qwen_lsp.llm.errors import LLMError
from qwen_lsp.llm.sse import MAX_EVENT_BYTES

MIB = 1024 * 1024
SENT_BOUND = 4 * MAX_EVENT_BYTES
"""What the scripted server may have written before the client hung up: the cap plus socket buffers, far below the flood."""


def data(chunk: dict) -> bytes:
    return b"data: " + json.dumps(chunk).encode() + b"\n\n"


def delta(**fields: object) -> dict:
    return {"id": "c", "object": "chat.completion.chunk", "model": "scripted-model", "choices": [{"index": 0, "delta": fields, "finish_reason": None}]}


async def drain(scripted: ScriptedOpenAI) -> tuple[list[object], LLMError | None]:
    events: list[object] = []
    async with ChatClient(scripted.base_url, "k", "scripted-model", max_retries=0) as client:
        try:
            async for event in client.stream([{"role": "user", "content": "hi"}]):
                events.append(event)
        except LLMError as exc:
            return events, exc
    return events, None


ENDLESS_LINES = {
    "data line without its end": Flood(head=b'data: {"x": "', piece=b"x" * MIB, count=400),
    "comment line without its end": Flood(head=b": ", piece=b"x" * MIB, count=400),
    "field line without its end": Flood(head=b"event: ", piece=b"x" * MIB, count=400),
    "data lines with no blank line": Flood(piece=b"data: " + b"x" * 65536 + b"\n", count=6400),
    "CR-ended data lines with no blank line": Flood(piece=b"data: " + b"x" * 65536 + b"\r", count=6400),
    "one event of tiny lines": Flood(piece=b"data:\n" * 65536, count=6400),
}


@pytest.mark.parametrize("name", sorted(ENDLESS_LINES))
async def test_an_event_that_never_ends_stops_at_the_event_cap(scripted: ScriptedOpenAI, name: str) -> None:
    flood = ENDLESS_LINES[name]
    scripted.enqueue(flood)
    events, error = await drain(scripted)
    assert error is not None and error.kind == "protocol"
    assert f"larger than {MAX_EVENT_BYTES:,} bytes" in error.message and "stopped" in error.message
    assert scripted.wait_for_disconnect()
    assert flood.sent < SENT_BOUND, f"{flood.sent / MIB:.0f} MiB were sent before the client hung up"


@pytest.mark.parametrize("field", ["content", "reasoning_content"])
async def test_an_endless_answer_stops_at_the_answer_cap_and_keeps_what_came_before(scripted: ScriptedOpenAI, field: str) -> None:
    piece = "y" * 65536
    flood = Flood(head=data(delta(content="Start. ")), piece=data(delta(**{field: piece})), count=5000)  # 327 M characters
    scripted.enqueue(flood)
    events, error = await drain(scripted)
    assert error is not None and f"longer than {MAX_ANSWER_CHARS:,} characters" in error.message
    said = "".join(e.text for e in events if isinstance(e, (TextDelta, ThoughtDelta)))
    assert said.startswith("Start. ") and MAX_ANSWER_CHARS - len(piece) < len(said) <= MAX_ANSWER_CHARS
    assert scripted.wait_for_disconnect()
    assert flood.sent < SENT_BOUND


@pytest.mark.parametrize("fragment", [1 << 20, 65536, 1000])
async def test_endless_tool_arguments_stop_at_the_argument_cap(scripted: ScriptedOpenAI, fragment: int) -> None:
    head = data(delta(tool_calls=[{"index": 0, "id": "t1", "type": "function", "function": {"name": "write_file", "arguments": ""}}]))
    piece = data(delta(tool_calls=[{"index": 0, "function": {"arguments": "z" * fragment}}]))
    flood = Flood(head=head, piece=piece, count=(50 * MIB) // fragment)  # 50 MB of arguments
    scripted.enqueue(flood)
    events, error = await drain(scripted)
    assert error is not None and f"arguments longer than {MAX_ARGUMENT_CHARS:,} characters (write_file)" in error.message
    assert events == []  # no half-made call is ever handed on
    assert scripted.wait_for_disconnect()
    assert flood.sent < SENT_BOUND


async def test_more_tool_calls_than_the_cap_stop_the_answer(scripted: ScriptedOpenAI) -> None:
    calls = [delta(tool_calls=[{"index": i, "id": f"t{i}", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}]) for i in range(MAX_TOOL_CALLS + 1)]
    scripted.enqueue(Raw(events=calls))
    events, error = await drain(scripted)
    assert error is not None and f"more than {MAX_TOOL_CALLS} tool calls" in error.message and events == []
    scripted.enqueue(Raw(events=calls[:MAX_TOOL_CALLS] + [dict(delta(), choices=[{"index": 0, "delta": {}, "finish_reason": "tool_calls"}])]))
    events, error = await drain(scripted)
    assert error is None and sum(type(e).__name__ == "ToolCallEvent" for e in events) == MAX_TOOL_CALLS


def vm_hwm_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM")


@pytest.mark.parametrize("kind", ["line", "answer", "arguments"])
async def test_the_server_answers_while_a_flood_streams_and_the_chat_survives_the_cap(tmp_path: Path, home: Path, scripted: ScriptedOpenAI, kind: str) -> None:
    """Through the real server: mid-flood a ``qwen/skills/list`` is answered (the loop is free), the
    turn ends with the cap's error, the next turn works and sees what the cut answer had said; RSS stays bounded."""
    ws = tmp_path / "ws"
    ws.mkdir()
    head = data(delta(content="Partial answer. "))
    if kind == "line":
        flood = Flood(head=head + b'data: {"x": "', piece=b"x" * MIB, count=400, hold_after=5)
    elif kind == "answer":
        flood = Flood(head=head, piece=data(delta(content="w" * 65536)), count=5000, hold_after=5)
    else:
        call = data(delta(tool_calls=[{"index": 0, "id": "t1", "type": "function", "function": {"name": "write_file", "arguments": ""}}]))
        flood = Flood(head=head + call, piece=data(delta(tool_calls=[{"index": 0, "function": {"arguments": "z" * 65536}}])), count=800, hold_after=5)
    scripted.enqueue(flood, *[Reply(chunks=["Recovered."])] * 3)  # a 4 M-character answer is compacted first
    async with running_server(home, ws, scripted.base_url) as client:
        turn = asyncio.ensure_future(chat(client, "flood me"))
        await wait_for(flood.reached.is_set, "the flood to be under way")
        listed = await asyncio.wait_for(client.protocol.send_request_async("qwen/skills/list", {}), 10)
        assert as_dict(listed) is not None and not turn.done()
        flood.release.set()
        with pytest.raises(JsonRpcException) as failed:
            await turn
        assert "was stopped there" in str(failed.value)
        session_id = as_dict(client.rec.chat_events[0])["sessionId"]
        reply = as_dict(await chat(client, "still there?", sessionId=session_id))
        assert reply["text"] == "Recovered."
        recorded = json.dumps(session_records(home, session_id))
        assert "flood me" in recorded and "Partial answer." in recorded and "was stopped there" in recorded
        hwm = vm_hwm_mb(client._server.pid)
    assert flood.sent < 64 * MIB
    assert hwm < 250, f"the server peaked at {hwm:.0f} MB"


async def test_a_huge_error_answer_is_read_only_as_far_as_it_is_quoted(scripted: ScriptedOpenAI) -> None:
    flood = Flood(head=b'{"error": {"message": "overloaded ', piece=b"x" * MIB, count=200, tail=b'"}}', status=b"500 Internal Server Error", content_type=b"application/json")
    scripted.enqueue(flood)
    events, error = await drain(scripted)
    assert error is not None and error.kind == "server" and events == []
    assert scripted.wait_for_disconnect()
    assert flood.sent < SENT_BOUND


async def test_a_huge_model_list_is_refused_unread(scripted: ScriptedOpenAI) -> None:
    scripted.models_flood = flood = Flood(head=b'{"object": "list", "data": [', piece=b'{"id": "m"},' * 65536, count=300, tail=b"]}", content_type=b"application/json")
    async with ChatClient(scripted.base_url, "k", "scripted-model", max_retries=0) as client:
        with pytest.raises(LLMError, match="more than 8,388,608 bytes"):
            await client.list_models()
    assert scripted.wait_for_disconnect()
    assert flood.sent < SENT_BOUND
