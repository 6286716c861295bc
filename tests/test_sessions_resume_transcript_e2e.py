"""End to end: a reopened chat shows what the user saw live, over the real server and the scripted endpoint.

One turn takes two model rounds whose tool calls both carry the id
``call_0`` (as several OpenAI-compatible servers number them), a second turn
fails, a third is stopped mid-answer. ``qwen/sessions/resume`` must return the
first answer as one message with both rows at the offsets where they
streamed and each result on its own row, the failed turn with the error and
kind it failed with live, and the stopped one marked interrupted.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcRequestCancelled
from support.scripted_openai import Cut, HttpError, Reply, ScriptedOpenAI, Stall, ToolCallSpec

from lsp_harness import as_dict, chat, running_server
from qwen_lsp.sessions.failures import REDACTED
from qwen_lsp.sessions.recording import SessionRecorder
from qwen_lsp.sessions.shown import NO_ANSWER


async def test_resume_returns_tool_rows_in_place_the_failed_turn_and_the_interrupted_answer(
    home: Path, tmp_path: Path, scripted: ScriptedOpenAI
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "users.py").write_text("def list_users():\n    return db.all()\n")
    (workspace / "api.py").write_text("list_users()\n")

    async with running_server(home, workspace, scripted.base_url) as lsp:
        scripted.enqueue(
            Reply(chunks=["first."], tool_calls=[ToolCallSpec("read_file", {"file_path": str(workspace / "users.py")}, id="call_0")]),
            Reply(chunks=["list_users() reads ", "the table 😀."], tool_calls=[ToolCallSpec("read_file", {"file_path": str(workspace / "api.py")}, id="call_0")]),
            Reply(chunks=["It is called once."]),
        )
        first = as_dict(await chat(lsp, "who calls list_users?"))
        session_id = first["sessionId"]
        live = [as_dict(e) for e in lsp.rec.chat_events if as_dict(e)["turnId"] == first["turnId"]]

        scripted.enqueue(HttpError(400, "context too long"))
        with pytest.raises(JsonRpcException) as failed:
            await chat(lsp, "and the tests?", sessionId=session_id)

        scripted.enqueue(Stall(chunks=["Partial answ"]))
        before = len(lsp.rec.chat_events)
        task = asyncio.ensure_future(lsp.protocol.send_request_async("qwen/chat", {"prompt": "more", "sessionId": session_id}, msg_id=777))
        while not any(as_dict(e)["kind"] == "text" for e in lsp.rec.chat_events[before:]):
            await asyncio.sleep(0.01)
        lsp.cancel_request(types.CancelParams(id=777))
        with pytest.raises(JsonRpcRequestCancelled):
            await asyncio.wait_for(task, 5)

        resumed = as_dict(await lsp.protocol.send_request_async("qwen/sessions/resume", {"sessionId": session_id}))

    messages = resumed["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant", "user", "assistant"]
    answer = messages[1]
    assert answer["text"] == "first.list_users() reads the table 😀.It is called once."
    # The rows sit where the calls streamed: the offsets the live text had (UTF-16, as the editor counts).
    streamed = ""
    offsets = []
    for e in live:
        if e["kind"] == "text":
            streamed += e["text"]
        elif e["kind"] == "toolCall":
            offsets.append(len(streamed.encode("utf-16-le")) // 2)
    assert [(t["id"], t["at"]) for t in answer["tools"]] == [("call_0", offsets[0]), ("call_0", offsets[1])] == [("call_0", 6), ("call_0", 38)]
    assert [t["args"]["file_path"] for t in answer["tools"]] == [str(workspace / "users.py"), str(workspace / "api.py")]
    assert "def list_users()" in answer["tools"][0]["result"] and "list_users()" in answer["tools"][1]["result"]
    assert "def list_users" not in answer["tools"][1]["result"], "round two's result is on round two's row"
    assert all(t["isError"] is False for t in answer["tools"])
    # The row's summary line is the one the live event showed; the live event carried the output too.
    results = [e for e in live if e["kind"] == "toolResult"]
    assert [t["display"] for t in answer["tools"]] == [e["text"] for e in results]
    assert "def list_users()" in results[0]["tool"]["output"]
    assert "interrupted" not in answer and "error" not in answer

    assert messages[3] == {"role": "assistant", "text": "", "error": failed.value.message, "errorKind": "bad_request"}
    assert "context too long" in messages[3]["error"]
    assert messages[5]["text"] == "Partial answ" and messages[5]["interrupted"] is True


async def test_a_turn_the_model_failed_with_http_500_reopens_with_its_error_and_kind_without_the_key(
    home: Path, tmp_path: Path, scripted: ScriptedOpenAI
) -> None:
    """The endpoint echoes the key (some do, in "Incorrect API key provided: …"); the file and the reopened error must not.

    A stream that breaks after some text reopens with that text and its error, as it ended live.
    """
    workspace = tmp_path / "ws"
    workspace.mkdir()
    # An older file: a prompt with nothing recorded after it still reopens with the generic line.
    old = SessionRecorder(workspace, version="0.1.0")
    old.record_user("an old failed prompt")

    async with running_server(home, workspace, scripted.base_url) as lsp:
        failing = HttpError(500, "upstream exploded for key test-key, Authorization: Bearer test-key", headers={"Retry-After": "0"})
        scripted.enqueue(*[failing] * 4)  # the first attempt and the client's three retries
        with pytest.raises(JsonRpcException) as failed:
            await chat(lsp, "why is it slow?", sessionId=old.session_id)
        live = failed.value.message
        assert "HTTP 500" in live and "upstream exploded" in live
        scripted.enqueue(Cut(chunks=["Half an ans"]))  # a stream that breaks after some text
        with pytest.raises(JsonRpcException) as broken:
            await chat(lsp, "go on", sessionId=old.session_id)
        resumed = as_dict(await lsp.protocol.send_request_async("qwen/sessions/resume", {"sessionId": old.session_id}))

    assert "test-key" not in old.path.read_text("utf-8")
    messages = resumed["messages"]
    assert [(m["role"], m["text"]) for m in messages] == [
        ("user", "an old failed prompt"),
        ("assistant", ""),
        ("user", "why is it slow?"),
        ("assistant", ""),
        ("user", "go on"),
        ("assistant", "Half an ans"),
    ]
    assert messages[1] == {"role": "assistant", "text": "", "error": NO_ANSWER}
    assert messages[3]["errorKind"] == "server"
    assert messages[3]["error"] == live.replace("test-key", REDACTED)
    assert messages[5]["error"] == broken.value.message
    assert messages[5]["errorKind"] == broken.value.data["kind"]
