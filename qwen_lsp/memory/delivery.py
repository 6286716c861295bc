"""When a turn's recalled memories reach the model, as Qwen Code 0.24.4's ``client.ts`` delivers them.

Recall starts when the turn starts and runs beside it. Two moments can carry
its result, and each takes it at most once:

* **initial** — when the user message is assembled. Recall gets a bounded
  wait of :data:`INITIAL_RECALL_WAIT_SECONDS` (0.24.4's
  ``INITIAL_MEMORY_RECALL_WAIT_MS`` = 100 ms). If the whole recall has
  settled by then, all of it goes in; if only the keyword scorer's early
  result (its top two, offered before the model selector is asked) is
  there, those go in now and the selector keeps running. A turn the model
  answers without tools has no later moment, so without this early result
  a slow selector would cost it every memory.
* **after a tool result** — a zero-wait poll after each tool round: the
  settled result, minus what the early delivery already sent, re-rendered.

Delivered memories join the chat's ``surfaced`` set, so a later turn of the
same chat is not offered them again (0.24.4 marks them on delivery too, not
when they are computed). The text is a bare ``## Relevant memory`` block,
not wrapped in ``<system-reminder>``: checked against the 0.24.4 CLI, whose
first request carries it as its own text part after the startup reminders.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path

from .recall import RecallResult, render_relevant_memory

log = logging.getLogger(__name__)

INITIAL_RECALL_WAIT_SECONDS = 0.1
"""Qwen Code 0.24.4's ``INITIAL_MEMORY_RECALL_WAIT_MS``: how long the first request waits for recall."""


class TurnRecall:
    """One turn's recall and its two delivery moments (see the module docstring).

    ``start`` runs the recall; it is handed the callback for the early
    keyword result. ``clock`` gives seconds for the ages in a re-rendered block.
    """

    def __init__(
        self,
        start: Callable[[Callable[[RecallResult], None]], Awaitable[RecallResult]],
        *,
        surfaced: set[Path],
        clock: Callable[[], float],
        initial_wait: float = INITIAL_RECALL_WAIT_SECONDS,
    ) -> None:
        self._surfaced = surfaced
        self._clock = clock
        self._initial_wait = initial_wait
        self._fast: RecallResult | None = None
        self._arrived = asyncio.Event()
        self._fast_paths: set[Path] = set()
        self._fast_delivered = False
        self._consumed = False
        self._task: asyncio.Future[RecallResult] = asyncio.ensure_future(start(self._on_fast))
        self._task.add_done_callback(lambda _t: self._arrived.set())

    def _on_fast(self, result: RecallResult) -> None:
        self._fast = result
        self._arrived.set()

    async def initial(self) -> list[str]:
        """The texts for the turn's first request: waits at most the initial budget, never longer."""
        if self._consumed:
            return []
        if not self._task.done() and self._fast is None:
            try:
                await asyncio.wait_for(self._arrived.wait(), self._initial_wait)
            except TimeoutError:
                pass  # budget spent: the recall keeps running for the next tool result
        if self._consumed:
            return []
        if self._task.done():
            return self._consume()
        fast = self._fast
        if self._fast_delivered or fast is None or not fast.text:
            return []
        self._fast_delivered = True
        paths = {doc.path for doc in fast.docs}
        self._fast_paths |= paths
        self._surfaced |= paths
        return [fast.text]

    def take(self) -> list[str]:
        """After a tool round: the settled result not yet delivered, or ``[]`` (never waits)."""
        if self._consumed or not self._task.done():
            return []
        return self._consume()

    def cancel(self) -> None:
        """The turn is over: a recall still running is dropped, its result would have nowhere to go."""
        self._consumed = True
        if not self._task.done():
            self._task.cancel()

    def _consume(self) -> list[str]:
        self._consumed = True
        if self._task.cancelled():
            return []
        exc = self._task.exception()
        if exc is not None:
            log.warning("recall failed; the turn goes on without it: %s", exc)
            return []
        result = self._task.result()
        remaining = [doc for doc in result.docs if doc.path not in self._fast_paths]
        if not remaining:
            return []
        self._surfaced.update(doc.path for doc in remaining)
        if len(remaining) == len(result.docs):
            return [result.text]
        return [render_relevant_memory(remaining, self._clock())]
