"""Benchmark: 20 chats streaming at once through one server — p99 streaming overhead, RSS, nothing lost or reordered.

The stamping model of ``bench/streaming_overhead.py`` (each chunk's text is
the ``perf_counter_ns()`` at which it was written to the socket) runs in a
process of its own and serves ``STREAMS`` concurrent streams of ``CHUNKS``
chunks ``SPACING`` apart. ``perf_counter_ns`` is ``CLOCK_MONOTONIC`` on
Linux, one clock for every process.

* **direct** (baseline): ``STREAMS`` :class:`~qwen_lsp.llm.client.ChatClient`
  streams in this process at once; latency = ``TextDelta`` arrival − stamp.
* **server**: one real ``python -m qwen_lsp serve --stdio``, ``STREAMS``
  ``qwen/chat`` requests at once, each on its own chat (created beforehand);
  latency = ``qwen/chatEvent`` arrival − the stamp of the oldest chunk it
  carries. The client is a bare asyncio reader (``json.loads`` per message):
  with the model and pygls's client in one process, 3,000 messages a second
  measured mostly the benchmark's own queueing.

Overhead at a percentile = server latency − direct latency at that
percentile. Every event is checked: per chat, ``seq`` runs 0, 1, 2, …
without a gap, and the stamps reassembled from its text are all ``CHUNKS``
of them, in send order — the benchmark fails otherwise.

Results: ``load_streams_overhead_p99_ms`` (target < 10 ms), ``_p50_ms``,
``load_streams_rss_mb`` (server VmRSS after the load, against its VmRSS
before it; ``peak_mb`` = VmHWM) and ``load_streams_coalescing``. Beside the
overheads, ``server_cpu_us_per_chunk``: the server's CPU time (user +
system) during the rounds per chunk delivered, a figure machine load does
not inflate the way it inflates p99.
p99 depends on other load on the machine (two cores shared by several
processes make it mostly a measure of scheduling); rerun on a quiet machine.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import multiprocessing
import os
import sys
import time
from collections import defaultdict
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

from bench.harness import emit, log, percentile
from bench.streaming_overhead import SERVER_COMMAND, STAMP_END, ChatClient, StampingModel, TextDelta, scratch, scratch_server_env

STREAMS = 20
CHUNKS = 200
SPACING = 0.006
ROUNDS = 3
QUICK = {"streams": 4, "chunks": 20, "rounds": 1}


# ----------------------------------------------------------------- the model, in its own process


def _serve_model(chunks: int, ports: Any) -> None:
    with StampingModel(chunks=chunks, spacing=SPACING) as model:
        ports.put(model.port)
        while True:
            time.sleep(3600)


@contextlib.contextmanager
def model_process(chunks: int) -> Iterator[str]:
    ctx = multiprocessing.get_context("spawn")
    ports = ctx.Queue()
    proc = ctx.Process(target=_serve_model, args=(chunks, ports), daemon=True)
    proc.start()
    try:
        yield f"http://127.0.0.1:{ports.get(timeout=60)}/v1"
    finally:
        proc.kill()
        proc.join()


# ----------------------------------------------------------------- a bare LSP client


class RawClient:
    """Frames out, frames in; ``qwen/chatEvent`` params land in ``events`` with their arrival time."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.events: list[tuple[int, dict[str, Any]]] = []
        self._waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._next_id = 0
        self._reader = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            length = None
            while True:
                line = await out.readline()
                if not line:
                    return
                if line == b"\r\n" and length is not None:
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            msg = json.loads(await out.readexactly(length))
            if msg.get("method") == "qwen/chatEvent":
                self.events.append((time.perf_counter_ns(), msg["params"]))
            elif "method" not in msg and msg.get("id") in self._waiting:
                self._waiting.pop(msg["id"]).set_result(msg)

    def send(self, method: str, params: Any = None, msg_id: int | None = None) -> None:
        body = json.dumps({"jsonrpc": "2.0", "method": method, "params": params, **({} if msg_id is None else {"id": msg_id})}).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    async def request(self, method: str, params: Any = None) -> dict[str, Any]:
        self._next_id += 1
        done = self._waiting[self._next_id] = asyncio.get_running_loop().create_future()
        self.send(method, params, self._next_id)
        answer = await asyncio.wait_for(done, 120)
        if "error" in answer:
            raise SystemExit(f"{method}: {answer['error']}")
        return answer["result"]


