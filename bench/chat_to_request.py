"""Benchmark: from asking for a chat to the model request leaving, one-shot and warm.

The model is ``tests/support/scripted_openai.py`` in a thread of this
process; its scripted answer stamps ``time.perf_counter()`` when a chat
request has arrived (headers and body read), so the clock is the one the
client side reads.

* ``chat_to_request.oneshot_ms`` — spawn ``python -m qwen_lsp chat hello``
  in a scratch workspace → its first model request; median of ``RUNS``.
  Baseline: the real Qwen Code CLI (``qwen -p hello``, the reference users
  run) spawned the same way in the same run, interleaved (so machine noise
  hits both alike); ``ratio`` = ours / the CLI (target ≤ 0.2, i.e. ≥ 5×
  faster; and ≤ 600 ms on an idle machine). ``cpu_ms`` / ``cli_cpu_ms``
  beside it are each process's CPU time when its request arrived (read
  from ``/proc``): on a busy machine they move far less than wall time.
  When ``qwen`` is not on PATH
  the row is skipped with a note on stderr. ``python_ms`` beside it is
  ``python -c pass`` (the interpreter's own start).
  Bytecode is cached (into a scratch directory, filled by an uncounted
  first run), as it is for an installed package.
* ``chat_to_request.warm_ms`` / ``.warm_20k_ms`` / ``.warm_80k_ms`` — a
  running ``qwen-lsp serve --stdio`` that already answered turns:
  ``qwen/chat`` sent → that turn's first model request, at a fresh chat (its
  first turn), and in one chat whose history holds ~20k and ~80k tokens
  (built by turns that each carry ~2k tokens of prompt and a ~2k-token
  ``read_file`` result, as a coding chat does); median of ``WARM_TURNS``
  turns each. Baseline, measured alongside at each size: a bare pygls
  server's round trip of one request, plus an ``httpx`` POST of the very
  bytes of our last request to the same scripted server (POST → arrival):
  what any server that must receive a request and send that body pays.
  ``net_of_post_ms`` = the median minus the POST alone; the targets are on
  it: ≤ 5 ms fresh, ≤ 10 ms at 80k. As users run it: the user settings are
  the defaults (memory extraction, follow-up suggestions and skill review
  on, each answered ``ok`` by the scripted model) and the measured turns are
  ``SPACING`` (1 s) apart, so the background work of one turn runs before
  the next (``--quiet`` turns that work off, as the test suite does). Each
  measured turn's prompt carries a fresh marker and only requests holding it
  are timed, so a background request cannot pass for the turn's.
  ``server_cpu_ms_per_turn`` beside it is the server process's CPU time per
  turn, background work included (``/proc``, averaged over the turns).

The clients are raw JSON-RPC framing (``RawLsp`` from
``bench/server_startup.py``), so no client-side library lands inside a
timed region.

Run: ``python -m bench.chat_to_request [--quick] [--warm-only | --oneshot] [--quiet]`` (``--warm-only`` skips the
one-shot rows, ``--oneshot`` the warm ones).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from bench.harness import emit, log, median
from bench.server_startup import RawLsp
from bench.streaming_overhead import SERVER_COMMAND, scratch, scratch_server_env

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from support.quiet_home import write_quiet_settings  # noqa: E402
from support.scripted_openai import Reply, ScriptedOpenAI, ToolCallSpec  # noqa: E402

RUNS = 7
WARM_TURNS = 15
SIZES = (("warm", 0), ("warm_20k", 20_000), ("warm_80k", 80_000))
QUICK_RUNS = 1
QUICK_WARM_TURNS = 2
QUICK_SIZES = (("warm", 0), ("warm_20k", 2_000))
SPACING = 1.0
"""Seconds between measured warm turns: a person reads the answer (background work after a turn runs meanwhile)."""
QUICK_SPACING = 0.05
WINDOW = 262_144
"""The bench chats' context window: an 80k-token history stays under the auto-compaction threshold."""
CHUNK_TOKENS = 2_000
ONESHOT_TIMEOUT = 120
BARE_PYGLS_ECHO = (
    "from pygls.lsp.server import LanguageServer\n"
    "server = LanguageServer('bare', '0')\n"
    "@server.feature('bench/echo')\n"
    "def echo(params): return {}\n"
    "server.start_io()\n"
)
SOURCE = Path(__file__).resolve().parent.parent / "qwen_lsp"


