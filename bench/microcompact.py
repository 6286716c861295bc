"""Benchmark: forced microcompaction of a 2,000-message history (target ≤ 20 ms).

The history is 1,000 rounds of a ``read_file`` call and its ~2 KB result,
as a long agent session leaves behind. ``microcompact`` times
``microcompact_history(force=True)`` with the default keep of 5 (995
results cleared, the evicted paths recovered through call ids); the
baseline is one shallow copy of every message (the least any rewrite of
the history costs), so ``ratio`` shows the cost of the rules over a plain
walk. ``microcompact_size`` times the size trigger on the same history.

Run: ``python -m bench.microcompact [--quick]``.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from bench.harness import emit, log, median
from qwen_lsp.compaction.microcompact import MicrocompactSettings, microcompact_history
from qwen_lsp.llm.content import Content


def history(rounds: int) -> list[Content]:
    out: list[Any] = []
    body = "\n".join(f"{n:5d}  def handler_{n}(request): return respond(request, {n})" for n in range(30))
    for n in range(rounds):
        call_id = f"call_{n}"
        out.append({"role": "model", "parts": [{"functionCall": {"id": call_id, "name": "read_file", "args": {"file_path": f"/w/src/mod{n}.py"}}}]})
        out.append({"role": "user", "parts": [{"functionResponse": {"id": call_id, "name": "read_file", "response": {"output": body}}}]})
    return out


def timed(fn: Any, repeats: int) -> float:
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return median(samples) * 1000


def main() -> None:
    quick = "--quick" in sys.argv
    rounds = 50 if quick else 1000
    repeats = 3 if quick else 15
    h = history(rounds)
    log(f"microcompact: {len(h)} messages")
    forced = MicrocompactSettings()
    done = microcompact_history(h, None, forced, force=True, env={})
    assert done is not None and done[1].tools_cleared == rounds - 5 and len(done[1].evicted_read_paths) == rounds - 5

    def copy() -> None:
        [{"role": c["role"], "parts": list(c["parts"])} for c in h]

    base = timed(copy, repeats)
    emit("microcompact", timed(lambda: microcompact_history(h, None, forced, force=True, env={}), repeats), "ms", base, messages=len(h), target_ms=20)
    size = MicrocompactSettings(total_chars_threshold=len(h) * 400)
    emit("microcompact_size", timed(lambda: microcompact_history(h, None, size, env={}), repeats), "ms", base, messages=len(h))


if __name__ == "__main__":
    main()
