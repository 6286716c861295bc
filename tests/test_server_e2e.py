"""End-to-end: the real server over stdio, the scripted model over real HTTP/SSE."""

from __future__ import annotations

import asyncio
import json
import socket
from pathlib import Path

import pytest
import pytest_asyncio
from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcRequestCancelled
from support.scripted_openai import HttpError, Raw, Reply, ScriptedOpenAI, Stall, ToolCallSpec

from lsp_harness import as_dict, chat, initialize, running_server, server_env, session_records, start_client


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".git").mkdir()
    (ws / "QWEN.md").write_text("Project rule: use tabs.\n")
    return ws


@pytest_asyncio.fixture
async def lsp(home: Path, workspace: Path, scripted: ScriptedOpenAI):
    async with running_server(home, workspace, scripted.base_url) as client:
        yield client


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def test_streams_events_in_order_before_the_response(lsp, scripted: ScriptedOpenAI, home: Path):
    scripted.enqueue(Reply(chunks=["Hel", "lo", ", ", "wor", "ld"], delay=0.02))
    res = as_dict(await chat(lsp, "hi"))
    events = [as_dict(e) for e in lsp.rec.chat_events]
    assert [e["seq"] for e in events] == list(range(len(events)))
    assert all(e["kind"] == "text" and e["turnId"] == res["turnId"] for e in events)
    assert "".join(e["text"] for e in events) == res["text"] == "Hello, world"
    assert res["finishReason"] == "stop"
    assert res["usage"]["promptTokens"] > 0
    records = session_records(home, res["sessionId"])
    assert [r["type"] for r in records][:2] == ["user", "assistant"]
    assert records[0]["message"]["parts"][-1]["text"] == "hi"
    assert records[1]["message"] == {"role": "model", "parts": [{"text": "Hello, world"}]}
    status = [as_dict(s) for s in lsp.rec.context_status]
    assert status and status[-1]["sessionId"] == res["sessionId"] and status[-1]["level"] == "ok"


async def test_second_turn_continues_the_session(lsp, scripted: ScriptedOpenAI):
    scripted.enqueue(Reply(chunks=["first"]), Reply(chunks=["second"]))
    first = as_dict(await chat(lsp, "one"))
    second = as_dict(await chat(lsp, "two", sessionId=first["sessionId"]))
    assert second["sessionId"] == first["sessionId"]
    msgs = scripted.chat_requests()[-1].body["messages"]
    assert [m["role"] for m in msgs][-3:] == ["user", "assistant", "user"]
    assert msgs[-2]["content"] == "first"


async def test_cancel_closes_the_upstream_stream_and_records_partial(lsp, scripted: ScriptedOpenAI, home: Path):
    scripted.enqueue(Stall(chunks=["partial ", "answer"]))
    task = asyncio.ensure_future(lsp.protocol.send_request_async("qwen/chat", {"prompt": "go"}, msg_id=4242))
    while len(lsp.rec.chat_events) < 1:
        await asyncio.sleep(0.01)
    session_id = as_dict(lsp.rec.chat_events[0])["sessionId"]
    lsp.cancel_request(types.CancelParams(id=4242))
    with pytest.raises(JsonRpcRequestCancelled):
        await asyncio.wait_for(task, 5)
    assert scripted.wait_for_disconnect(5)
    records = session_records(home, session_id)
    model = [r for r in records if r["type"] == "assistant"]
    assert model and model[-1]["message"]["parts"][0]["text"].startswith("partial")
    assert model[-1].get("interrupted") is True
    # the server is still alive and the session resumable
    scripted.enqueue(Reply(chunks=["after"]))
    res = as_dict(await chat(lsp, "again", sessionId=session_id))
    assert res["text"] == "after"


async def test_bad_params_name_the_field(lsp):
    with pytest.raises(JsonRpcInvalidParams, match="prompt"):
        await lsp.protocol.send_request_async("qwen/chat", {})
    with pytest.raises(JsonRpcInvalidParams, match="attachments"):
        await lsp.protocol.send_request_async("qwen/chat", {"prompt": "x", "attachments": [{"uri": 3}]})
    with pytest.raises(JsonRpcInvalidParams, match="sessionId"):
        await lsp.protocol.send_request_async("qwen/sessions/resume", {})


