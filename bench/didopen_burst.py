"""Benchmark: how long a burst of ``textDocument/didOpen`` takes to drain (10,000 once took ~14 s).

A real ``python -m qwen_lsp serve --stdio`` in a scratch workspace with 100
conditional skills and 50 conditional rules (so every didOpen runs skill
activation and rule matching) gets ``BURST`` didOpen notifications for
distinct files in one write, then ``shutdown``; the time from the first byte
of the burst to the ``shutdown`` answer is the drain time (the server
handles messages in order, so every notification was handled by then).

Baseline, same run: a bare pygls ``LanguageServer`` whose didOpen handler
does nothing, fed the same bytes: the framework's own cost. Median of
``RUNS`` fresh servers each.

Result: ``didopen_burst_drain_ms`` (``per_open_us`` beside it); target: a
ratio ≤ 3 against the bare server (the engine's work per file stays a small
multiple of parsing the message).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Any

from bench.harness import emit, log, median
from bench.streaming_overhead import SERVER_COMMAND, scratch, scratch_server_env

BURST = 10_000
RUNS = 3
QUICK = {"burst": 500, "runs": 1}
SKILLS = 100
RULES = 50
BARE_SERVER = """
from lsprotocol import types
from pygls.lsp.server import LanguageServer
server = LanguageServer("bare", "0")
@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls, params):
    pass
server.start_io()
"""


def frame(obj: Any) -> bytes:
    body = json.dumps(obj).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def read_message(out: IO[bytes]) -> dict[str, Any]:
    length = None
    while True:
        line = out.readline()
        if not line:
            raise SystemExit("the server closed its output")
        if line == b"\r\n" and length is not None:
            return json.loads(out.read(length))
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])


def answer(out: IO[bytes], msg_id: int) -> dict[str, Any]:
    while True:
        msg = read_message(out)
        if msg.get("id") == msg_id and "method" not in msg:
            return msg


def conditional_workspace(workspace: Path) -> None:
    """Skills and rules whose globs each match a few of the burst's files, so every didOpen has work to do."""
    for i in range(SKILLS):
        skill = workspace / ".qwen" / "skills" / f"skill-{i}"
        skill.mkdir(parents=True, exist_ok=True)
        (skill / "SKILL.md").write_text(f'---\nname: skill-{i}\ndescription: skill {i}\npaths:\n  - "src/**/f{i}?.py"\n---\nbody\n')
    rules = workspace / ".qwen" / "rules"
    rules.mkdir(parents=True, exist_ok=True)
    for i in range(RULES):
        (rules / f"rule-{i}.md").write_text(f'---\ndescription: rule {i}\npaths: ["src/**/f{i}?.py"]\n---\nRule {i}.\n')


def burst_bytes(workspace: Path, count: int) -> bytes:
    return b"".join(
        frame({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": (workspace / "src" / f"d{i % 100}" / f"f{i}.py").as_uri(), "languageId": "python", "version": 1, "text": f"x = {i}\n"}}})
        for i in range(count)
    )


def drain_ms(command: list[str], workspace: Path, env: dict[str, str], burst: bytes, warm: bool) -> float:
    """Start a server, initialise it, send the burst and ``shutdown``; ms until ``shutdown`` is answered."""
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(frame({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                                "params": {"capabilities": {}, "rootUri": workspace.as_uri()}}))
        proc.stdin.write(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        proc.stdin.flush()
        answer(proc.stdout, 0)
        if warm:  # answered once the vocabulary and the workspace context are loaded
            proc.stdin.write(frame({"jsonrpc": "2.0", "id": 1, "method": "qwen/context", "params": {}}))
            proc.stdin.flush()
            answer(proc.stdout, 1)
        started = time.perf_counter()
        proc.stdin.write(burst + frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))
        proc.stdin.flush()
        answer(proc.stdout, 2)
        elapsed = time.perf_counter() - started
        proc.stdin.write(frame({"jsonrpc": "2.0", "method": "exit"}))
        proc.stdin.flush()
        proc.wait(30)
        return elapsed * 1e3
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    size = QUICK if "--quick" in args else {"burst": BURST, "runs": RUNS}
    with scratch() as root:
        workspace, env = scratch_server_env(root, "http://127.0.0.1:9/v1")  # no model call is made
        conditional_workspace(workspace)
        burst = burst_bytes(workspace, size["burst"])
        ours: list[float] = []
        bare: list[float] = []
        for n in range(size["runs"]):
            log(f"run {n + 1}/{size['runs']}: {size['burst']} didOpen")
            bare.append(drain_ms([sys.executable, "-c", BARE_SERVER], workspace, env, burst, warm=False))
            ours.append(drain_ms(SERVER_COMMAND, workspace, env, burst, warm=True))
    value = median(ours)
    emit("didopen_burst_drain_ms", value, "ms", median(bare), burst=size["burst"], runs=size["runs"], skills=SKILLS, rules=RULES,
         per_open_us=round(value * 1e3 / size["burst"], 1), baseline_is="bare pygls LanguageServer, no-op didOpen", target_ratio=3)


if __name__ == "__main__":
    main()