@contextlib.asynccontextmanager
async def server(base_url: str, root: Path) -> AsyncIterator[RawClient]:
    workspace, env = scratch_server_env(root, base_url)
    proc = await asyncio.create_subprocess_exec(*SERVER_COMMAND, env=env, stdin=asyncio.subprocess.PIPE,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
    client = RawClient(proc)
    try:
        await client.request("initialize", {"capabilities": {}, "rootUri": workspace.as_uri()})
        client.send("initialized", {})
        await client.request("qwen/context", {})  # answered once the vocabulary is loaded
        yield client
        await client.request("shutdown")
        client.send("exit")
        await asyncio.wait_for(proc.wait(), 30)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of ``pid`` so far (``/proc/<pid>/stat`` fields 14 and 15)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def status_kb(pid: int, name: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(name + ":"):
            return int(line.split()[1])
    raise SystemExit(f"no {name} for {pid}")


# ----------------------------------------------------------------- the run


async def direct_round(base_url: str, streams: int) -> list[float]:
    async def one() -> list[float]:
        got: list[float] = []
        async with ChatClient(base_url, "bench", "bench") as client:
            async with contextlib.aclosing(client.stream([{"role": "user", "content": "go"}])) as events:
                async for event in events:
                    if isinstance(event, TextDelta):
                        got.append((time.perf_counter_ns() - int(event.text.split(STAMP_END, 1)[0])) / 1e6)
        return got

    return [ms for part in await asyncio.gather(*(one() for _ in range(streams))) for ms in part]


def check_turns(events: list[tuple[int, dict[str, Any]]], chunks: int, turns: int) -> tuple[list[float], float]:
    """Per turn: seq gap-free from 0, every stamp present once and in order. Returns latencies and chunks per text event."""
    by_turn: dict[str, list[tuple[int, dict[str, Any]]]] = defaultdict(list)
    for at, params in events:
        by_turn[params["turnId"]].append((at, params))
    if len(by_turn) != turns:
        raise SystemExit(f"events for {len(by_turn)} turns, expected {turns}")
    latencies: list[float] = []
    text_events = 0
    for turn, got in by_turn.items():
        if [p["seq"] for _, p in got] != list(range(len(got))):
            raise SystemExit(f"turn {turn}: seq has a gap or is out of order")
        texts = [(at, p["text"]) for at, p in got if p["kind"] == "text"]
        stamps = [int(s) for _, text in texts for s in text.split(STAMP_END) if s]
        if len(stamps) != chunks or stamps != sorted(stamps):
            raise SystemExit(f"turn {turn}: {len(stamps)} of {chunks} chunks, in order: {stamps == sorted(stamps)}")
        latencies += [(at - int(text.split(STAMP_END, 1)[0])) / 1e6 for at, text in texts]
        text_events += len(texts)
    return latencies, chunks * turns / text_events


async def measure(size: dict[str, int]) -> dict[str, Any]:
    with model_process(size["chunks"]) as base_url, scratch() as root:
        async with server(base_url, root) as lsp:
            pid = lsp.proc.pid
            log(f"warm-up: {size['streams']} chats")
            chats = [(await lsp.request("qwen/chat", {"prompt": f"chat {i}"}))["sessionId"] for i in range(size["streams"])]
            await direct_round(base_url, size["streams"])
            rss_before = status_kb(pid, "VmRSS")
            direct: list[float] = []
            served: list[float] = []
            coalescing: list[float] = []
            cpu = 0.0
            for n in range(size["rounds"]):
                log(f"round {n + 1}/{size['rounds']}: {size['streams']} streams × {size['chunks']} chunks, {SPACING * 1e3:.0f} ms apart")
                direct += await direct_round(base_url, size["streams"])
                lsp.events.clear()
                cpu -= cpu_seconds(pid)
                await asyncio.gather(*(lsp.request("qwen/chat", {"prompt": "go", "sessionId": sid}) for sid in chats))
                cpu += cpu_seconds(pid)
                await asyncio.sleep(0.05)  # the last notifications may trail the answers by a loop turn
                latencies, per_event = check_turns(lsp.events, size["chunks"], len(chats))
                served += latencies
                coalescing.append(per_event)
            rss_after, peak = status_kb(pid, "VmRSS"), status_kb(pid, "VmHWM")
    return {"direct": direct, "served": served, "rss_before": rss_before, "rss_after": rss_after, "peak": peak,
            "coalescing": sum(coalescing) / len(coalescing), "cpu_us_per_chunk": cpu * 1e6 / len(served) if served else 0.0}


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    size = QUICK if "--quick" in args else {"streams": STREAMS, "chunks": CHUNKS, "rounds": ROUNDS}
    got = asyncio.run(measure(size))
    common = {"streams": size["streams"], "chunks": size["chunks"] * size["streams"] * size["rounds"], "spacing_ms": SPACING * 1e3}
    for pct in (50, 99):
        server_ms, direct_ms = percentile(got["served"], pct), percentile(got["direct"], pct)
        emit(f"load_streams_overhead_p{pct}_ms", server_ms - direct_ms, "ms", direct_ms, server_ms=round(server_ms, 4),
             **({"target_ms": 10} if pct == 99 else {}), server_cpu_us_per_chunk=round(got["cpu_us_per_chunk"], 1), **common)
    emit("load_streams_rss_mb", got["rss_after"] / 1024, "MB", got["rss_before"] / 1024, peak_mb=round(got["peak"] / 1024, 1),
         baseline_is="server VmRSS before the load", **common)
    emit("load_streams_coalescing", got["coalescing"], "chunks/event", 1.0, **common)


if __name__ == "__main__":
    main()
