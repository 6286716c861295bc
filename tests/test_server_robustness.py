"""Malformed traffic from a raw JSON-RPC peer: every request is answered and the server survives."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest


class RawPeer:
    """A bare-bones LSP peer over the server's stdio, to send what a real client never would."""

    def __init__(self, home: Path, root: Path, *, initialize: bool = True) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "QWEN_", "DASHSCOPE_"))}
        env["HOME"] = str(home)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "qwen_lsp", "serve", "--stdio"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        if initialize:
            self.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"capabilities": {}, "rootUri": root.as_uri()}})
            assert self.response(0)["result"]["capabilities"]["experimental"]["qwen"]["chatEvents"] is True
            self.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})

    def send(self, obj: Any = None, raw: bytes | None = None) -> None:
        body = raw if raw is not None else json.dumps(obj).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        length = None
        while True:
            line = self.proc.stdout.readline()
            assert line, "server closed its output"
            if line == b"\r\n" and length is not None:
                return json.loads(self.proc.stdout.read(length))
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])

    def response(self, msg_id: int) -> dict[str, Any]:
        while True:
            msg = self.read()
            if msg.get("id") == msg_id and "method" not in msg:
                return msg

    def alive(self) -> bool:
        self.send({"jsonrpc": "2.0", "id": 999, "method": "qwen/skills/list", "params": {}})
        return "result" in self.response(999)

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait(10)


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
