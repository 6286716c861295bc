"""``qwen/compress`` over LSP: the real server process, the scripted model, work-done progress and the meter."""

from __future__ import annotations

import json

from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from support.scripted_openai import Reply, ScriptedOpenAI

from lsp_harness import as_dict, chat, running_server, session_records, wait_for

SUMMARY = "<analysis>draft</analysis><state_snapshot>the user said hello twice</state_snapshot>"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


@pytest_asyncio.fixture
async def lsp(home: Path, workspace: Path, scripted: ScriptedOpenAI):
    async with running_server(home, workspace, scripted.base_url, {"model": {"contextWindow": 30_000}, "context": {"autoCompactThreshold": 0.7}}) as client:
        yield client


async def compress(client: Any, **params: Any) -> dict[str, Any]:
    return as_dict(await client.protocol.send_request_async("qwen/compress", params))


async def test_compress_full_and_fast(lsp: Any, home: Path, scripted: ScriptedOpenAI) -> None:
    scripted.enqueue(Reply(chunks=["hello back"], usage={"prompt_tokens": 4_000, "completion_tokens": 5, "total_tokens": 4_005}))
    sid = as_dict(await chat(lsp, "hello"))["sessionId"]
    scripted.enqueue(Reply(chunks=["again"], usage={"prompt_tokens": 4_100, "completion_tokens": 5, "total_tokens": 4_105}))
    await chat(lsp, "hello again", sessionId=sid)

    scripted.enqueue(Reply(chunks=[SUMMARY], usage={"prompt_tokens": 4_000, "completion_tokens": 30, "total_tokens": 4_030}))
    result = await compress(lsp, sessionId=sid)
    assert result["status"] == "compressed" and result["tokensAfter"] < result["tokensBefore"]
    assert scripted.chat_requests()[-1].body["max_tokens"] == 20_000
    checkpoint = [r for r in session_records(home, sid) if r.get("subtype") == "chat_compression"]
    assert len(checkpoint) == 1 and checkpoint[0]["systemPayload"]["compressedHistory"][1]["parts"] == [{"text": "Got it. Thanks for the additional context!"}]
    assert as_dict(lsp.rec.context_status[-1])["promptTokens"] == result["tokensAfter"]
    await wait_for(lambda: any(len(r) >= 2 for r in lsp.progress_reports.values()), "the progress to end")
    [report] = lsp.progress_reports.values()
    assert isinstance(report[0], types.WorkDoneProgressBegin) and report[0].title == "Compressing conversation history…"
    assert isinstance(report[-1], types.WorkDoneProgressEnd) and "Compressed" in (report[-1].message or "")

    resumed = as_dict(await lsp.protocol.send_request_async("qwen/sessions/resume", {"sessionId": sid}))
    # The person sees the conversation as it happened; the model continues from the summary.
    assert [m["text"] for m in resumed["messages"]] == ["hello", "hello back", "hello again", "again"]
    assert "the user said hello twice" in json.dumps(checkpoint[0]["systemPayload"]["compressedHistory"][0])

    fast = await compress(lsp, sessionId=sid, mode="fast")
    assert fast["status"] == "noop"  # no tool results to clear


async def test_compress_rejects_bad_params_and_unknown_sessions(lsp: Any) -> None:
    with pytest.raises(JsonRpcException) as bad:
        await compress(lsp, sessionId="x", mode="medium")
    assert "mode" in str(bad.value)
    with pytest.raises(JsonRpcException) as missing:
        await compress(lsp, sessionId="0b4a3c2e-0000-4000-8000-000000000000")
    assert "No session" in str(missing.value)


async def test_a_turn_past_auto_compresses_first_and_says_so(lsp: Any, scripted: ScriptedOpenAI) -> None:
    scripted.enqueue(Reply(chunks=["big answer"], usage={"prompt_tokens": 22_000, "completion_tokens": 5, "total_tokens": 22_005}))
    sid = as_dict(await chat(lsp, "hello"))["sessionId"]
    scripted.enqueue(
        Reply(chunks=[SUMMARY], usage={"prompt_tokens": 21_800, "completion_tokens": 30, "total_tokens": 21_830}),
        Reply(chunks=["small answer"], usage={"prompt_tokens": 900, "completion_tokens": 5, "total_tokens": 905}),  # under warn (1,000)
    )
    result = as_dict(await chat(lsp, "go on", sessionId=sid))
    assert result["text"] == "small answer"
    events = [as_dict(e) for e in lsp.rec.chat_events if as_dict(e)["turnId"] == result["turnId"]]
    assert events[0]["kind"] == "status" and events[0]["text"].startswith("Compressed the conversation history")
    levels = [as_dict(s)["level"] for s in lsp.rec.context_status]
    assert levels[0] == "auto" and levels[-1] == "ok"
