"""Deeply nested JSON from the LSP client and from the model's tool arguments.

200 KB of ``[`` in one notification used to end the server (``RecursionError``
escaped the stdio reader); a tool call whose arguments nest 5,000 deep failed
the whole turn with -32603. Now the first is dropped (a request gets -32600),
the second is a tool error the model can read, and the server keeps serving.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from support.raw_peer import RawPeer
from support.scripted_openai import Reply, ScriptedOpenAI, ToolCallSpec

from lsp_harness import as_dict, chat, running_server
from qwen_lsp.text.json_depth import TooDeep, deeper_than, loads_bounded, loads_pruned


@pytest.fixture
def peer(tmp_path: Path):
    (tmp_path / "home").mkdir()
    (tmp_path / "ws").mkdir()
    p = RawPeer(tmp_path / "home", tmp_path / "ws")
    yield p
    p.close()


def test_bounded_loader_refuses_what_overflows_and_what_nests_past_the_limit() -> None:
    with pytest.raises(TooDeep):
        loads_bounded("[" * 200_000, 100)
    with pytest.raises(TooDeep):
        loads_bounded("[" * 101 + "]" * 101, 100)
    assert loads_bounded("[" * 100 + "]" * 100, 100) is not None
    assert not deeper_than({"a": [1, {"b": 2}]}, 3) and deeper_than({"a": [1, {"b": []}]}, 3)
    assert isinstance(TooDeep("x"), ValueError)


def test_a_notification_of_nested_brackets_does_not_end_the_server(peer: RawPeer) -> None:
    body = b'{"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": ' + b"[" * 200_000
    peer.send(raw=body)
    closed = b'{"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": ' + b"[" * 500 + b"]" * 500 + b"}"
    peer.send(raw=closed)
    assert peer.alive()
    assert peer.proc.poll() is None


def test_a_deep_request_gets_a_clear_error_and_the_server_goes_on(peer: RawPeer) -> None:
    peer.send(raw=b'{"jsonrpc": "2.0", "id": 41, "method": "qwen/skills/list", "params": ' + b"[" * 200_000)
    error = peer.response(41)["error"]
    assert error["code"] == -32600 and "nested" in error["message"]
    peer.send(raw=b'{"jsonrpc": "2.0", "id": 42, "method": "qwen/skills/list", "params": {"x": ' + b"[" * 300 + b"]" * 300 + b"}}")
    assert "nested more than 100" in peer.response(42)["error"]["message"]
    assert peer.alive()


async def test_tool_arguments_nested_5000_deep_are_a_tool_error_not_a_failed_turn(tmp_path: Path, home: Path, scripted: ScriptedOpenAI) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    deep = '{"file_path": ' + "[" * 5000 + "]" * 5000 + "}"
    scripted.enqueue(Reply(chunks=[], tool_calls=[ToolCallSpec("read_file", deep, id="d1")]), Reply(chunks=["still here"]))
    async with running_server(home, ws, scripted.base_url) as client:
        reply = as_dict(await chat(client, "go"))
        assert reply["text"] == "still here"
        second = scripted.chat_requests()[1].body["messages"]
        answer = next(m for m in second if m.get("role") == "tool" and m.get("tool_call_id") == "d1")
        assert "not valid JSON" in answer["content"] and "nested" in answer["content"]
        scripted.enqueue(Reply(chunks=["and again"]))
        assert as_dict(await chat(client, "again"))["text"] == "and again"


def test_the_pruning_loader_keeps_everything_above_the_limit() -> None:
    value, cuts = loads_pruned(b'{"a": 1, "s": "[[{{\\" ]", "deep": ' + b"[" * 200_000 + b"]" * 200_000 + b', "b": {"c": [1, [[[2]]], 3]}}', 3)
    assert value == {"a": 1, "s": '[[{{" ]', "deep": [[]], "b": {"c": [1, 3]}} and cuts == 2
    assert loads_pruned('{"x": [1, {"y": 2}]}', 3) == ({"x": [1, {"y": 2}]}, 0)
    for broken in (b'{"a": ' + b"[" * 500, b'{"a": "[[[', b"[" * 10 + b"}" * 10):
        with pytest.raises(ValueError):
            loads_pruned(broken, 5)


@pytest.mark.parametrize("depth", [120, 900, 200_000])
@pytest.mark.parametrize("where", ["initializationOptions", "didChangeConfiguration"])
def test_deeply_nested_editor_settings_are_read_to_a_bounded_depth_reported_and_the_rest_used(tmp_path: Path, depth: int, where: str) -> None:
    """Second campaign, back again: a 900-deep ``initializationOptions`` got -32600 and none of the settings applied."""
    (tmp_path / "home").mkdir()
    (tmp_path / "ws").mkdir()
    peer = RawPeer(tmp_path / "home", tmp_path / "ws", initialize=False)
    try:
        options = b'{"model": {"contextWindow": 123457}, "junk": ' + b'{"k": ' * depth + b"1" + b"}" * depth + b', "tools": {"approvalMode": "plan"}}'
        if where == "initializationOptions":
            peer.send(raw=b'{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"capabilities": {}, "rootUri": "' + (tmp_path / "ws").as_uri().encode() + b'", "initializationOptions": ' + options + b"}}")
            assert "result" in peer.response(0), "initialize was refused"
            peer.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        else:
            peer.initialize()
            peer.send(raw=b'{"jsonrpc": "2.0", "method": "workspace/didChangeConfiguration", "params": {"settings": {"qwen": ' + options + b"}}}")
        for attempt in range(200):  # a pushed change is applied off the loop: ask until it shows (a hang detector, no timing)
            peer.request(100 + attempt, "qwen/context", {})
            context = peer.response(100 + attempt)["result"]
            problems = [p["message"] for p in context["problems"] if p["path"] == "settings"]
            if problems:
                break
            time.sleep(0.05)
        assert any("editor: junk nests deeper than 64 levels" in p and "the rest applies" in p for p in problems), problems
        assert context["window"] == 123457  # the rest of the editor's settings applies
        assert peer.alive()
    finally:
        peer.close()
