"""Benchmark: the engine's prompt count after one message is appended to a 500-message history (target ≤ 2 ms).

This is what a turn pays before every model request when the endpoint
reports no usage, and what ``qwen/context`` pays: the system prompt, its
sections, the tools block and the history, counted with Qwen's vocabulary.
``token_count_incremental`` appends one message and counts again (the
history total is kept per history list, the long texts are memoized);
the baseline is the same count by a fresh engine, from nothing, as every
count cost before the tallies existed.

Run: ``python -m bench.token_count_incremental [--quick]``.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.harness import emit, log, median
from qwen_lsp.workspace import Workspace
from qwen_lsp.llm.content import Content
from qwen_lsp.llm.tokens import TokenCounter


def message(n: int) -> Content:
    if n % 2:
        return {"role": "model", "parts": [{"text": f"Answer {n}: the handler in module {n} returns early when the cache is warm. " * 4}]}
    return {"role": "user", "parts": [{"text": f"Question {n}: why does module {n} allocate on every call? Please check the code path." * 2}]}


async def run(size: int, repeats: int) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "QWEN.md").write_text("# Rules\n" + "- keep functions small and tested\n" * 40)
        counter = TokenCounter()
        engine = Workspace(root, counter=counter, client_settings={"model": {"name": "bench"}})
        session = await engine.open_session(None)
        await engine.engine.session_ready(session)
        session.history.extend(message(n) for n in range(size))

        def count(e: Workspace) -> int:
            return e.engine.accounting.count(session.context, session.skills_tracker, session.history).total_tokens

        count(engine)
        samples = []
        for n in range(repeats):
            session.history.append(message(size + n))
            start = time.perf_counter()
            count(engine)
            samples.append(time.perf_counter() - start)
        cold = []
        for _ in range(max(1, repeats // 5)):
            fresh = Workspace(root, counter=TokenCounter(), client_settings={"model": {"name": "bench"}})
            fresh.counter.count("warm the vocabulary")
            start = time.perf_counter()
            count(fresh)
            cold.append(time.perf_counter() - start)
            await fresh.drain()
        await engine.drain()
        return median(samples) * 1000, median(cold) * 1000


def main() -> None:
    quick = "--quick" in sys.argv
    size, repeats = (50, 5) if quick else (500, 50)
    log(f"token_count_incremental: {size}-message history")
    value, base = asyncio.run(run(size, repeats))
    extra: dict[str, Any] = {"messages": size, "target_ms": 2}
    emit("token_count_incremental", value, "ms", base, **extra)


if __name__ == "__main__":
    main()
