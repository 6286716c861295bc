"""Benchmark: the latency the server adds between a model chunk and the ``qwen/chatEvent`` carrying it.

A stamping model (:class:`StampingModel`, below) streams ``CHUNKS`` text
chunks ``SPACING`` apart; each chunk's text is the ``perf_counter_ns()`` at
the moment it is written to the socket (``"<ns>;"``). The model runs in a
thread of this process, so the clock is the one the receivers read.

* **direct** (the baseline): :class:`qwen_lsp.llm.client.ChatClient` in this
  process reads the stream itself; latency = time the ``TextDelta`` is
  yielded − the chunk's stamp. This is exactly the HTTP + SSE path the
  server runs too, so the difference below is the server's own cost.
* **server**: a real ``python -m qwen_lsp serve --stdio`` subprocess, driven
  by a pygls ``LanguageClient``; latency = time the ``qwen/chatEvent``
  handler runs − the stamp of the first chunk the event carries (an event
  that merged several chunks is charged for its oldest one).

Chunks are spaced so each one normally travels alone; the server merges
deltas only when they arrive while it is still writing (``server/events.py``).
The ratio of chunks to events is reported as ``streaming_coalescing``.

Results (``python -m bench.streaming_overhead [--quick]``):
``streaming_overhead_p50_ms`` / ``_p99_ms`` — server − direct (target p50 < 2 ms),
``streaming_latency_p50_ms`` / ``_p99_ms`` — the server path's raw latency
with the direct path's as baseline, and ``streaming_coalescing``.

Why not ``tests/support/scripted_openai.py``: it serialises every chunk of a
reply before sending the first, so it cannot stamp send times.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

from lsprotocol import types
from pygls.lsp.client import LanguageClient

from bench.harness import emit, log, percentile
from qwen_lsp.llm.client import ChatClient, TextDelta

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from support.quiet_home import write_quiet_settings  # noqa: E402

CHUNKS = 200
SPACING = 0.006
TURNS = 3
WARMUP_TURNS = 3
WARMUP_CHUNKS = 30
QUICK = {"chunks": 20, "turns": 1, "warmup_turns": 1, "warmup_chunks": 5}

SERVER_COMMAND = [sys.executable, "-m", "qwen_lsp", "serve", "--stdio"]
STAMP_END = ";"


# ----------------------------------------------------------------- the model


def _sse(obj: dict[str, Any] | str) -> bytes:
    data = obj if isinstance(obj, str) else json.dumps(obj, separators=(",", ":"))
    payload = f"data: {data}\n\n".encode()
    return b"%x\r\n%s\r\n" % (len(payload), payload)


def _chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {"id": "bench", "object": "chat.completion.chunk", "created": 0, "model": "bench",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


class StampingModel:
    """A minimal OpenAI-compatible SSE endpoint whose chunks carry their send time.

    Every ``POST …/chat/completions`` streams ``chunks`` content chunks
    ``spacing`` seconds apart over keep-alive HTTP/1.1 (chunked encoding), then
    a finish chunk, a usage chunk and ``[DONE]``. ``chunks`` and ``spacing``
    may be changed between requests.
    """

    def __init__(self, chunks: int = CHUNKS, spacing: float = SPACING) -> None:
        self.chunks = chunks
        self.spacing = spacing
        self.port = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> Self:
        ready = threading.Event()

        def run() -> None:
            loop = asyncio.new_event_loop()
            server = loop.run_until_complete(asyncio.start_server(self._serve, "127.0.0.1", 0))
            self.port = server.sockets[0].getsockname()[1]
            self._loop = loop
            ready.set()
            loop.run_forever()
            server.close()
            loop.close()

        self._thread = threading.Thread(target=run, name="stamping-model", daemon=True)
        self._thread.start()
        ready.wait()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._loop is not None and self._thread is not None
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.decode("latin-1").split("\r\n")[1:]:
                    name, _, value = line.partition(":")
                    if name.strip().lower() == "content-length":
                        length = int(value)
                await reader.readexactly(length)
                await self._stream(writer)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def _stream(self, writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
                     b"Transfer-Encoding: chunked\r\nConnection: keep-alive\r\n\r\n")
        writer.write(_sse(_chunk({"role": "assistant", "content": ""})))
        await writer.drain()
        for _ in range(self.chunks):
            await asyncio.sleep(self.spacing)
            writer.write(_sse(_chunk({"content": f"{time.perf_counter_ns()}{STAMP_END}"})))
            await writer.drain()
        writer.write(_sse(_chunk({}, "stop")))
        usage = {"prompt_tokens": 100, "completion_tokens": self.chunks, "total_tokens": 100 + self.chunks}
        writer.write(_sse({"id": "bench", "object": "chat.completion.chunk", "created": 0, "model": "bench",
                           "choices": [], "usage": usage}))
        writer.write(_sse("[DONE]") + b"0\r\n\r\n")
        await writer.drain()


# ----------------------------------------------------------------- receivers


@dataclass
class Arrivals:
    """What one path received: (receive ns, text) per event carrying text."""

    events: list[tuple[int, str]] = field(default_factory=list)

    def add(self, text: str) -> None:
        self.events.append((time.perf_counter_ns(), text))

    def latencies_ms(self) -> list[float]:
        """Per event: receive time − stamp of the oldest chunk it carries."""
        return [(at - int(text.split(STAMP_END, 1)[0])) / 1e6 for at, text in self.events]

    def chunk_count(self) -> int:
        return sum(text.count(STAMP_END) for _, text in self.events)


async def direct_turn(client: ChatClient) -> Arrivals:
    got = Arrivals()
    async with contextlib.aclosing(client.stream([{"role": "user", "content": "go"}])) as events:
        async for event in events:
            if isinstance(event, TextDelta):
                got.add(event.text)
    return got


class LspPath:
    """A real server subprocess behind a pygls client, recording ``qwen/chatEvent`` arrivals."""

    def __init__(self, client: LanguageClient) -> None:
        self.client = client
        self.current = Arrivals()
        self._stderr_tail = b""

        def on_event(params: Any) -> None:  # pygls tags the handler, so a plain function, not a method
            if getattr(params, "kind", None) == "text":
                self.current.add(params.text)

        def ignore(params: Any) -> None:
            """Other server notifications; registered so pygls does not log each as unknown."""

        client.feature("qwen/chatEvent")(on_event)
        client.feature("qwen/contextStatus")(ignore)
        client.feature("qwen/skillsChanged")(ignore)

    async def drain_stderr(self, stream: asyncio.StreamReader) -> None:
        """The server logs to stderr; an unread pipe would fill up and block it."""
        while chunk := await stream.read(65536):
            self._stderr_tail = (self._stderr_tail + chunk)[-4000:]

    @property
    def stderr_tail(self) -> str:
        return self._stderr_tail.decode(errors="replace")

    async def turn(self) -> Arrivals:
        self.current = Arrivals()
        await asyncio.wait_for(self.client.protocol.send_request_async("qwen/chat", {"prompt": "go"}), 60)
        return self.current


def scratch_server_env(root: Path, base_url: str) -> tuple[Path, dict[str, str]]:
    """Lay out a scratch HOME and a workspace (a git root with a QWEN.md) under ``root``.

    Returns the workspace and the server's environment: this one minus any
    model settings, HOME pointing at the scratch home (background model requests off, as in
    the test suite), the model at ``base_url``.
    """
    home, workspace = root / "home", root / "ws"
    (workspace / ".git").mkdir(parents=True, exist_ok=True)
    home.mkdir(exist_ok=True)
    write_quiet_settings(home)  # no background model requests beside the measured turns
    (workspace / "QWEN.md").write_text("Benchmark workspace.\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "DASHSCOPE_", "QWEN_"))}
    env.update(HOME=str(home), OPENAI_BASE_URL=base_url, OPENAI_API_KEY="bench", OPENAI_MODEL="bench")
    return workspace, env


@contextlib.asynccontextmanager
async def lsp_server(base_url: str, root: Path) -> AsyncIterator[LspPath]:
    """Start the server in a scratch HOME and workspace, initialised and pointed at ``base_url``."""
    workspace, env = scratch_server_env(root, base_url)
    client = LanguageClient("bench", "1")
    path = LspPath(client)
    await client.start_io(*SERVER_COMMAND, env=env)
    process = client._server  # pygls keeps the subprocess here and exposes no accessor
    assert process is not None and process.stderr is not None
    drain = asyncio.create_task(path.drain_stderr(process.stderr))
    try:
        await client.initialize_async(types.InitializeParams(
            capabilities=types.ClientCapabilities(),
            workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="ws")],
        ))
        client.initialized(types.InitializedParams())
        # qwen/context counts tokens, so it returns only once the background vocabulary load is done.
        await client.protocol.send_request_async("qwen/context", {})
        yield path
        await client.shutdown_async(None)
        client.exit(None)
    except BaseException:
        log(f"server stderr (tail):\n{path.stderr_tail}")
        raise
    finally:
        await client.stop()
        drain.cancel()


# ----------------------------------------------------------------- the run


@dataclass
class Sizes:
    chunks: int = CHUNKS
    turns: int = TURNS
    warmup_turns: int = WARMUP_TURNS
    warmup_chunks: int = WARMUP_CHUNKS


def sizes(argv: list[str]) -> Sizes:
    return Sizes(**QUICK) if "--quick" in argv else Sizes()


@contextlib.contextmanager
def scratch() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="qwen-bench-") as tmp:
        yield Path(tmp)


async def measure(size: Sizes) -> tuple[list[Arrivals], list[Arrivals]]:
    """Alternate direct and server turns (so drift hits both alike); return (direct, server) arrivals."""
    direct: list[Arrivals] = []
    served: list[Arrivals] = []
    with StampingModel() as model, scratch() as root:
        async with ChatClient(model.base_url, "bench", "bench") as chat, lsp_server(model.base_url, root) as lsp:
            model.chunks = size.warmup_chunks
            for _ in range(size.warmup_turns):
                await direct_turn(chat)
                await lsp.turn()
            model.chunks = size.chunks
            for n in range(size.turns):
                log(f"turn {n + 1}/{size.turns}: {size.chunks} chunks, {model.spacing * 1e3:.0f} ms apart")
                direct.append(await direct_turn(chat))
                served.append(await lsp.turn())
    return direct, served


def report(direct: list[Arrivals], served: list[Arrivals], size: Sizes) -> None:
    d = [ms for a in direct for ms in a.latencies_ms()]
    s = [ms for a in served for ms in a.latencies_ms()]
    d_chunks, s_chunks = sum(a.chunk_count() for a in direct), sum(a.chunk_count() for a in served)
    expected = size.chunks * size.turns
    if d_chunks != expected or s_chunks != expected:
        raise SystemExit(f"lost chunks: expected {expected}, direct got {d_chunks}, server got {s_chunks}")
    common = {"chunks": expected, "spacing_ms": SPACING * 1e3}
    for pct in (50, 99):
        server_ms, direct_ms = percentile(s, pct), percentile(d, pct)
        emit(f"streaming_overhead_p{pct}_ms", server_ms - direct_ms, "ms", direct_ms, server_ms=round(server_ms, 4),
             **({"target_ms": 2} if pct == 50 else {}), **common)
    for pct in (50, 99):
        emit(f"streaming_latency_p{pct}_ms", percentile(s, pct), "ms", percentile(d, pct), events=len(s), **common)
    emit("streaming_coalescing", s_chunks / len(s), "chunks/event", d_chunks / len(d), events=len(s), **common)


def main(argv: list[str] | None = None) -> None:
    size = sizes(sys.argv[1:] if argv is None else argv)
    direct, served = asyncio.run(measure(size))
    report(direct, served, size)


if __name__ == "__main__":
    main()