async def test_unauthorized_gives_actionable_error(lsp, scripted: ScriptedOpenAI):
    scripted.enqueue(HttpError(401, "invalid api key"))
    with pytest.raises(JsonRpcException) as info:
        await chat(lsp, "hi")
    assert "rejected" in info.value.message and scripted.base_url in info.value.message
    assert info.value.code == -31002
    errors = [as_dict(e) for e in lsp.rec.chat_events if as_dict(e)["kind"] == "error"]
    assert errors and "rejected" in errors[-1]["text"]
    res = as_dict(await chat(lsp, "hi again"))
    assert res["text"] == "ok"


async def test_endpoint_down_then_fixed_by_settings_change(home: Path, workspace: Path, scripted: ScriptedOpenAI):
    dead = f"http://127.0.0.1:{free_port()}/v1"
    async with running_server(home, workspace, None, {"model": {"baseUrl": dead, "name": "scripted-model", "apiKey": "k"}}) as client:
        with pytest.raises(JsonRpcException) as info:
            await chat(client, "hi")
        assert "Nothing is listening" in info.value.message and dead in info.value.message
        client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"qwen": {"model": {"baseUrl": scripted.base_url, "name": "other-model"}}})
        )
        res = as_dict(await chat(client, "hi"))
        assert res["text"] == "ok"
        assert scripted.chat_requests()[-1].body["model"] == "other-model"


async def test_no_model_configured_says_how_to_configure(home: Path, workspace: Path):
    async with running_server(home, workspace, None) as client:
        with pytest.raises(JsonRpcException, match="OPENAI_BASE_URL"):
            await chat(client, "hi")


async def test_settings_pulled_when_change_has_no_payload(lsp, scripted: ScriptedOpenAI):
    lsp.set_configuration({"model": {"name": "pulled-model"}}, section="qwen")
    lsp.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    await chat(lsp, "hi")  # handled after the notification, and waits for the pull it started
    assert scripted.chat_requests()[-1].body["model"] == "pulled-model"


async def test_system_and_tools_bytes_stable_until_qwen_md_changes(lsp, scripted: ScriptedOpenAI, workspace: Path):
    first = as_dict(await chat(lsp, "one"))
    await chat(lsp, "two", sessionId=first["sessionId"])
    a, b = scripted.chat_requests()[-2:]
    assert a.body["messages"][0] == b.body["messages"][0]
    assert json.dumps(a.body["tools"]) == json.dumps(b.body["tools"])
    assert "use tabs" in a.body["messages"][0]["content"]
    (workspace / "QWEN.md").write_text("Project rule: use spaces.\n")
    lsp.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=(workspace / "QWEN.md").as_uri())))
    await chat(lsp, "three", sessionId=first["sessionId"])
    c = scripted.chat_requests()[-1]
    assert "use spaces" in c.body["messages"][0]["content"]
    assert json.dumps(c.body["tools"]) == json.dumps(a.body["tools"])


async def test_malformed_message_does_not_kill_the_server(lsp, scripted: ScriptedOpenAI):
    writer = lsp.protocol.writer
    body = b"{this is not json"
    writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    res = as_dict(await chat(lsp, "still there?"))
    assert res["text"] == "ok"


async def test_context_inspector_lists_sections_and_totals(lsp, workspace: Path):
    res = as_dict(await lsp.protocol.send_request_async("qwen/context", {}))
    names = [s["name"] for s in res["sections"]]
    assert "tools" in names
    assert any(s.get("source", "") and s["source"].endswith("QWEN.md") for s in res["sections"])
    assert res["totalTokens"] == sum(s["tokens"] for s in res["sections"])
    assert res["window"] == 200_000  # Qwen Code 0.24.4's DEFAULT_TOKEN_LIMIT: "scripted-model" is in no table
    assert res["thresholds"]["warn"] < res["thresholds"]["auto"] < res["thresholds"]["hard"]