@dataclass
class Arrivals:
    """The scripted model's answers: a stamp per chat request, and tool calls while filling a history."""

    stamps: list[float] = field(default_factory=list)
    body: dict[str, Any] | None = None
    """The first stamped request's body since ``reset``: the turn's own, which arrives before any background
    request about that turn (a follow-up suggestion's request quotes the prompt in its last message too)."""
    tool_turns: bool = False
    next_file: str = ""
    pid: int | None = None
    """A one-shot process whose CPU time is read when its first request arrives."""
    marker: str | None = None
    """Only requests whose last message holds it are stamped (with background features on, their own
    model requests arrive too); None stamps every request."""
    cpu: list[float] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def answer(self, body: dict[str, Any]) -> Reply:
        last = (body.get("messages") or [{}])[-1]
        if self.marker is None or self.marker in json.dumps(last.get("content")):
            with self._lock:
                self.stamps.append(time.perf_counter())
                if len(self.stamps) == 1:
                    self.body = body
                if self.pid is not None and len(self.stamps) == 1:
                    self.cpu.append(cpu_seconds(self.pid))
        if self.tool_turns and last.get("role") == "user":
            return Reply(chunks=["Reading it."], tool_calls=[ToolCallSpec("read_file", {"file_path": self.next_file})])
        return Reply(chunks=["ok"])

    def reset(self) -> None:
        with self._lock:
            self.stamps.clear()
            self.body = None

    def first(self, timeout: float = ONESHOT_TIMEOUT, proc: subprocess.Popen[bytes] | None = None) -> float:
        """The first stamp since ``reset``; waits for it (and fails early when ``proc`` exits without a request)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                if self.stamps:
                    return self.stamps[0]
            if proc is not None and proc.poll() is not None:
                err = proc.stderr.read().decode(errors="replace")[-2000:] if proc.stderr else ""
                raise RuntimeError(f"{proc.args!r} exited {proc.returncode} before a model request: {err}")
            time.sleep(0.0005)
        raise RuntimeError("no model request arrived")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time so far of a live process and its live descendants (the Qwen Code CLI relaunches
    itself in a child), from ``/proc`` in clock ticks: robust to a busy machine, unlike wall time."""
    total = 0.0
    pending = [pid]
    while pending:
        current = pending.pop()
        try:
            fields = Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()
            for task in Path(f"/proc/{current}/task").iterdir():
                pending.extend(int(c) for c in (task / "children").read_text().split())
        except OSError:  # exited meanwhile
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def filler_texts() -> list[str]:
    """Real source text, ~``CHUNK_TOKENS`` tokens (~4 bytes each) per piece, cycling through the package."""
    pieces: list[str] = []
    for path in sorted(SOURCE.rglob("*.py")):
        text = path.read_text()
        for start in range(0, len(text) - CHUNK_TOKENS * 4, CHUNK_TOKENS * 4):
            pieces.append(text[start : start + CHUNK_TOKENS * 4])
    return pieces


# ----------------------------------------------------------------- one-shot


def oneshot(model: ScriptedOpenAI, arrivals: Arrivals, command: list[str], cwd: Path, env: dict[str, str]) -> float:
    """Seconds from spawning ``command`` to its first model request; the process is then waited for."""
    arrivals.reset()
    start = time.perf_counter()
    proc = subprocess.Popen(command, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    arrivals.pid = proc.pid
    try:
        first = arrivals.first(proc=proc)
        _, err = proc.communicate(timeout=ONESHOT_TIMEOUT)
        if proc.returncode != 0:
            raise RuntimeError(f"{command[0]} exited {proc.returncode}: {err.decode(errors='replace')[-2000:]}")
        return first - start
    finally:
        arrivals.pid = None
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def qwen_cli_env(root: Path, base_url: str) -> dict[str, str]:
    """A scratch HOME for the reference CLI, pointed at the scripted model."""
    home = root / "qwen-home"
    home.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "DASHSCOPE_", "QWEN_"))}
    env.update(HOME=str(home), OPENAI_BASE_URL=base_url, OPENAI_API_KEY="bench", OPENAI_MODEL="bench")
    return env


