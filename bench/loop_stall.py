"""The longest event-loop stall during a cold chat turn with a slow ``git``.

A turn's blocking work (the ``git`` snapshot, the cold context build, the
folder walk of the prelude, session files) must run on worker threads, or
every cancel, chat event and document sync waits behind it. This runs a
real :class:`~qwen_lsp.workspace.Workspace` turn in-process against the scripted
OpenAI server, with a ``git`` on ``PATH`` that sleeps before running the real
one, while a ticker task sleeps 1 ms at a time and records the largest gap
between its wake-ups beyond what it asked for.

* ``loop_stall_cold_turn_ms`` — the largest ticker gap over several cold turns
  (fresh engine each time); baseline: the largest gap of the same ticker on
  an idle loop for as long. Target ≤ 10 ms. One unmeasured turn in another
  folder comes first, so one-time costs of the process (first-use imports of
  the HTTP stack, starting the thread pool) are not counted as the turn's.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.harness import Ticker, emit, log

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from support.scripted_openai import ScriptedOpenAI  # noqa: E402

from qwen_lsp.workspace import Workspace  # noqa: E402
from qwen_lsp.llm.tokens import TokenCounter  # noqa: E402

GIT_SLEEP_S = 0.4



def make_workspace(root: Path) -> Path:
    ws = root / "ws"
    (ws / "src").mkdir(parents=True)
    (root / "warm").mkdir()
    for i in range(200):
        (ws / "src" / f"m{i}.py").write_text(f"x = {i}\n")
    (ws / "QWEN.md").write_text("Project rules.\n@./docs/a.md\n")
    (ws / "docs").mkdir()
    (ws / "docs" / "a.md").write_text("Imported.\n")
    subprocess.run(["git", "-C", str(ws), "init", "-q"], check=True)
    return ws


def slow_git(root: Path) -> Path:
    real = shutil.which("git")
    assert real, "git is needed"
    bindir = root / "bin"
    bindir.mkdir()
    script = bindir / "git"
    script.write_text(f'#!/bin/sh\nsleep {GIT_SLEEP_S}\nexec "{real}" "$@"\n')
    script.chmod(0o755)
    return bindir


async def stall_during_turns(ws: Path, base_url: str, turns: int) -> float:
    counter = TokenCounter()
    await asyncio.to_thread(counter.load)
    env = {"OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": "k", "OPENAI_MODEL": "scripted-model"}
    # One unmeasured turn elsewhere: first-use imports (anyio backends), thread-pool start.
    warm = Workspace(ws.parent / "warm", counter=counter, env=env)
    await warm.chat("warm up", emit=lambda _e: None)
    await warm.drain()
    worst = 0.0
    for _ in range(turns):
        engine = Workspace(ws, counter=counter, env=env)
        ticker = Ticker()
        tick = asyncio.ensure_future(ticker.run())
        await asyncio.sleep(0.01)
        await engine.chat("hello", emit=lambda _e: None)
        ticker.stop()
        await tick
        await engine.drain()
        worst = max(worst, ticker.worst)
    return worst


async def idle_stall(seconds: float) -> float:
    ticker = Ticker()
    tick = asyncio.ensure_future(ticker.run())
    await asyncio.sleep(seconds)
    ticker.stop()
    await tick
    return ticker.worst


def main() -> None:
    quick = "--quick" in sys.argv
    turns = 2 if quick else 6
    with tempfile.TemporaryDirectory() as tmp, ScriptedOpenAI() as scripted:
        root = Path(tmp)
        os.environ["HOME"] = str(root / "home")
        os.environ.pop("QWEN_HOME", None)
        ws = make_workspace(root)
        os.environ["PATH"] = f"{slow_git(root)}{os.pathsep}{os.environ['PATH']}"
        log(f"{turns} cold turns with a git that sleeps {GIT_SLEEP_S} s …")
        start = time.perf_counter()
        worst = asyncio.run(stall_during_turns(ws, scripted.base_url, turns))
        elapsed = time.perf_counter() - start
        baseline = asyncio.run(idle_stall(min(elapsed, 5.0)))
        emit("loop_stall_cold_turn_ms", worst * 1000, "ms", baseline * 1000, turns=turns, git_sleep_s=GIT_SLEEP_S, target_ms=10)


if __name__ == "__main__":
    main()
