"""The per-chat circuit breaker of compression (as Qwen Code's ``chatCompressionService.ts``).

After three failed compressions in a row, automatic compression stops
asking the model: a conversation that cannot be summarised should not burn
a compression request before every message. A forced compression (manual,
or the ``hard`` threshold) still runs, and its success closes the breaker.
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_CONSECUTIVE_FAILURES = 3


@dataclass
class CircuitBreaker:
    failures: int = 0

    @property
    def open(self) -> bool:
        return self.failures >= MAX_CONSECUTIVE_FAILURES

    def allows(self, *, force: bool) -> bool:
        return force or not self.open

    def succeeded(self) -> None:
        self.failures = 0

    def failed(self) -> None:
        self.failures += 1
