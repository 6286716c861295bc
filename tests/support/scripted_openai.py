"""A scripted OpenAI-compatible Chat Completions server for tests and benchmarks.

Real HTTP/1.1 (keep-alive, chunked transfer) and real SSE on 127.0.0.1, served
from a background thread with its own asyncio loop, so sync tests, async tests
and a server subprocess can all reach it.  Each ``POST /v1/chat/completions``
takes the next scripted response from a queue (``enqueue``); when the queue is
empty ``default`` answers.  Every request is recorded, and a client hanging up
before a response is complete is counted in ``disconnects``.

Standard library only, so it also runs as a script (see ``main``) for manual
runs and for pointing the reference ``qwen`` CLI at it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Union

MODEL_ID = "scripted-model"


@dataclass
class ToolCallSpec:
    """A tool call to stream; ``arguments`` as a dict is JSON-encoded, a str is sent as is."""

    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)
    id: str | None = None


@dataclass
class Reply:
    """A normal streamed answer.

    ``delay`` is the pause between chunks, ``first_delay`` the pause before the
    response headers.  ``finish_reason`` None means "tool_calls" when there are
    tool calls, else "stop"; the string ``"none"`` sends no finish reason at all.
    ``usage`` None means counts derived from the request and the chunks.
    """

    chunks: list[str] = field(default_factory=lambda: ["ok"])
    delay: float = 0.0
    first_delay: float = 0.0
    tool_calls: list[ToolCallSpec] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    finish_reason: str | None = None
    usage: dict[str, Any] | None = None
    split_tool_args: int = 3


@dataclass
class HttpError:
    """An OpenAI-style JSON error response."""

    status: int
    message: str = "Scripted error"
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Stall:
    """Send ``chunks``, then nothing: hold the connection until the client hangs up or ``after`` passes."""

    chunks: list[str] = field(default_factory=list)
    after: float = 3600.0


@dataclass
class Cut:
    """Send ``chunks``, then drop the socket without finishing the response."""

    chunks: list[str] = field(default_factory=list)


@dataclass
class Raw:
    """Send each of ``events`` verbatim as one SSE ``data:`` payload (malformed chunks welcome).

    Objects are JSON-encoded, strings sent as they are.  ``[DONE]`` follows
    when ``done``; otherwise the socket drops (an early EOF).
    """

    events: list[Any] = field(default_factory=list)
    done: bool = True


@dataclass
class Flood:
    """A huge stream made without holding it: ``head``, then ``piece`` ``count`` times, then ``tail``, all raw bytes.

    ``head`` and ``tail`` are sent as they are (SSE framing included), so a
    line without its end is ``head=b"data: {"`` with a ``piece`` and no
    newline. After ``hold_after`` pieces the flood waits for ``release``
    (set from the test), so a test can act while the stream is mid-way.
    ``sent`` counts the bytes written before the client hung up. ``status`` and
    ``content_type`` make it an error answer or a plain body instead of a stream.
    """

    piece: bytes
    count: int
    head: bytes = b""
    tail: bytes = b"data: [DONE]\n\n"
    hold_after: int | None = None
    status: bytes = b"200 OK"
    content_type: bytes = b"text/event-stream"
    release: threading.Event = field(default_factory=threading.Event)
    reached: threading.Event = field(default_factory=threading.Event)
    sent: int = 0


Response = Union[Reply, HttpError, Stall, Cut, Raw, Flood]
Scripted = Union[Response, Callable[[dict[str, Any]], Response]]


@dataclass
class RecordedRequest:
    path: str
    headers: dict[str, str]  # lower-cased names
    body: dict[str, Any]  # {} when the body was not a JSON object
    raw: bytes
    method: str = "POST"


class _HangUp(Exception):
    """The client closed the connection in the middle of a response."""


_REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 429: "Too Many Requests"}


def _chunk(delta: dict[str, Any], finish_reason: str | None = None, model: str = MODEL_ID) -> dict[str, Any]:
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    }


def _split(text: str, pieces: int) -> list[str]:
    pieces = max(1, min(pieces, len(text) or 1))
    step = -(-len(text) // pieces) if text else 1
    return [text[i : i + step] for i in range(0, len(text), step)] or [""]


def _tool_call_id(spec: ToolCallSpec, index: int) -> str:
    return spec.id or f"call_scripted_{index}"


def _tool_args(spec: ToolCallSpec) -> str:
    return spec.arguments if isinstance(spec.arguments, str) else json.dumps(spec.arguments)


def _usage(reply: Reply, body: dict[str, Any]) -> dict[str, int]:
    if reply.usage is not None:
        return reply.usage
    prompt = max(1, len(json.dumps(body.get("messages", []))) // 4)
    completion = max(1, sum(len(c) for c in reply.chunks + reply.reasoning) // 4)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def _finish_reason(reply: Reply) -> str | None:
    if reply.finish_reason == "none":
        return None
    return reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")


def stream_events(reply: Reply, body: dict[str, Any]) -> list[dict[str, Any]]:
    """The chunk objects a real server would stream for ``reply`` (before ``[DONE]``)."""
    model = body.get("model") or MODEL_ID
    events = [_chunk({"role": "assistant", "content": ""}, model=model)]
    events += [_chunk({"reasoning_content": r}, model=model) for r in reply.reasoning]
    events += [_chunk({"content": c}, model=model) for c in reply.chunks]
    for index, spec in enumerate(reply.tool_calls):
        head = {"index": index, "id": _tool_call_id(spec, index), "type": "function", "function": {"name": spec.name, "arguments": ""}}
        events.append(_chunk({"tool_calls": [head]}, model=model))
        for piece in _split(_tool_args(spec), reply.split_tool_args):
            events.append(_chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}, model=model))
    events.append(_chunk({}, _finish_reason(reply), model=model))
    if (body.get("stream_options") or {}).get("include_usage"):
        events.append({"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "created": 0, "model": model, "choices": [], "usage": _usage(reply, body)})
    return events


def completion_json(reply: Reply, body: dict[str, Any]) -> dict[str, Any]:
    """A non-streamed completion for ``reply``."""
    message: dict[str, Any] = {"role": "assistant", "content": "".join(reply.chunks) or None}
    if reply.reasoning:
        message["reasoning_content"] = "".join(reply.reasoning)
    if reply.tool_calls:
        message["tool_calls"] = [
            {"id": _tool_call_id(s, i), "type": "function", "function": {"name": s.name, "arguments": _tool_args(s)}}
            for i, s in enumerate(reply.tool_calls)
        ]
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": 0,
        "model": body.get("model") or MODEL_ID,
        "choices": [{"index": 0, "message": message, "finish_reason": _finish_reason(reply)}],
        "usage": _usage(reply, body),
    }


class ScriptedOpenAI:
    """The server; use as a context manager or call ``start()`` / ``stop()``."""

    def __init__(self, port: int = 0, *, default: Scripted | None = None, log_path: str | None = None) -> None:
        self.port = port
        self.default: Scripted = default if default is not None else Reply()
        self.log_path = log_path
        self.models_flood: Flood | None = None
        """When set, ``GET /models`` is answered with it instead of the one-model list."""
        self.requests: list[RecordedRequest] = []
        self._queue: deque[Scripted] = deque()
        self._lock = threading.Lock()
        self._disconnected = threading.Condition(self._lock)
        self._disconnects = 0
        self._accepted = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.Server | None = None
        self._thread: threading.Thread | None = None
        self._connections: set[asyncio.Task[None]] = set()

    # -- lifecycle -------------------------------------------------------

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    def start(self) -> ScriptedOpenAI:
        ready = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            try:
                self._server = loop.run_until_complete(asyncio.start_server(self._serve, "127.0.0.1", self.port))
                self.port = self._server.sockets[0].getsockname()[1]
            except BaseException as exc:  # surfaced to the caller of start()
                failure.append(exc)
                ready.set()
                loop.close()
                return
            ready.set()
            loop.run_forever()
            loop.run_until_complete(self._shutdown())
            loop.close()

        self._thread = threading.Thread(target=run, name="scripted-openai", daemon=True)
        self._thread.start()
        ready.wait()
        if failure:
            raise failure[0]
        return self

    async def _shutdown(self) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._connections):
            task.cancel()
        await asyncio.gather(*self._connections, return_exceptions=True)
        await self._server.wait_closed()

    def stop(self) -> None:
        if self._loop is None or self._thread is None:
            return
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._thread = None
        self._loop = None

    def __enter__(self) -> ScriptedOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- scripting and records ---------------------------------------------

    def enqueue(self, *responses: Scripted) -> None:
        with self._lock:
            self._queue.extend(responses)

    def _next(self) -> Scripted:
        with self._lock:
            return self._queue.popleft() if self._queue else self.default

    @property
    def disconnects(self) -> int:
        with self._lock:
            return self._disconnects

    @property
    def connections(self) -> int:
        """How many TCP connections were accepted: a client that reuses its keep-alive connection opens one."""
        with self._lock:
            return self._accepted

    def wait_for_disconnect(self, timeout: float = 5.0, count: int = 1) -> bool:
        """Block until at least ``count`` hang-ups were seen; False on timeout."""
        with self._disconnected:
            return self._disconnected.wait_for(lambda: self._disconnects >= count, timeout)

    def _record_disconnect(self) -> None:
        with self._disconnected:
            self._disconnects += 1
            self._disconnected.notify_all()

    def chat_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path.endswith("/chat/completions")]

    # -- HTTP ------------------------------------------------------------

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        with self._lock:
            self._accepted += 1
        try:
            while await self._one_request(reader, writer):
                pass
        except (_HangUp, ConnectionError):
            self._record_disconnect()
        except (asyncio.IncompleteReadError, asyncio.CancelledError):
            pass
        finally:
            self._connections.discard(task)
            writer.transport.abort()

    async def _one_request(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Serve one request; False when the connection should end."""
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, ConnectionError):
            return False  # client closed an idle keep-alive connection
        lines = head.decode("latin-1").split("\r\n")
        method, path, _ = lines[0].split(" ", 2)
        headers = {}
        for line in lines[1:]:
            if ":" in line:
                name, value = line.split(":", 1)
                headers[name.strip().lower()] = value.strip()
        raw = await reader.readexactly(int(headers.get("content-length", "0")))
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = {}
        if not isinstance(body, dict):
            body = {}
        with self._lock:
            self.requests.append(RecordedRequest(path, headers, body, raw, method))
        if self.log_path and raw:
            with open(self.log_path, "a", encoding="utf-8") as log:
                log.write(json.dumps(body) + "\n")

        route = path.split("?", 1)[0].rstrip("/")
        if method == "GET" and route.endswith("/models"):
            if self.models_flood is not None:
                return await self._flood(reader, writer, self.models_flood)
            await self._send_json(writer, 200, {"object": "list", "data": [{"id": MODEL_ID, "object": "model"}]})
            return True
        if method != "POST" or not route.endswith("/chat/completions"):
            await self._send_json(writer, 404, {"error": {"message": f"No route for {method} {path}", "type": "not_found"}})
            return True

        scripted = self._next()
        response = scripted(body) if callable(scripted) else scripted
        return await self._respond(reader, writer, response, body)

    async def _respond(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, response: Response, body: dict[str, Any]) -> bool:
        if isinstance(response, HttpError):
            error = {"error": {"message": response.message, "type": "scripted_error", "code": response.status}}
            await self._send_json(writer, response.status, error, response.headers)
            return True
        if isinstance(response, Reply) and not body.get("stream"):
            await self._wait(reader, response.first_delay)
            await self._send_json(writer, 200, completion_json(response, body))
            return True
        if isinstance(response, Reply):
            await self._wait(reader, response.first_delay)
            await self._start_stream(writer)
            for event in stream_events(response, body):
                await self._send_event(writer, json.dumps(event))
                await self._wait(reader, response.delay)
            await self._send_event(writer, "[DONE]")
            writer.write(b"0\r\n\r\n")
            await writer.drain()
            return True
        if isinstance(response, Raw):
            await self._start_stream(writer)
            for raw_event in response.events:
                await self._send_event(writer, raw_event if isinstance(raw_event, str) else json.dumps(raw_event))
            if not response.done:
                return False
            await self._send_event(writer, "[DONE]")
            writer.write(b"0\r\n\r\n")
            await writer.drain()
            return True
        if isinstance(response, Flood):
            return await self._flood(reader, writer, response)
        partial = Reply(chunks=list(response.chunks))
        await self._start_stream(writer)
        for event in stream_events(partial, body)[: 1 + len(partial.chunks)]:
            await self._send_event(writer, json.dumps(event))
        if isinstance(response, Stall):
            await self._wait(reader, response.after)
        return False  # Cut, or a Stall that outlasted ``after``: drop the socket mid-response

    async def _flood(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, flood: Flood) -> bool:
        writer.write(
            b"HTTP/1.1 %s\r\nContent-Type: %s\r\nTransfer-Encoding: chunked\r\nConnection: keep-alive\r\n\r\n" % (flood.status, flood.content_type)
        )
        await writer.drain()
        try:
            await self._send_raw(writer, flood.head, flood)
            for i in range(flood.count):
                if i == flood.hold_after:
                    flood.reached.set()
                    while not flood.release.is_set():
                        await self._wait(reader, 0.02)
                await self._send_raw(writer, flood.piece, flood)
            await self._send_raw(writer, flood.tail, flood)
            writer.write(b"0\r\n\r\n")
            await writer.drain()
        except (ConnectionError, _HangUp):
            raise _HangUp from None
        return True

    async def _send_raw(self, writer: asyncio.StreamWriter, payload: bytes, flood: Flood) -> None:
        if not payload:
            return
        if writer.transport.is_closing():
            raise _HangUp
        writer.write(b"%x\r\n%s\r\n" % (len(payload), payload))
        await writer.drain()
        flood.sent += len(payload)

    async def _wait(self, reader: asyncio.StreamReader, seconds: float) -> None:
        """Sleep, but notice at once when the client hangs up meanwhile (EOF on the socket)."""
        if seconds <= 0:
            return
        try:
            data = await asyncio.wait_for(reader.read(1), seconds)
        except TimeoutError:
            return
        if not data:
            raise _HangUp

    async def _start_stream(self, writer: asyncio.StreamWriter) -> None:
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
            b"Transfer-Encoding: chunked\r\nConnection: keep-alive\r\n\r\n"
        )
        await writer.drain()

    async def _send_event(self, writer: asyncio.StreamWriter, data: str) -> None:
        payload = f"data: {data}\n\n".encode()
        if writer.transport.is_closing():
            raise _HangUp
        writer.write(b"%x\r\n%s\r\n" % (len(payload), payload))
        await writer.drain()

    async def _send_json(self, writer: asyncio.StreamWriter, status: int, obj: Any, extra: dict[str, str] | None = None) -> None:
        payload = json.dumps(obj).encode()
        head = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}", "Content-Type: application/json", f"Content-Length: {len(payload)}"]
        head += [f"{k}: {v}" for k, v in (extra or {}).items()]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + payload)
        await writer.drain()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Serve scripted OpenAI-compatible replies on 127.0.0.1.")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--reply", default="ok", help="text of every reply (streamed word by word)")
    parser.add_argument("--chunk-delay", type=float, default=0.0, help="seconds between streamed chunks")
    parser.add_argument("--log", help="append each request body to this file as a JSON line")
    args = parser.parse_args(argv)
    words = args.reply.split(" ")
    chunks = [w + " " for w in words[:-1]] + [words[-1]]
    server = ScriptedOpenAI(args.port, default=Reply(chunks=[c for c in chunks if c], delay=args.chunk_delay), log_path=args.log)
    server.start()
    print(server.base_url, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


if __name__ == "__main__":
    sys.exit(main())
