"""Benchmark: server cold start to ``initialize`` answered, and the server's memory after one turn.

Every measurement spawns fresh processes, so nothing is cached in this one.
The client side is a few lines of raw JSON-RPC framing over pipes
(:class:`RawLsp`), not pygls, so the client's own imports never land inside
a timed region.

* ``server_startup_initialize_ms`` — spawn ``python -m qwen_lsp serve --stdio``,
  send ``initialize``, stop the clock when the result arrives; median of
  ``RUNS``. Baseline: spawning ``python -c pass`` until it exits.
* ``server_startup_vs_bare_pygls_ms`` — the same time against a bare pygls
  ``LanguageServer`` answering the same ``initialize``: what qwen-lsp adds
  over the framework.
* ``server_rss_after_turn_mb`` — VmRSS of the server process after one
  ``qwen/chat`` turn against the stamping model plus one ``qwen/context``
  (which counts tokens, so it returns only after the background vocabulary
  load finished). Baseline: a process that only imported
  ``pygls.lsp.server``. Target < 120 MB. ``peak_mb`` is VmHWM.
* ``memory.*`` — where the memory goes: VmRSS of separate processes that
  import (a) pygls + lsprotocol, (b) ``qwen_lsp.server.handlers``, (c) that
  plus the Qwen vocabulary loaded; each against a bare interpreter, with
  ``added_mb`` over the previous stage.

Run: ``python -m bench.server_startup [--quick]``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import IO, Any

from bench.harness import emit, log, median
from bench.streaming_overhead import (
    SERVER_COMMAND,
    StampingModel,
    scratch,
    scratch_server_env,
)

RUNS = 7
QUICK_RUNS = 1
BARE_PYGLS = "from pygls.lsp.server import LanguageServer; LanguageServer('bare', '0').start_io()"
PRINT_RSS = "; print(open('/proc/self/status').read())"
MEMORY_STAGES = (
    ("memory.pygls", "import pygls.lsp.server, lsprotocol.types"),
    ("memory.handlers", "import qwen_lsp.server.handlers"),
    # the counter must stay referenced: a dropped TokenCounter frees its vocabulary before the RSS read
    ("memory.tokenizer", ("import qwen_lsp.server.handlers; from qwen_lsp.llm.tokens import TokenCounter; "
                          "counter = TokenCounter(); counter.count('hello')")),
)


def status_mb(status_text: str, field: str) -> float:
    """A ``kB`` field of ``/proc/<pid>/status`` in MB."""
    for line in status_text.splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise ValueError(f"{field} not in /proc status")


class RawLsp:
    """Just enough of an LSP client: Content-Length framing, requests answered in order."""

    def __init__(self, command: list[str], env: dict[str, str], stderr: IO[bytes]) -> None:
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, env=env)
        self._next_id = 0

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        self.proc.stdin.flush()

    def read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        length = 0
        while (line := self.proc.stdout.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode("ascii").partition(":")
            if name.lower() == "content-length":
                length = int(value)
        if not length:
            raise RuntimeError(f"server closed its output (exit code {self.proc.poll()})")
        return json.loads(self.proc.stdout.read(length))

    def request(self, method: str, params: Any) -> Any:
        """Send a request; skip notifications and server requests until its response arrives."""
        self._next_id += 1
        self.send({"id": self._next_id, "method": method, "params": params})
        while True:
            message = self.read()
            if message.get("id") == self._next_id and "method" not in message:
                if "error" in message:
                    raise RuntimeError(f"{method} failed: {message['error']}")
                return message["result"]

    def notify(self, method: str, params: Any) -> None:
        self.send({"method": method, "params": params})

    def initialize(self, workspace: Path) -> Any:
        return self.request("initialize", {
            "processId": os.getpid(), "capabilities": {},
            "workspaceFolders": [{"uri": workspace.as_uri(), "name": workspace.name}],
        })

    def close(self) -> None:
        try:
            self.request("shutdown", None)
            self.notify("exit", None)
            self.proc.wait(timeout=10)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()


class Scratch:
    """A scratch HOME and workspace, the server environment for them, and a file for the server's log."""

    def __init__(self, root: Path, base_url: str) -> None:
        self.workspace, self.env = scratch_server_env(root, base_url)
        self.log = root / "server.log"

    def spawn(self, command: list[str]) -> RawLsp:
        with self.log.open("ab") as stderr:
            return RawLsp(command, self.env, stderr)

    def log_tail(self) -> str:
        return self.log.read_text(errors="replace")[-4000:] if self.log.exists() else ""


