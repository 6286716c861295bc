"""The kill -9 campaign at bench size: 200 kills (``--quick``: 3), counters as JSON.

The same campaign as ``tests/reliability/test_kill_campaign.py`` (50 kills,
part of every test run), run longer: a real ``qwen-lsp serve --stdio`` is
killed with SIGKILL at random points (fixed seed) of a streamed turn, a
tool edit (``auto-edit`` / ``yolo``), a memory extraction, a dream and a
``qwen/compress``, and what it left is checked from outside (see
``tests/reliability/campaign.py``).

* ``kill_campaign.failures`` — unreadable complete records + half-written
  memories + indexes still wrong after a restart + dream locks that blocked
  the next dream + sessions that do not resume or cannot continue; target 0.
  Each counter is printed beside it, with the work the killed servers got
  done (proof that the kills landed inside it). The baseline is the number
  of kills, so ``ratio`` is failures per kill.
* ``kill_campaign.seconds_per_kill`` — wall time per kill (server start,
  work, kill and checks; two projects run side by side); no baseline. It
  sizes the test's share of ``.ci/run``.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path

from bench.harness import emit, log

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from reliability.campaign import run_campaign  # noqa: E402

SEED = 15
FAILURE_COUNTERS = ("unreadable_records", "half_written_memories", "index_mismatches", "stale_locks", "unresumable_sessions", "unsendable_sessions")


def main() -> None:
    kills = 3 if "--quick" in sys.argv else 200
    log(f"kill campaign: {kills} kills, seed {SEED}")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="kill-campaign-") as tmp:
        counters = asyncio.run(run_campaign(Path(tmp), kills=kills, seed=SEED))
    elapsed = time.perf_counter() - started
    report = counters.as_dict()
    failures = report.pop("failures")
    for line in failures[:20]:
        log(f"  {line}")
    total = sum(report[name] for name in FAILURE_COUNTERS)
    emit("kill_campaign.failures", total, "count", baseline=counters.kills, **report)
    emit("kill_campaign.seconds_per_kill", elapsed / max(1, counters.kills), "s", kills=counters.kills, seed=SEED)
    if total:
        raise SystemExit(f"{total} failures in the kill campaign")


if __name__ == "__main__":
    main()
