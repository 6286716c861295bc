"""How long setting up a workspace with 1,500 skills holds the event loop.

A folder with thousands of skills (a large monorepo) costs about a second
to read. If that ran on the event loop, a chat streaming in another folder
would freeze meanwhile. This builds the workspace pieces the server builds,
in-process, while a ticker task sleeps 1 ms at a time and records the
largest gap between its wake-ups beyond what it asked for:

* ``setup_loop_hold.open_ms`` — ``Workspace.open`` of a folder with 1,500
  skills (what ``initialize`` and a folder being added do);
* ``setup_loop_hold.reenable_skills_ms`` — a settings push that turns
  ``skills.enabled`` back on in that folder (all 1,500 skills read again);
* ``setup_loop_hold.start_watching_ms`` — ``start_watching`` (the watches
  on every skill directory registered, one more load).

Each is the worst of several runs; the baseline is the same ticker on an
idle loop, for as long as each operation took, right after it (so both see
the same machine). Target ≤ 10 ms. The process is first prepared as the
server prepares itself once built (``prepare_server_process``: start-up heap
frozen, 1 ms GIL switch interval).

On a shared, loaded machine the ticker also sees the loop thread waiting for
a CPU, or for the GIL held by a worker thread the kernel preempted (tens of
milliseconds, idle baseline included). For figures of a quiet machine, run it
with real-time priority, which keeps other processes from preempting it:
``chrt -r 1 python -m bench.setup_loop_hold`` (each line says ``scheduler``
and ``load``). Each result also has a ``_cpu_ms`` twin: the longest single
event-loop callback in thread CPU time, which counts only work done *on* the
loop (baseline: the longest callback of the idle ticker).
"""

from __future__ import annotations

import asyncio
import gc
import os
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from bench.harness import Ticker, emit, log

from qwen_lsp.background import prepare_server_process
from qwen_lsp.llm.tokens import TokenCounter
from qwen_lsp.workspace import Workspace

SKILLS = 1500


class CallbackCPU:
    """The longest event-loop callback in thread CPU time, while active (wraps ``asyncio.Handle._run``)."""

    def __init__(self) -> None:
        self.worst = 0.0
        self._original = asyncio.events.Handle._run

    def __enter__(self) -> CallbackCPU:
        original, probe = self._original, self

        def timed(handle: asyncio.events.Handle) -> None:
            start = time.thread_time()
            try:
                original(handle)
            finally:
                probe.worst = max(probe.worst, time.thread_time() - start)

        asyncio.events.Handle._run = timed  # type: ignore[method-assign]
        return self

    def __exit__(self, *_exc: object) -> None:
        asyncio.events.Handle._run = self._original  # type: ignore[method-assign]



def write_skills(root: Path, count: int) -> None:
    for i in range(count):
        d = root / ".qwen" / "skills" / f"skill-{i}"
        d.mkdir(parents=True)
        (d / "SKILL.md").write_text(f"---\nname: skill-{i}\ndescription: Skill number {i}, for benchmarks\npaths:\n  - 'src/m{i}/**'\n---\n\nDo thing {i}.\n")


async def held(work: Callable[[], Awaitable[object]]) -> tuple[float, float, float]:
    """The loop's longest hold while ``work`` runs (wall, and CPU of one callback), and how long it ran (seconds)."""
    ticker = Ticker()
    tick = asyncio.ensure_future(ticker.run())
    await asyncio.sleep(0.01)
    start = time.perf_counter()
    with CallbackCPU() as cpu:
        await work()
    elapsed = time.perf_counter() - start
    ticker.stop()
    await tick
    return ticker.worst, cpu.worst, elapsed


async def keep(worst: dict[str, float], name: str, hold: float, cpu: float, took: float) -> None:
    """Record one operation's hold, then the idle loop's for as long (the baseline)."""
    worst[name] = max(worst[name], hold)
    worst[f"{name}_cpu"] = max(worst[f"{name}_cpu"], cpu)
    idle, idle_cpu, _ = await held(lambda: asyncio.sleep(max(took, 0.2)))
    worst["idle"] = max(worst["idle"], idle)
    worst["idle_cpu"] = max(worst["idle_cpu"], idle_cpu)


async def measure(root: Path, runs: int, count: int) -> dict[str, float]:
    counter = TokenCounter()
    loop = asyncio.get_running_loop()
    names = ("open", "reenable_skills", "start_watching", "idle")
    worst = dict.fromkeys((*names, *(f"{n}_cpu" for n in names)), 0.0)
    # Unmeasured: first-use imports and the worker threads' start.
    await (await Workspace.open(root / "warm", counter=counter, env={})).drain()
    for _ in range(runs):
        made: list[Workspace] = []

        async def open_() -> None:
            made.append(await Workspace.open(root / "ws", counter=counter, env={}, client_settings={"skills": {"enabled": True}}))

        await keep(worst, "open", *await held(open_))
        ws = made[0]
        assert len(ws.skills.skills()) >= count, "the skills were not loaded"
        await ws.update_client_settings({"skills": {"enabled": False}})
        await keep(worst, "reenable_skills", *await held(lambda: ws.update_client_settings({"skills": {"enabled": True}})))
        assert len(ws.skills.skills()) >= count
        await keep(worst, "start_watching", *await held(lambda: ws.start_watching(loop)))
        await ws.drain()
        # Unmeasured: this round's workspace is cyclic garbage now; left for the next round's
        # operations to collect, it doubles the heap they scan, which a server, opening each
        # folder once, does not have.
        del made, ws
        gc.collect()
    return worst


def main() -> None:
    quick = "--quick" in sys.argv
    runs = 1 if quick else 3
    count = 50 if quick else SKILLS
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        os.environ["HOME"] = str(root / "home")
        os.environ.pop("QWEN_HOME", None)
        (root / "warm").mkdir()
        (root / "ws" / ".git").mkdir(parents=True)
        write_skills(root / "ws", count)
        log(f"{runs} runs over a folder with {count} skills …")
        prepare_server_process()
        worst = asyncio.run(measure(root, runs, count))
        baseline, baseline_cpu = worst["idle"], worst["idle_cpu"]
        load = os.getloadavg()[0]
        scheduler = {os.SCHED_OTHER: "other", os.SCHED_FIFO: "fifo", os.SCHED_RR: "rr"}.get(os.sched_getscheduler(0), "other")
        for name in ("open", "reenable_skills", "start_watching"):
            emit(f"setup_loop_hold.{name}_ms", worst[name] * 1000, "ms", baseline * 1000, skills=count, runs=runs, target_ms=10, load=load, scheduler=scheduler)
            emit(f"setup_loop_hold.{name}_cpu_ms", worst[f"{name}_cpu"] * 1000, "ms", baseline_cpu * 1000, skills=count, runs=runs, target_ms=10, load=load, scheduler=scheduler)


if __name__ == "__main__":
    main()
