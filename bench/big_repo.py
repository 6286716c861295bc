"""Benchmark: a big monorepo opened the way the editor opens it, and its first chat.

For each size (total files: 1k, 10k and 100k by default) a monorepo is
generated in a scratch directory: 60 % of the files tracked by git in deep
package folders (``packages/groupG/pkgP/src/lib/core/modM.ts``, 50 a package,
a ``QWEN.md`` in every tenth package), 40 % in a gitignored ``node_modules``
tree, 40 path-scoped skills (``paths:`` globs over the package groups) and a
root ``QWEN.md``; then committed. A ``qwen-lsp serve --stdio`` is started in it
with the user settings left at their defaults (background features on), and
driven as the editor drives it: ``initialize`` (workspace folder, client
capabilities with ``workspace/configuration``), then ``initialized`` and at
once the first ``qwen/chat``, while ``qwen/skills/list`` is sent every 50 ms
(a cheap request: its answer time is how long the event loop made it wait).

Results per size (``<n>`` = ``1k``, ``10k``, ``100k``):

* ``big_repo.<n>.initialize_ms`` — spawn → ``initialize`` answered. Baseline:
  a bare pygls server spawned and initialized the same way in the same run.
  Target ≤ 1,000 ms at 100k.
* ``big_repo.<n>.first_chat_ms`` — the first ``qwen/chat`` sent (right after
  ``initialized``, so the folder is still being set up) → its model request
  at the scripted server. ``cpu_ms`` = the server's CPU time over the same
  stretch. Baseline: a second new chat's first turn in the same server, set
  up by then (the chat the server made ahead after the first answer,
  ``agent/new_chats.py``: its git snapshot and preparation are done). Target
  ≤ 1,000 ms at 100k.
* ``big_repo.<n>.loop_worst_ms`` — the slowest ``qwen/skills/list`` answer
  from ``initialized`` until the first chat's answer arrived, and at least
  ``SET_UP_SECONDS`` (the watches start after a quick chat) (``pings`` = how
  many, ``p99_ms``). Baseline: the same pinger against a bare pygls server
  answering an empty request, for as long, in the same run: what the machine
  and the framework cost alone. Target ≤ 50 ms.
* ``big_repo.<n>.rss_mb`` — the server's VmRSS after the first chat
  (``peak_mb`` = VmHWM). Target ≤ 150 MB.
* ``big_repo.<n>.inotify_watches`` — watches the server holds after the
  first chat (from ``/proc/<pid>/fdinfo``; absent where there is no
  ``/proc``). Target ≤ 200.

And ``big_repo.first_chat_growth``: the first chat at the largest size over
the smallest (target ≤ 2). Every row carries ``load_average`` (``bench/harness.py``).

Run: ``python -m bench.big_repo [--quick] [--sizes 1000,100000]``. The 100k
tree takes ~15 s to generate and commit; ``--quick`` runs one 300-file tree.
Bytecode is cached in a scratch prefix, as for an installed package.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.harness import emit, log, median, percentile

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from support.scripted_openai import Reply, ScriptedOpenAI  # noqa: E402

SIZES = (1_000, 10_000, 100_000)
QUICK_SIZES = (300,)
PING_SECONDS = 0.05
SET_UP_SECONDS = 3.0
"""The pinger runs at least this long after ``initialized`` (the folder's set-up goes on after a quick first chat)."""
FILES_PER_PACKAGE = 50
SKILLS = 40
GROUPS = 20
MARKER = "big-repo-first-chat"
TIMEOUT = 120.0
SERVER = [sys.executable, "-m", "qwen_lsp", "serve", "--stdio"]
BARE_PYGLS = (
    "from pygls.lsp.server import LanguageServer\n"
    "server = LanguageServer('bare', '0')\n"
    "@server.feature('bench/echo')\n"
    "def echo(params): return {}\n"
    "server.start_io()\n"
)
CAPABILITIES = {"workspace": {"configuration": True, "workspaceFolders": True, "didChangeWatchedFiles": {"dynamicRegistration": True}},
                "window": {"workDoneProgress": True}}


# ----------------------------------------------------------------- the tree


def generate(root: Path, files: int) -> None:
    """The monorepo described in the module docstring, committed."""
    tracked = files * 6 // 10
    made = package = 0
    while made < tracked:
        folder = root / "packages" / f"group{package % GROUPS}" / f"pkg{package}"
        core = folder / "src" / "lib" / "core"
        core.mkdir(parents=True)
        for i in range(min(FILES_PER_PACKAGE, tracked - made)):
            (core / f"mod{i}.ts").write_text(f"export const value{i} = {i};\n")
        made += FILES_PER_PACKAGE
        if package % 10 == 0:
            (folder / "QWEN.md").write_text(f"Package {package}: keep exports sorted.\n")
        package += 1
    for i in range(files - tracked):
        dep = root / "node_modules" / f"dep{i // 100}" / "lib"
        dep.mkdir(parents=True, exist_ok=True)
        (dep / f"f{i}.js").write_text("module.exports = 1;\n")
    for s in range(SKILLS):
        skill = root / ".qwen" / "skills" / f"skill-{s}"
        skill.mkdir(parents=True)
        (skill / "SKILL.md").write_text(
            f"---\nname: skill-{s}\ndescription: Conventions of package group {s % GROUPS}.\n"
            f"paths:\n  - \"packages/group{s % GROUPS}/**/*.ts\"\n---\nKeep group {s % GROUPS} tidy.\n"
        )
    (root / ".gitignore").write_text("node_modules/\n")
    (root / "QWEN.md").write_text("A generated monorepo.\n")
    # Files older than the index, as in any checkout used for a while: written in the index's own second
    # they are "racily clean", and a `git status` that may not rewrite the index (ours: optional locks off)
    # reads every one of them again, each time.
    past = time.time() - 3600
    for folder, _dirs, names in os.walk(root):
        for name in names:
            os.utime(os.path.join(folder, name), (past, past))
    env = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.com"}
    for command in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-qm", "generated"]):
        subprocess.run(command, cwd=root, env=env, check=True)


def server_env(scratch: Path, base_url: str) -> dict[str, str]:
    """A scratch HOME with default settings, the scripted model, bytecode cached in a scratch prefix."""
    home = scratch / "home"
    home.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "DASHSCOPE_", "QWEN_")) and k != "PYTHONDONTWRITEBYTECODE"}
    env.update(HOME=str(home), OPENAI_BASE_URL=base_url, OPENAI_API_KEY="bench", OPENAI_MODEL="bench",
               PYTHONPYCACHEPREFIX=str(scratch / "pycache"))
    return env