def time_initialize(box: Scratch, command: list[str]) -> float:
    start = time.perf_counter()
    lsp = box.spawn(command)
    try:
        lsp.initialize(box.workspace)
        return time.perf_counter() - start
    finally:
        lsp.close()


def time_bare_python(env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True, env=env)
    return time.perf_counter() - start


def startup(box: Scratch, runs: int, warm_up: bool) -> None:
    ours: list[float] = []
    bare_pygls: list[float] = []
    python: list[float] = []
    if warm_up:  # not counted: fills the OS page cache and __pycache__
        time_initialize(box, SERVER_COMMAND)
    for n in range(runs):  # interleaved, so machine noise hits all three alike
        log(f"startup run {n + 1}/{runs}")
        python.append(time_bare_python(box.env))
        bare_pygls.append(time_initialize(box, [sys.executable, "-c", BARE_PYGLS]))
        ours.append(time_initialize(box, SERVER_COMMAND))
    ms = median(ours) * 1e3
    emit("server_startup_initialize_ms", ms, "ms", median(python) * 1e3, runs=runs, baseline_is="python -c pass")
    emit("server_startup_vs_bare_pygls_ms", ms, "ms", median(bare_pygls) * 1e3, runs=runs,
         baseline_is="bare pygls LanguageServer answering initialize")


def rss_after_turn(box: Scratch) -> tuple[float, float]:
    """(VmRSS, VmHWM) in MB of a server after initialize, one chat turn and one context report."""
    lsp = box.spawn(SERVER_COMMAND)
    try:
        lsp.initialize(box.workspace)
        lsp.notify("initialized", {})
        result = lsp.request("qwen/chat", {"prompt": "hello"})
        if not result.get("text"):
            raise RuntimeError(f"the chat turn answered no text: {result}")
        lsp.request("qwen/context", {"sessionId": result["sessionId"]})
        status = Path(f"/proc/{lsp.proc.pid}/status").read_text()
        return status_mb(status, "VmRSS"), status_mb(status, "VmHWM")
    finally:
        lsp.close()


def rss_of(code: str, env: dict[str, str]) -> float:
    """VmRSS in MB of a fresh interpreter that ran ``code``."""
    out = subprocess.run([sys.executable, "-c", code + PRINT_RSS], check=True, capture_output=True, text=True, env=env)
    return status_mb(out.stdout, "VmRSS")


def memory(box: Scratch) -> None:
    codes = ["pass", "import pygls.lsp.server", *(code for _, code in MEMORY_STAGES)]
    with ThreadPoolExecutor(len(codes)) as pool:  # RSS does not care about CPU contention
        sizes = pool.map(rss_of, codes, [box.env] * len(codes))
        rss, peak = rss_after_turn(box)
        python, pygls_only, *stages = sizes
    emit("server_rss_after_turn_mb", rss, "MB", pygls_only, peak_mb=round(peak, 1), target_mb=120,
         baseline_is="python -c 'import pygls.lsp.server'")
    previous = python
    for (name, code), mb in zip(MEMORY_STAGES, stages):
        emit(name, mb, "MB", python, added_mb=round(mb - previous, 1), imports=code, baseline_is="python -c pass")
        previous = mb


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    quick = "--quick" in args
    with StampingModel(chunks=20, spacing=0.0) as model, scratch() as root:
        box = Scratch(root, model.base_url)
        try:
            startup(box, QUICK_RUNS if quick else RUNS, warm_up=not quick)
            memory(box)
        except Exception:
            log(f"server stderr (tail):\n{box.log_tail()}")
            raise


if __name__ == "__main__":
    main()
