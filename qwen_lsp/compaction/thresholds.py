"""Context-window thresholds (Qwen Code's ``computeThresholds``), seed-era variant.

Seed-era is kept deliberately: it is the behaviour Qwen Code's seed-era
``chatCompressionService.ts`` has, and the later variant changes numbers for most windows without
fixing a bug. The order of floating-point operations follows upstream's so
results match Qwen Code to the token (e.g. ``(0.7-0.1)*131072 = 78643.2``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

DEFAULT_PCT = 0.7
WARN_PCT_OFFSET = 0.1
SUMMARY_RESERVE = 20_000
AUTOCOMPACT_BUFFER = 13_000
WARN_BUFFER = 20_000
HARD_BUFFER = 3_000

Level = Literal["ok", "warn", "auto", "hard"]


@dataclass(frozen=True)
class Thresholds:
    window: int
    warn: float
    auto: float
    hard: float

    def level(self, prompt_tokens: int) -> Level:
        """Which tier a prompt of this size has reached."""
        if prompt_tokens >= self.hard:
            return "hard"
        if prompt_tokens >= self.auto:
            return "auto"
        if prompt_tokens >= self.warn:
            return "warn"
        return "ok"

    def percent_left(self, prompt_tokens: int) -> float:
        """Share of the window still free, 0–100, one decimal."""
        if self.window <= 0:
            return 0.0
        return round(max(0.0, 100.0 * (1 - prompt_tokens / self.window)), 1)


def compute_thresholds(window: int, pct: float | None = None) -> Thresholds:
    """``computeThresholds`` (seed-era): warn < auto < hard for a context window."""
    p = pct if pct is not None and math.isfinite(pct) else DEFAULT_PCT
    p = min(1.0, max(0.0, p))
    eff = max(0, window - SUMMARY_RESERVE)
    auto = max(p * window, eff - AUTOCOMPACT_BUFFER)
    warn = max(0, max((p - WARN_PCT_OFFSET) * window, auto - WARN_BUFFER))
    hard = min(window, max(eff - HARD_BUFFER, auto + HARD_BUFFER))
    return Thresholds(window=window, warn=warn, auto=auto, hard=hard)
