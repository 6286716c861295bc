"""A bounded soak: 240 scripted turns of one chat with auto-compaction firing every thirty-odd turns.

``bench/soak.py`` runs 2,000 turns through the real server and reports RSS;
this runs the engine in-process so the structures themselves can be
checked: the history stays bounded by compaction, no asyncio task, file
descriptor or background job is left behind, and the Python heap
(tracemalloc) is flat once the engine's bounded caches are warm. The heap
is sampled at the same point of every compaction cycle (the turn that
compacted), so the figures compare like with like. Nothing is timed.
"""

from __future__ import annotations

import asyncio
import gc
import os
import tracemalloc
from pathlib import Path

from support.scripted_openai import ScriptedOpenAI
from support.soak import SOAK_SETTINGS, prompt, soak_reply

from qwen_lsp.workspace import Workspace
from qwen_lsp.llm.tokens import TokenCounter
from qwen_lsp.sessions.recording import wait_for_syncs

TURNS = 240
WARM = 130
"""By then the token counter's long-text memo (128 entries) is full; its per-Content memo fills ~300 B a turn until 4,096."""
HEAP_GROWTH_LIMIT = 128 * 1024
"""Over the last 100-odd turns. One leaked answer per turn would be ~300 KB; measured here: ~50 KB (the per-Content memo)."""


KEEPALIVE_SOCKETS = 2 * 20
"""httpx keeps up to 20 idle connections, and here both ends of each are this process's (the scripted model runs in
it): how many sockets may stay open without a leak. When a background request overlaps a turn a second connection
opens, which a busy machine makes likelier; a leak of one per turn would pass this within the warm turns."""


def open_fds() -> tuple[int, int]:
    """Open descriptors of this process: (files and pipes, sockets)."""
    sockets = files = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # the listing's own descriptor, closed by now
            continue
        if target.startswith("socket:"):
            sockets += 1
        else:
            files += 1
    return files, sockets


async def test_a_long_session_with_compaction_stays_flat(home: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    with ScriptedOpenAI(default=soak_reply) as model:
        env = {"OPENAI_BASE_URL": model.base_url, "OPENAI_API_KEY": "k", "OPENAI_MODEL": "scripted-model"}
        engine = Workspace(ws, counter=TokenCounter(), env=env, client_settings=SOAK_SETTINGS)
        tasks_before = len(asyncio.all_tasks())
        session_id = None
        lengths: list[int] = []  # the history's length after each turn
        samples: list[tuple[int, int, int, tuple[int, int]]] = []  # (turn, heap bytes, tasks, (files, sockets)) at each compaction
        tracemalloc.start()
        try:
            for turn in range(TURNS):
                result = await engine.chat(prompt(turn), session_id=session_id, emit=lambda _event: None)
                session_id = result.session_id
                assert result.text.startswith(f"answer {turn} part 0")
                session = engine.sessions.get(session_id)
                assert session is not None
                if lengths and len(session.history) < lengths[-1]:  # this turn compacted
                    model.requests.clear()  # the scripted model's own record of requests is not the engine's memory
                    gc.collect()
                    await asyncio.to_thread(wait_for_syncs, 30)  # a record's descriptor stays open until its fsync
                    samples.append((turn, tracemalloc.get_traced_memory()[0], len(asyncio.all_tasks()), open_fds()))
                lengths.append(len(session.history))
        finally:
            tracemalloc.stop()
            await engine.drain()
        checkpoints = session.recorder.path.read_text().count('"chat_compression"')

    assert len(samples) >= 6 and checkpoints == len(samples), (samples, checkpoints)
    assert max(t for t, *_ in samples) > WARM + 60
    half = TURNS // 2
    assert max(lengths[half:]) <= max(lengths[:half]), "the history outgrew what compaction kept it to"
    warm = [s for s in samples if s[0] >= WARM]
    grown = warm[-1][1] - warm[0][1]
    assert grown < HEAP_GROWTH_LIMIT, f"heap grew {grown} bytes from turn {warm[0][0]} to {warm[-1][0]}: {samples}"
    assert {tasks for _, _, tasks, _ in samples} == {tasks_before}, samples
    assert warm[-1][3][0] <= warm[0][3][0], f"file descriptors leaked: {samples}"
    assert warm[-1][3][1] <= max(warm[0][3][1], KEEPALIVE_SOCKETS), f"sockets leaked: {samples}"
    assert not engine._background and len(asyncio.all_tasks()) == tasks_before