async def test_sessions_list_resume_delete(lsp, scripted: ScriptedOpenAI):
    scripted.enqueue(Reply(chunks=["answer one"]))
    first = as_dict(await chat(lsp, "remember the blue door"))
    listed = as_dict(await lsp.protocol.send_request_async("qwen/sessions/list", {}))["sessions"]
    assert [s["sessionId"] for s in listed] == [first["sessionId"]]
    assert "blue door" in listed[0]["title"] and listed[0]["messageCount"] >= 2
    resumed = as_dict(await lsp.protocol.send_request_async("qwen/sessions/resume", {"sessionId": first["sessionId"]}))
    assert resumed["messages"] == [{"role": "user", "text": "remember the blue door"}, {"role": "assistant", "text": "answer one"}]
    deleted = as_dict(await lsp.protocol.send_request_async("qwen/sessions/delete", {"sessionId": first["sessionId"]}))
    assert deleted == {"deleted": True}
    with pytest.raises(JsonRpcException, match="No session"):
        await lsp.protocol.send_request_async("qwen/sessions/resume", {"sessionId": first["sessionId"]})


async def test_session_id_with_path_traversal_is_invalid_params(lsp):
    for method, params in (
        ("qwen/chat", {"prompt": "x", "sessionId": "../../etc/passwd"}),
        ("qwen/sessions/resume", {"sessionId": "../x"}),
        ("qwen/sessions/delete", {"sessionId": "a/b"}),
    ):
        with pytest.raises(JsonRpcInvalidParams, match="sessionId"):
            await lsp.protocol.send_request_async(method, params)


async def test_fast_model_is_coalesced_without_losing_text(lsp, scripted: ScriptedOpenAI):
    chunks = [f"w{i} " for i in range(400)]
    scripted.enqueue(Reply(chunks=chunks))  # no delay: chunks pile up faster than events are written
    res = as_dict(await chat(lsp, "fast"))
    events = [as_dict(e) for e in lsp.rec.chat_events]
    assert "".join(e["text"] for e in events) == res["text"] == "".join(chunks)
    assert [e["seq"] for e in events] == list(range(len(events)))
    assert len(events) < len(chunks)



async def test_settings_kept_in_workspace_configuration_are_pulled_at_startup(home: Path, workspace: Path, scripted: ScriptedOpenAI):
    client, _ = await start_client(server_env(home, None))
    try:
        client.set_configuration({"model": {"name": "from-config"}}, section="qwen")
        await initialize(client, workspace, {"model": {"baseUrl": scripted.base_url, "apiKey": "k"}})
        res = as_dict(await chat(client, "hi"))
        assert res["text"] == "ok"
        body = scripted.chat_requests()[-1]
        assert body.body["model"] == "from-config"  # pulled ...
        assert body.headers["authorization"] == "Bearer k"  # ... on top of initializationOptions
    finally:
        await client.shutdown_session()
        await client.stop()


async def test_length_inside_a_tool_call_ends_the_turn_length(lsp, scripted: ScriptedOpenAI, workspace: Path):
    scripted.enqueue(Reply(chunks=["Reading."], tool_calls=[ToolCallSpec("read_file", '{"file_path": "QWE', id="c1")], finish_reason="length"))
    res = as_dict(await chat(lsp, "read it"))
    assert res["finishReason"] == "length" and res["text"] == "Reading."
    events = [as_dict(e) for e in lsp.rec.chat_events]
    assert not [e for e in events if e["kind"] in ("toolCall", "toolResult")]
    assert any(e["kind"] == "status" and "cut off" in e["text"] for e in events)
    assert len(scripted.chat_requests()) == 1


async def test_malformed_chunk_is_a_protocol_error_and_partial_text_is_kept(lsp, scripted: ScriptedOpenAI, home: Path):
    text = {"choices": [{"index": 0, "delta": {"content": "so far"}, "finish_reason": None}]}
    scripted.enqueue(Raw([text, {"choices": [{"index": 0, "delta": "s"}]}]))
    with pytest.raises(JsonRpcException) as info:
        await chat(lsp, "hi")
    assert info.value.code == -31008 and "not in the OpenAI Chat Completions format" in info.value.message
    session_id = as_dict(lsp.rec.chat_events[0])["sessionId"]
    model = [r for r in session_records(home, session_id) if r["type"] == "assistant"]
    assert model[-1]["message"]["parts"] == [{"text": "so far"}] and model[-1].get("interrupted") is True
    scripted.enqueue(Reply(chunks=["after"]))
    res = as_dict(await chat(lsp, "again", sessionId=session_id))
    assert res["text"] == "after"
