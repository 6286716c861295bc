"""Fire-and-forget tasks that shutdown can still wait for or cancel.

``asyncio`` keeps only weak references to tasks, so a task nobody holds can
be collected mid-run; and shutdown must know what is still running. The
engine, memory and follow-ups each keep one of these instead of a bare set.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any


class BackgroundTasks:
    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()

    def __len__(self) -> int:
        """Tasks still running (a finished one leaves the set as it ends)."""
        return len(self._tasks)

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def wait(self, *, cancel: bool = False) -> None:
        """Until every task ended (cancelling them first when ``cancel``); their failures are not raised here."""
        tasks = list(self._tasks)
        if cancel:
            for task in tasks:
                task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