# ----------------------------------------------------------------- the model


@dataclass
class Arrivals:
    """Stamps the model requests of the measured chats (their prompt carries :data:`MARKER`)."""

    stamps: dict[str, float] = field(default_factory=dict)

    def answer(self, body: dict[str, Any]) -> Reply:
        messages = body.get("messages") or []
        last = json.dumps(messages[-1]) if messages else ""
        for tag in ("first", "second"):
            if f"{MARKER}-{tag}" in last:
                self.stamps.setdefault(tag, time.perf_counter())
        return Reply(chunks=["ok"])

    async def wait(self, tag: str) -> float:
        deadline = time.perf_counter() + TIMEOUT
        while tag not in self.stamps:
            if time.perf_counter() > deadline:
                raise RuntimeError(f"no model request for the {tag} chat")
            await asyncio.sleep(0.0005)
        return self.stamps[tag]


# ----------------------------------------------------------------- the client


class Peer:
    """An LSP client over pipes that answers the server's requests (``workspace/configuration``: nothing set)."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self._next = 0
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._reader = asyncio.ensure_future(self._read())

    @classmethod
    async def spawn(cls, command: list[str], env: dict[str, str], log_file: Any) -> Peer:
        proc = await asyncio.create_subprocess_exec(*command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log_file, env=env)
        return cls(proc)

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))

    async def request(self, method: str, params: Any) -> dict[str, Any]:
        self._next += 1
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[self._next] = future
        self.send({"id": self._next, "method": method, "params": params})
        return await future

    async def _read(self) -> None:
        stream = self.proc.stdout
        assert stream is not None
        while True:
            length = 0
            while (line := await stream.readline()) not in (b"\r\n", b""):
                name, _, value = line.decode("ascii").partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            if not length:
                return
            message = json.loads(await stream.readexactly(length))
            if "method" in message and "id" in message:
                items = (message.get("params") or {}).get("items") or []
                self.send({"id": message["id"], "result": [None] * len(items) if message["method"] == "workspace/configuration" else None})
            elif "id" in message and (future := self._pending.pop(message["id"], None)) is not None:
                future.set_result(message)

    async def close(self) -> None:
        try:
            await asyncio.wait_for(self.request("shutdown", None), 30)
            self.send({"method": "exit"})
            await asyncio.wait_for(self.proc.wait(), 30)
        finally:
            if self.proc.returncode is None:
                self.proc.kill()
                await self.proc.wait()
            self._reader.cancel()


class Pinger:
    """Sends ``method`` every :data:`PING_SECONDS` (not waiting for answers) and keeps each answer time."""

    def __init__(self, peer: Peer, method: str) -> None:
        self.peer, self.method = peer, method
        self.answers: list[float] = []
        self._tasks: list[asyncio.Task[None]] = []
        self._ticker: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._ticker = asyncio.ensure_future(self._tick())

    async def _tick(self) -> None:
        while True:
            self._tasks.append(asyncio.ensure_future(self._one()))
            await asyncio.sleep(PING_SECONDS)

    async def _one(self) -> None:
        start = time.perf_counter()
        await self.peer.request(self.method, {})
        self.answers.append(time.perf_counter() - start)

    async def stop(self) -> None:
        assert self._ticker is not None
        self._ticker.cancel()
        await asyncio.gather(*self._tasks)


# ----------------------------------------------------------------- measuring


def cpu_seconds(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def memory_mb(pid: int) -> tuple[float, float]:
    """VmRSS and VmHWM in MB (NaN without ``/proc``)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return float("nan"), float("nan")
    fields = {line.split(":")[0]: int(line.split()[1]) / 1024 for line in status.splitlines() if line.startswith(("VmRSS", "VmHWM"))}
    return fields["VmRSS"], fields["VmHWM"]


