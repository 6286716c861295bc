"""Malformed traffic from a raw JSON-RPC peer: every request is answered and the server survives."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support.raw_peer import RawPeer


@pytest.fixture
def peer(tmp_path: Path):
    (tmp_path / "home").mkdir()
    (tmp_path / "ws").mkdir()
    p = RawPeer(tmp_path / "home", tmp_path / "ws")
    yield p
    p.close()


@pytest.mark.parametrize(
    "raw",
    [b"{not json", b"[1, 2, 3]", b'"just a string"', b'{"jsonrpc": "2.0"}', b'{"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": 5}}}'],
    ids=["invalid-json", "array", "string", "no-method", "bad-notification-params"],
)
def test_garbage_is_survived(peer: RawPeer, raw: bytes):
    peer.send(raw=raw)
    assert peer.alive()


def test_standard_request_with_bad_params_is_answered(peer: RawPeer):
    peer.send({"jsonrpc": "2.0", "id": 7, "method": "textDocument/codeAction", "params": {"x": 1}})
    error = peer.response(7)["error"]
    assert error["code"] == -32602 and "textDocument/codeAction" in error["message"] and "text_document" in error["message"]
    assert peer.alive()


def test_custom_request_errors(peer: RawPeer):
    peer.send({"jsonrpc": "2.0", "id": 8, "method": "qwen/nothing", "params": {}})
    assert peer.response(8)["error"]["code"] == -32601
    peer.send({"jsonrpc": "2.0", "id": 9, "method": "qwen/chat", "params": None})
    err = peer.response(9)["error"]
    assert err["code"] == -32602 and "prompt" in err["message"]
    peer.send({"jsonrpc": "2.0", "id": 10, "method": "qwen/chat", "params": ["positional"]})
    assert peer.response(10)["error"]["code"] == -32602
    peer.send({"jsonrpc": "2.0", "id": 11, "method": "qwen/chat", "params": {"prompt": "hi"}})
    err = peer.response(11)["error"]
    assert err["code"] == -31001 and "OPENAI_BASE_URL" in err["message"] and err["data"] == {"kind": "config"}
    assert peer.alive()


def test_only_an_uninitialized_server_answers_server_not_initialized(tmp_path: Path, peer: RawPeer) -> None:
    """-32002 is LSP's ServerNotInitialized and nothing else; our own failures use codes outside the reserved ranges."""
    early = RawPeer(tmp_path / "home2", tmp_path, initialize=False)
    try:
        early.send({"jsonrpc": "2.0", "id": 1, "method": "qwen/sessions/list", "params": {}})
        assert early.response(1)["error"]["code"] == -32002
    finally:
        early.close()
    peer.send({"jsonrpc": "2.0", "id": 12, "method": "qwen/chat", "params": {"prompt": "hi"}})
    err = peer.response(12)["error"]
    assert err["data"]["kind"] == "config"
    assert not (-32768 <= err["code"] <= -32000), "application errors stay out of JSON-RPC's reserved range"


def test_requests_after_shutdown_are_refused_with_invalid_request(peer: RawPeer) -> None:
    """LSP: after ``shutdown`` every request gets InvalidRequest (-32600), never silence."""
    peer.send({"jsonrpc": "2.0", "id": 20, "method": "shutdown"})
    assert peer.response(20)["result"] is None
    peer.send({"jsonrpc": "2.0", "id": 21, "method": "qwen/skills/list", "params": {}})
    peer.send({"jsonrpc": "2.0", "id": 22, "method": "textDocument/hover", "params": {"x": 1}})
    peer.send({"jsonrpc": "2.0", "id": 23, "method": "qwen/nothing", "params": {}})
    for msg_id in (21, 22, 23):
        assert peer.response(msg_id)["error"]["code"] == -32600
    peer.send({"jsonrpc": "2.0", "method": "exit"})
    assert peer.proc.wait(10) == 0


def test_exit_without_shutdown_exits_with_code_1(peer: RawPeer) -> None:
    peer.send({"jsonrpc": "2.0", "method": "exit"})
    assert peer.proc.wait(10) == 1


def test_attachment_uri_with_nul_is_invalid_params_without_traceback(peer: RawPeer) -> None:
    peer.send({"jsonrpc": "2.0", "id": 30, "method": "qwen/chat", "params": {"prompt": "hi", "attachments": [{"uri": "file:///tmp/a%00b"}]}})
    err = peer.response(30)["error"]
    assert err["code"] == -32602 and "attachments" in err["message"], err
    assert "traceback" not in json.dumps(err).lower() and "File \"" not in json.dumps(err)
    peer.send({"jsonrpc": "2.0", "id": 31, "method": "qwen/context", "params": {"workspaceUri": "file:///tmp/a%00b"}})
    assert "result" in peer.response(31), "a workspace URI naming no file falls back to the first folder, not a crash"
    assert peer.alive()