def with_bytecode(env: dict[str, str], root: Path) -> dict[str, str]:
    """``env`` with bytecode caching on, into a scratch prefix: an installed qwen-lsp starts from its ``.pyc`` files.

    Without it (``PYTHONDONTWRITEBYTECODE`` set, as on some CI machines) every
    start compiles the whole package again, which is not what users run.
    """
    env = {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(root / "pycache")
    return env


def run_oneshot(root: Path, model: ScriptedOpenAI, arrivals: Arrivals, runs: int, warm_up: bool) -> None:
    workspace, env = scratch_server_env(root / "oneshot", model.base_url)
    env = with_bytecode(env, root)
    ours_cmd = [sys.executable, "-m", "qwen_lsp", "chat", "hello"]
    qwen = shutil.which("qwen")
    qwen_cmd = [qwen, "-p", "hello", "--auth-type", "openai"] if qwen else None
    cli_env = qwen_cli_env(root, model.base_url)
    if qwen_cmd is None:
        log("chat_to_request.oneshot_ms: skipped, the Qwen Code CLI (`qwen`) is not on PATH "
            "(npm install -g @qwen-code/qwen-code@0.24.4)")
        return
    ours: list[float] = []
    theirs: list[float] = []
    python: list[float] = []
    # Not counted: fills the bytecode cache, even in --quick (a one-shot that compiles the whole package
    # measures the compiler, ~3 s, not what an installed qwen-lsp does), and the page cache.
    oneshot(model, arrivals, ours_cmd, workspace, env)
    if warm_up:
        oneshot(model, arrivals, qwen_cmd, workspace, cli_env)
    ours_cpu: list[float] = []
    theirs_cpu: list[float] = []
    for n in range(runs):
        log(f"one-shot run {n + 1}/{runs}")
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True, env=env)
        python.append(time.perf_counter() - start)
        arrivals.cpu.clear()
        ours.append(oneshot(model, arrivals, ours_cmd, workspace, env))
        theirs.append(oneshot(model, arrivals, qwen_cmd, workspace, cli_env))
        if len(arrivals.cpu) == 2:
            ours_cpu.append(arrivals.cpu[0])
            theirs_cpu.append(arrivals.cpu[1])
    emit("chat_to_request.oneshot_ms", median(ours) * 1e3, "ms", median(theirs) * 1e3, runs=runs,
         samples_ms=[round(s * 1e3, 1) for s in ours], cli_samples_ms=[round(s * 1e3, 1) for s in theirs],
         python_ms=round(median(python) * 1e3, 1), target_ratio=0.2, target_ms=600,
         cpu_ms=round(median(ours_cpu) * 1e3) if ours_cpu else None,
         cli_cpu_ms=round(median(theirs_cpu) * 1e3) if theirs_cpu else None,
         baseline_is="Qwen Code CLI `qwen -p`, same run")


# ----------------------------------------------------------------- warm server


def bare_pygls_round_trip(env: dict[str, str], turns: int, stderr: Any) -> list[float]:
    lsp = RawLsp([sys.executable, "-c", BARE_PYGLS_ECHO], env, stderr)
    try:
        lsp.initialize(Path.cwd())
        lsp.request("bench/echo", {})
        samples = []
        for _ in range(turns):
            start = time.perf_counter()
            lsp.request("bench/echo", {})
            samples.append(time.perf_counter() - start)
        return samples
    finally:
        lsp.close()


def httpx_posts(model: ScriptedOpenAI, arrivals: Arrivals, raw: bytes, turns: int) -> list[float]:
    """POST ``raw`` (our server's last request body) on a kept-alive connection: send → arrival."""
    samples = []
    with httpx.Client(base_url=model.base_url, headers={"content-type": "application/json"}) as client:
        client.post("/chat/completions", content=raw).read()
        for _ in range(turns):
            arrivals.reset()
            start = time.perf_counter()
            client.post("/chat/completions", content=raw).read()
            samples.append(arrivals.first() - start)
    return samples


def timed_chat(lsp: RawLsp, arrivals: Arrivals, session_id: str | None) -> tuple[float, str]:
    """Seconds from ``qwen/chat`` sent to its model request, and the chat's id."""
    arrivals.reset()
    marker = arrivals.marker = f"bench-turn-{uuid.uuid4().hex}"
    params = {"prompt": f"hello {marker}", **({"sessionId": session_id} if session_id else {})}
    start = time.perf_counter()
    try:
        result = lsp.request("qwen/chat", params)
        return arrivals.first() - start, result["sessionId"]
    finally:
        arrivals.marker = None


def turn_request(model: ScriptedOpenAI, arrivals: Arrivals) -> bytes:
    """The raw body of the last timed turn's own model request (see ``Arrivals.body``)."""
    arrivals.first()
    return next(r.raw for r in model.chat_requests() if r.body is arrivals.body)