def inotify_watches(pid: int) -> int | None:
    """Watches on the process's inotify descriptors (``inotify wd:`` lines of ``/proc/<pid>/fdinfo``), None where unknown."""
    try:
        return sum(Path(f"/proc/{pid}/fdinfo/{fd}").read_text().count("inotify wd:") for fd in os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None


@dataclass
class Run:
    initialize: float
    first_chat: float
    first_chat_cpu: float
    second_chat: float
    pings: list[float]
    rss: float
    peak: float
    watches: int | None
    duration: float


async def measure(workspace: Path, env: dict[str, str], arrivals: Arrivals, log_file: Any) -> Run:
    arrivals.stamps.clear()
    start = time.perf_counter()
    peer = await Peer.spawn(SERVER, env, log_file)
    try:
        answer = await peer.request("initialize", {
            "processId": os.getpid(), "capabilities": CAPABILITIES, "initializationOptions": {},
            "workspaceFolders": [{"uri": workspace.as_uri(), "name": workspace.name}],
        })
        initialize = time.perf_counter() - start
        if "error" in answer:
            raise RuntimeError(f"initialize failed: {answer['error']}")
        pinger = Pinger(peer, "qwen/skills/list")
        set_up = time.perf_counter()
        peer.send({"method": "initialized", "params": {}})
        pinger.start()
        cpu_before = cpu_seconds(peer.proc.pid)
        sent = time.perf_counter()
        chat = asyncio.ensure_future(peer.request("qwen/chat", {"prompt": f"{MARKER}-first: hello"}))
        first = await asyncio.wait_for(arrivals.wait("first"), TIMEOUT) - sent
        first_cpu = cpu_seconds(peer.proc.pid) - cpu_before
        result = await asyncio.wait_for(chat, TIMEOUT)
        await asyncio.sleep(max(0.0, SET_UP_SECONDS - (time.perf_counter() - set_up)))
        duration = time.perf_counter() - set_up
        await pinger.stop()
        if "error" in result:
            raise RuntimeError(f"qwen/chat failed: {result['error']}")
        rss, peak = memory_mb(peer.proc.pid)
        watches = inotify_watches(peer.proc.pid)
        sent = time.perf_counter()
        await peer.request("qwen/chat", {"prompt": f"{MARKER}-second: hello"})
        second = arrivals.stamps["second"] - sent
        return Run(initialize, first, first_cpu, second, pinger.answers, rss, peak, watches, duration)
    finally:
        await peer.close()


async def bare_baseline(env: dict[str, str], duration: float, log_file: Any) -> tuple[float, list[float]]:
    """A bare pygls server: spawn → initialize answered, then the pinger for ``duration``."""
    start = time.perf_counter()
    peer = await Peer.spawn([sys.executable, "-c", BARE_PYGLS], env, log_file)
    try:
        await peer.request("initialize", {"processId": os.getpid(), "capabilities": CAPABILITIES})
        initialize = time.perf_counter() - start
        peer.send({"method": "initialized", "params": {}})
        pinger = Pinger(peer, "bench/echo")
        pinger.start()
        await asyncio.sleep(duration)
        await pinger.stop()
        return initialize, pinger.answers
    finally:
        await peer.close()


def label(size: int) -> str:
    return f"{size // 1000}k" if size >= 1000 and size % 1000 == 0 else str(size)


async def main_async(sizes: tuple[int, ...]) -> None:
    arrivals = Arrivals()
    first_chats: dict[int, float] = {}
    with ScriptedOpenAI(default=arrivals.answer) as model, tempfile.TemporaryDirectory(prefix="qwen-bench-big-") as tmp:
        scratch = Path(tmp)
        env = server_env(scratch, model.base_url)
        with (scratch / "server.log").open("ab") as log_file:
            warm = scratch / "warm"
            warm.mkdir()
            generate(warm, 60)
            await measure(warm, env, arrivals, log_file)  # not counted: fills the bytecode cache
            for size in sizes:
                workspace = scratch / f"repo-{size}"
                workspace.mkdir()
                log(f"big_repo: generating {size:,} files …")
                generate(workspace, size)
                log(f"big_repo: {label(size)}: opening and chatting …")
                run = await measure(workspace, env, arrivals, log_file)
                bare_init, bare_pings = await bare_baseline(env, run.duration, log_file)
                name = f"big_repo.{label(size)}"
                first_chats[size] = run.first_chat
                emit(f"{name}.initialize_ms", run.initialize * 1e3, "ms", bare_init * 1e3, files=size,
                     target_ms=1000, baseline_is="bare pygls server spawned and initialized, same run")
                emit(f"{name}.first_chat_ms", run.first_chat * 1e3, "ms", run.second_chat * 1e3, files=size,
                     cpu_ms=round(run.first_chat_cpu * 1e3), target_ms=1000,
                     baseline_is="a second new chat in the same server, after set-up (made ahead after the first answer)")
                emit(f"{name}.loop_worst_ms", max(run.pings) * 1e3, "ms", max(bare_pings) * 1e3, files=size,
                     pings=len(run.pings), p99_ms=round(percentile(run.pings, 99) * 1e3, 2),
                     median_ms=round(median(run.pings) * 1e3, 2), window_s=round(run.duration, 3),
                     baseline_p99_ms=round(percentile(bare_pings, 99) * 1e3, 2), target_ms=50,
                     baseline_is="the same pinger against a bare pygls server, as long, same run")
                emit(f"{name}.rss_mb", run.rss, "MB", None, files=size, peak_mb=round(run.peak, 1), target_mb=150)
                if run.watches is not None:
                    emit(f"{name}.inotify_watches", run.watches, "watches", None, files=size, target=200)
    if len(first_chats) > 1:
        small, large = min(first_chats), max(first_chats)
        emit("big_repo.first_chat_growth", first_chats[large] * 1e3, "ms", first_chats[small] * 1e3,
             files=large, baseline_files=small, target_ratio=2)


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    sizes = QUICK_SIZES if "--quick" in args else SIZES
    if "--sizes" in args:
        sizes = tuple(int(s) for s in args[args.index("--sizes") + 1].split(","))
    asyncio.run(main_async(sizes))


if __name__ == "__main__":
    main()
