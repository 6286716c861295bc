"""The pygls internals ``server/pygls_internals.py`` relies on are still there and behave as relied on.

Each test drives the real pygls objects (a server that is never started; a
transport that records what would be written), so an upgrade that renames
or changes one fails here, naming it.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
from pathlib import Path
from typing import Any

from lsprotocol.types import ResponseError

from qwen_lsp.server.app import QwenLanguageServer
from qwen_lsp.server.pygls_internals import install_stop_event

ROOT = Path(__file__).resolve().parent.parent


class Recorder:
    """The writer pygls sends through: keeps each JSON-RPC message."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []

    def write(self, data: bytes) -> None:
        self.messages.append(json.loads(data.split(b"\r\n\r\n", 1)[1]))

    def close(self) -> None:
        pass


def server_with_recorder() -> tuple[QwenLanguageServer, Recorder]:
    server = QwenLanguageServer()
    recorder = Recorder()
    server.protocol.set_writer(recorder)
    return server, recorder


def test_send_response_writes_an_error_answer_and_strips_tracebacks():
    server, out = server_with_recorder()
    server.protocol.send_response(7, error=ResponseError(code=-32603, message="boom", data={"traceback": ["x"]}))
    assert out.messages == [{"jsonrpc": "2.0", "id": 7, "error": {"code": -32603, "message": "boom"}}]


def test_shutdown_requested_follows_the_shutdown_request():
    server, _out = server_with_recorder()
    assert server.protocol.shutdown_requested is False
    assert list(server.protocol.lsp_shutdown()) == []  # pygls's shutdown handler, run to its end
    assert server.protocol.shutdown_requested is True


async def test_forget_request_drops_the_pending_answer():
    server, out = server_with_recorder()
    future = server.protocol.send_request_async("qwen/permission", {}, msg_id="m1")
    assert out.messages[-1]["id"] == "m1"
    server.protocol.forget_request("m1")
    # The answer arriving late is no longer matched to the request: pygls logs and drops it.
    server.protocol.handle_message(server.protocol.structure_message({"jsonrpc": "2.0", "id": "m1", "result": {"decision": "allow"}}))
    await asyncio.sleep(0)
    assert not future.done()
    future.cancel()


def test_install_stop_event_is_set_by_shutdown():
    server = QwenLanguageServer()
    stop = threading.Event()
    install_stop_event(server, stop)
    server.shutdown()
    assert stop.is_set()


def test_no_other_module_touches_a_pygls_internal():
    """Underscored attributes of pygls objects only in the adapter (``self._x`` on our own objects is fine)."""
    pattern = re.compile(r"\b(?:protocol|ls|server|super\(\))\._[a-z]\w*|\bself\._(?:send_response|shutdown|request_futures|stop_event|server|send_data)\b")
    found = []
    for path in (ROOT / "qwen_lsp").rglob("*.py"):
        if path.name == "pygls_internals.py":
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if pattern.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert found == []



def test_the_protocol_knows_its_server():
    server = QwenLanguageServer()
    assert server.protocol.owner is server
