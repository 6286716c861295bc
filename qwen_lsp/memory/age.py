"""How old a memory is, in the words recall shows the model (Qwen Code's ``memoryAge.ts``).

A recalled memory is a point-in-time observation, so the model is told when
it was saved ("Saved 47 days ago.") and, once it is more than a day old, is
reminded to check it against the current code before stating it as fact.
The wording follows seed-era Qwen Code and ``recall.ts``'s call sites (the
stored ``memoryAge.ts`` is from another lineage).
"""

from __future__ import annotations

import math

DAY_SECONDS = 86_400


def memory_age_days(mtime: float, now: float) -> int:
    """Whole days since ``mtime`` (seconds since the epoch), never negative (a clock skew reads as today)."""
    elapsed = now - mtime
    if not math.isfinite(elapsed) or elapsed <= 0:
        return 0
    return math.floor(elapsed / DAY_SECONDS)


def memory_age(mtime: float, now: float) -> str:
    """``today``, ``yesterday`` or ``N days ago``."""
    days = memory_age_days(mtime, now)
    if days == 0:
        return "today"
    if days == 1:
        return "yesterday"
    return f"{days} days ago"


def memory_freshness_text(mtime: float, now: float) -> str:
    """The staleness warning for a memory older than one day; ``''`` for today and yesterday."""
    days = memory_age_days(mtime, now)
    if days <= 1:
        return ""
    return (
        f"This memory is {days} days old. Memories are point-in-time observations, not live state"
        " — claims about code behavior or file:line citations may be outdated."
        " Verify against current code before asserting as fact."
    )
