"""Context-window thresholds as Qwen Code 0.24.4's ``computeThresholds`` (``chatCompressionService.ts``).

``auto = min(pct·w, w − 20000 − 13000)`` (``pct·w`` alone when the second
term is not positive), ``warn = max(0, auto − 20000)``,
``hard = min(w, max(w − 20000 − 3000, auto + 3000))``, with ``pct`` 0.85
unless ``context.autoCompactThreshold`` (our ``compression.threshold``)
sets another share in (0, 1]; 0 or anything else means the default, as
0.24.4's ``getAutoCompactThreshold``. For ``qwen3-coder-plus``'s
1,000,000-token window that is warn 830,000, auto 850,000, hard 977,000;
for the 200,000-token default window 147,000, 167,000, 177,000. The order
of floating-point operations is 0.24.4's, so results match it to the token.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

DEFAULT_PCT = 0.85
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
    """``computeThresholds`` (0.24.4): warn < auto < hard for a context window."""
    p = pct if pct is not None and math.isfinite(pct) and 0 < pct <= 1 else DEFAULT_PCT
    eff = max(0, window - SUMMARY_RESERVE)
    ceiling = eff - AUTOCOMPACT_BUFFER
    auto = min(p * window, ceiling) if ceiling > 0 else p * window
    warn = max(0, auto - WARN_BUFFER)
    hard = min(window, max(eff - HARD_BUFFER, auto + HARD_BUFFER))
    return Thresholds(window=window, warn=warn, auto=auto, hard=hard)
