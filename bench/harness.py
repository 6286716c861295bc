"""Shared output format for benchmarks: one JSON line per measurement.

Every benchmark compares against a baseline measured in the same run, so
the ``ratio`` survives noisy machines where absolute times do not.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import sys
from collections.abc import Sequence
from typing import Any


def emit(name: str, value: float, unit: str, baseline: float | None = None, **extra: Any) -> dict[str, Any]:
    """Print one result line: ``{name, value, unit, baseline, ratio, ...}``.

    ``ratio`` is ``value / baseline`` when a baseline exists, else null. Every line carries the
    1-minute ``load_average`` at that moment (null where the OS has none): on a shared machine
    the absolute figures mean little without it.
    """
    ratio = (value / baseline) if baseline not in (None, 0) else None
    row: dict[str, Any] = {
        "name": name,
        "value": round(value, 6),
        "unit": unit,
        "baseline": None if baseline is None else round(baseline, 6),
        "ratio": None if ratio is None else round(ratio, 4),
    }
    row.update(extra)
    row.setdefault("load_average", load_average())
    print(json.dumps(row), flush=True)
    return row


def load_average() -> float | None:
    return round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None


def percentile(samples: Sequence[float], pct: float) -> float:
    """Nearest-rank percentile (``pct`` in 0..100) of a non-empty sample."""
    ordered = sorted(samples)
    if not ordered:
        raise ValueError("no samples")
    k = max(0, min(len(ordered) - 1, round(pct / 100 * len(ordered) + 0.5) - 1))
    return ordered[k]


def median(samples: Sequence[float]) -> float:
    return statistics.median(samples)


def log(message: str) -> None:
    """Progress chatter goes to stderr so stdout stays pure JSON lines."""
    print(message, file=sys.stderr, flush=True)


class Ticker:
    """Sleeps 1 ms at a time on the running loop; ``worst`` is the largest oversleep seen, i.e. the longest
    time anything held the loop (the probe of ``loop_stall`` and ``setup_loop_hold``)."""

    def __init__(self) -> None:
        self.worst = 0.0
        self._stop = False

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        while not self._stop:
            start = loop.time()
            await asyncio.sleep(0.001)
            self.worst = max(self.worst, loop.time() - start - 0.001)

    def stop(self) -> None:
        self._stop = True
