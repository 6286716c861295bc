"""Benchmark: a 2,000-turn chat through the real server, auto-compaction firing every thirty-odd turns; is memory flat?

One ``python -m qwen_lsp serve --stdio`` with a 30,000-token context window
(``tests/support/soak.py``: ~2 KB answers, a summary for every compression
request) serves ``TURNS`` turns of one chat. Every ``EVERY`` turns the
server's VmRSS, open file descriptors and threads are read from ``/proc``.

Results:
``soak_rss_mb`` — VmRSS at the end, against VmRSS at turn ``WARM`` (the
bounded caches — the token counter's memos — are warm by then), so a flat
run has ratio ≈ 1; ``soak_rss_growth_per_100_turns_mb`` — the least-squares
slope of VmRSS over the samples from ``WARM`` on, per 100 turns (flat =
within noise: |slope| well under 1 MB); beside them the samples, the number
of compactions, and fds / threads at ``WARM`` and at the end.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from bench.harness import emit, log
from bench.streaming_overhead import scratch

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from support.raw_peer import RawPeer  # noqa: E402
from support.quiet_home import write_quiet_settings  # noqa: E402
from support.scripted_openai import ScriptedOpenAI  # noqa: E402
from support.soak import SOAK_SETTINGS, prompt, soak_reply  # noqa: E402

TURNS = 2_000
EVERY = 100
WARM = 500
QUICK = {"turns": 120, "every": 40, "warm": 40}


def slope_per(xs: list[int], ys: list[float], per: int) -> float:
    """Least-squares slope of ``ys`` over ``xs``, times ``per``."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    var = sum((x - mx) ** 2 for x in xs)
    return per * sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / var if var else 0.0


def proc_counts(pid: int) -> tuple[int, int]:
    """Open file descriptors and threads of ``pid``."""
    fds = len(list(Path(f"/proc/{pid}/fd").iterdir()))
    threads = next(int(line.split()[1]) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if line.startswith("Threads:"))
    return fds, threads


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    size = QUICK if "--quick" in args else {"turns": TURNS, "every": EVERY, "warm": WARM}
    samples: list[tuple[int, float]] = []
    counts: dict[int, tuple[int, int]] = {}
    with ScriptedOpenAI(default=soak_reply) as model, scratch() as root:
        home, ws = root / "home", root / "ws"
        ws.mkdir()
        write_quiet_settings(home, SOAK_SETTINGS)
        peer = RawPeer(home, ws, env=dict(OPENAI_BASE_URL=model.base_url, OPENAI_API_KEY="bench", OPENAI_MODEL="bench"))
        try:
            session_id = None
            started = time.perf_counter()
            for turn in range(1, size["turns"] + 1):
                peer.request(turn, "qwen/chat", {"prompt": prompt(turn), **({"sessionId": session_id} if session_id else {})})
                answer = peer.response(turn)
                if "result" not in answer:
                    raise SystemExit(f"turn {turn}: {answer}")
                session_id = answer["result"]["sessionId"]
                peer.notifications.clear()
                if turn % size["every"] == 0:
                    model.requests.clear()
                    samples.append((turn, peer.status_kb("VmRSS") / 1024))
                    counts[turn] = proc_counts(peer.proc.pid)
                    log(f"turn {turn}: RSS {samples[-1][1]:.1f} MB, fds/threads {counts[turn]}, {time.perf_counter() - started:.0f} s")
            chats = list((home / ".qwen" / "projects").glob(f"*/chats/{session_id}.jsonl"))
            compactions = chats[0].read_text().count('"chat_compression"')
            peak = peer.status_kb("VmHWM") / 1024
        finally:
            peer.close()
    warm = [(t, mb) for t, mb in samples if t >= size["warm"]]
    growth = slope_per([t for t, _ in warm], [mb for _, mb in warm], 100)
    common = {"turns": size["turns"], "compactions": compactions, "samples": [[t, round(mb, 1)] for t, mb in samples]}
    emit("soak_rss_mb", samples[-1][1], "MB", warm[0][1], peak_mb=round(peak, 1), baseline_is=f"server VmRSS at turn {warm[0][0]}",
         fds_threads_warm=counts[warm[0][0]], fds_threads_end=counts[samples[-1][0]], **common)
    emit("soak_rss_growth_per_100_turns_mb", growth, "MB/100 turns", None, from_turn=warm[0][0], target="flat (|slope| < 1 MB)", **common)


if __name__ == "__main__":
    main()