def grow(lsp: RawLsp, model: ScriptedOpenAI, arrivals: Arrivals, session_id: str, workspace: Path,
         target: int, texts: list[str], used: int) -> int:
    """Turns of ~2k tokens of prompt plus a ~2k-token read_file result until the last request holds ``target`` tokens."""
    arrivals.tool_turns = True
    prompt_tokens = 0
    try:
        while prompt_tokens < target:
            path = workspace / f"file{used}.py"
            path.write_text(texts[(used + 1) % len(texts)])
            arrivals.next_file = str(path)
            arrivals.reset()
            marker = arrivals.marker = f"bench-grow-{uuid.uuid4().hex}"
            lsp.request("qwen/chat", {"prompt": f"Look at this ({marker}):\n{texts[used % len(texts)]}", "sessionId": session_id})
            # The chat's own request of this turn (its prompt carries the marker), never a background request's size.
            prompt_tokens = len(turn_request(model, arrivals)) // 4
            used += 2
        return used
    finally:
        arrivals.tool_turns = False
        arrivals.marker = None


def run_warm(root: Path, model: ScriptedOpenAI, arrivals: Arrivals, turns: int, sizes: tuple[tuple[str, int], ...],
             *, spacing: float, defaults: bool) -> None:
    workspace, env = scratch_server_env(root / "warm", model.base_url)
    settings = {"model": {"contextWindow": WINDOW}, "tools": {"approvalMode": "yolo"}}
    if defaults:  # background features on (memory extraction, follow-ups, skill review), as a user has them
        (Path(env["HOME"]) / ".qwen" / "settings.json").write_text(json.dumps(settings) + "\n")
    else:
        write_quiet_settings(Path(env["HOME"]), settings)
    texts = filler_texts()
    with (root / "warm-server.log").open("ab") as stderr:
        lsp = RawLsp(SERVER_COMMAND, env, stderr)
        try:
            lsp.initialize(workspace)
            lsp.notify("initialized", {})
            lsp.request("qwen/context", {})  # returns once the background vocabulary load is done
            for _ in range(3):  # warm-up: first turns of chats that are not measured
                timed_chat(lsp, arrivals, None)
            session_id: str | None = None
            used = 0
            for name, tokens in sizes:
                fresh = tokens == 0
                if not fresh:
                    assert session_id is not None
                    used = grow(lsp, model, arrivals, session_id, workspace, tokens, texts, used)
                samples = []
                cpu_before = cpu_seconds(lsp.proc.pid)
                for _ in range(turns):
                    time.sleep(spacing)  # a person reads the answer: background work after a turn runs, caches cool
                    took, sid = timed_chat(lsp, arrivals, None if fresh else session_id)
                    samples.append(took)
                    if session_id is None:
                        session_id = sid
                cpu_per_turn = (cpu_seconds(lsp.proc.pid) - cpu_before) / turns  # with defaults on, background work too
                raw = turn_request(model, arrivals)  # the measured turn's body: the baseline POSTs the same bytes
                posts = httpx_posts(model, arrivals, raw, turns)
                trips = bare_pygls_round_trip(env, turns, stderr)
                base = median(trips) + median(posts)
                emit(f"chat_to_request.{name}_ms", median(samples) * 1e3, "ms", base * 1e3, turns=turns,
                     history_tokens_approx=len(raw) // 4, request_bytes=len(raw),
                     pygls_round_trip_ms=round(median(trips) * 1e3, 3), httpx_post_ms=round(median(posts) * 1e3, 3),
                     net_of_post_ms=round((median(samples) - median(posts)) * 1e3, 3), spacing_s=spacing, defaults_on=defaults,
                     p90_ms=round(sorted(samples)[int(len(samples) * 0.9)] * 1e3, 3),
                     server_cpu_ms_per_turn=round(cpu_per_turn * 1e3, 1),
                     target_ms=5 if fresh else 10 if tokens >= 80_000 else None, target_is="net_of_post_ms",
                     baseline_is="bare pygls round trip + httpx POST of the same body")
        finally:
            lsp.close()


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    quick = "--quick" in args
    oneshot_only = "--oneshot" in args
    arrivals = Arrivals()
    with ScriptedOpenAI(default=arrivals.answer) as model, scratch() as root:
        if "--warm-only" not in args:
            run_oneshot(root, model, arrivals, QUICK_RUNS if quick else RUNS, warm_up=not quick)
        if not oneshot_only:
            run_warm(root, model, arrivals, QUICK_WARM_TURNS if quick else WARM_TURNS, QUICK_SIZES if quick else SIZES,
                     spacing=QUICK_SPACING if quick else SPACING, defaults="--quiet" not in args)


if __name__ == "__main__":
    main()
