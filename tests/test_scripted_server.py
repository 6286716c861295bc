"""The scripted OpenAI-compatible server itself: what tests and benchmarks rely on."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import httpx
from support.scripted_openai import Cut, HttpError, Reply, ScriptedOpenAI, Stall, ToolCallSpec

SUPPORT = Path(__file__).parent / "support" / "scripted_openai.py"


def sse_payloads(text: str) -> list[str]:
    return [line[len("data: ") :] for line in text.splitlines() if line.startswith("data: ")]


def test_streams_sse_chunks_usage_and_done(scripted: ScriptedOpenAI) -> None:
    scripted.enqueue(Reply(chunks=["a", "b"], tool_calls=[ToolCallSpec("f", {"x": 1})], split_tool_args=2))
    body = {"model": "m", "messages": [], "stream": True, "stream_options": {"include_usage": True}}
    response = httpx.post(f"{scripted.base_url}/chat/completions", json=body)
    assert response.headers["content-type"] == "text/event-stream"
    payloads = sse_payloads(response.text)
    assert payloads[-1] == "[DONE]"
    chunks = [json.loads(p) for p in payloads[:-1]]
    contents = [c["choices"][0]["delta"].get("content") for c in chunks if c["choices"]]
    assert contents[:3] == ["", "a", "b"]
    args = "".join(
        tc["function"]["arguments"] for c in chunks if c["choices"] for tc in c["choices"][0]["delta"].get("tool_calls", [])
    )
    assert json.loads(args) == {"x": 1}
    assert chunks[-2]["choices"][0]["finish_reason"] == "tool_calls"
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["total_tokens"] > 0


def test_non_stream_request_gets_a_json_completion(scripted: ScriptedOpenAI) -> None:
    scripted.enqueue(Reply(chunks=["hel", "lo"]))
    data = httpx.post(f"{scripted.base_url}/chat/completions", json={"model": "m", "messages": []}).json()
    assert data["choices"][0]["message"]["content"] == "hello"
    assert data["choices"][0]["finish_reason"] == "stop"


def test_queue_default_callable_errors_and_records(scripted: ScriptedOpenAI) -> None:
    scripted.default = Reply(chunks=["default"])
    scripted.enqueue(HttpError(429, "later", {"Retry-After": "3"}), lambda body: Reply(chunks=[f"echo {len(body['messages'])}"]))
    url = f"{scripted.base_url}/chat/completions"
    with httpx.Client() as client:
        first = client.post(url, json={"messages": [], "stream": False})
        assert first.status_code == 429
        assert first.headers["retry-after"] == "3"
        assert first.json()["error"]["message"] == "later"
        second = client.post(url, json={"messages": [1, 2], "stream": False})
        assert second.json()["choices"][0]["message"]["content"] == "echo 2"
        third = client.post(url, json={"messages": [], "stream": False}, headers={"Authorization": "Bearer k"})
        assert third.json()["choices"][0]["message"]["content"] == "default"
    assert [r.body["messages"] for r in scripted.requests] == [[], [1, 2], []]
    assert scripted.requests[2].headers["authorization"] == "Bearer k"
    assert json.loads(scripted.requests[1].raw) == scripted.requests[1].body


def test_models_and_unknown_routes(scripted: ScriptedOpenAI) -> None:
    assert scripted.base_url.endswith("/v1")
    assert httpx.get(f"{scripted.base_url}/models").json()["data"] == [{"id": "scripted-model", "object": "model"}]
    assert httpx.get(f"{scripted.url}/nope").status_code == 404


def _raw_stream_request(scripted: ScriptedOpenAI) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", scripted.port))
    body = json.dumps({"messages": [], "stream": True}).encode()
    sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
    return sock


def _recv_until(sock: socket.socket, marker: bytes) -> bytes:
    sock.settimeout(10)
    received = b""
    while marker not in received:
        chunk = sock.recv(65536)
        assert chunk, f"connection closed before {marker!r} arrived"
        received += chunk
    return received


def test_hang_up_during_stall_is_detected(scripted: ScriptedOpenAI) -> None:
    scripted.enqueue(Stall(["x"]))
    sock = _raw_stream_request(scripted)
    _recv_until(sock, b'"x"')
    assert scripted.disconnects == 0
    sock.close()
    assert scripted.wait_for_disconnect(5)
    assert scripted.disconnects == 1


def test_hang_up_during_slow_reply_is_detected(scripted: ScriptedOpenAI) -> None:
    scripted.enqueue(Reply(chunks=["a"] * 100, delay=0.2))
    sock = _raw_stream_request(scripted)
    _recv_until(sock, b"data: ")
    sock.close()
    assert scripted.wait_for_disconnect(5)


def test_cut_drops_the_connection_without_done(scripted: ScriptedOpenAI) -> None:
    scripted.enqueue(Cut(["part"]))
    sock = _raw_stream_request(scripted)
    received = b""
    while chunk := sock.recv(65536):
        received += chunk
    sock.close()
    assert b'"part"' in received
    assert b"[DONE]" not in received
    assert not received.endswith(b"0\r\n\r\n")
    assert scripted.disconnects == 0  # the server hung up, not the client


def test_stall_ends_after_its_limit(scripted: ScriptedOpenAI) -> None:
    scripted.enqueue(Stall(["x"], after=0.2))
    sock = _raw_stream_request(scripted)
    sock.settimeout(10)
    while sock.recv(65536):
        pass  # returns b"" once the server gives up and closes
    sock.close()


def test_cli_prints_base_url_serves_and_logs(tmp_path: Path) -> None:
    log = tmp_path / "requests.jsonl"
    proc = subprocess.Popen(
        [sys.executable, str(SUPPORT), "--reply", "hi there", "--log", str(log)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        base_url = proc.stdout.readline().strip()
        assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/v1")
        body = {"model": "m", "messages": [{"role": "user", "content": "q"}], "stream": True}
        payloads = sse_payloads(httpx.post(f"{base_url}/chat/completions", json=body).text)
        text = "".join(json.loads(p)["choices"][0]["delta"].get("content") or "" for p in payloads[:-1] if json.loads(p)["choices"])
        assert text == "hi there"
        assert json.loads(log.read_text().splitlines()[0]) == body
    finally:
        proc.terminate()
        proc.wait(10)


def test_start_stop_and_restart_on_new_port() -> None:
    server = ScriptedOpenAI().start()
    port = server.port
    assert httpx.get(f"{server.base_url}/models").status_code == 200
    server.stop()
    with socket.socket() as sock:
        assert sock.connect_ex(("127.0.0.1", port)) != 0
    with ScriptedOpenAI() as again:
        assert httpx.get(f"{again.base_url}/models").status_code == 200
