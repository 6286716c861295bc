"""Work beside the event loop: fire-and-forget tasks, and worker threads that leave it the GIL.

``asyncio`` keeps only weak references to tasks, so a task nobody holds can
be collected mid-run; and shutdown must know what is still running. The
engine, memory and follow-ups each keep one of these instead of a bare set.

A worker thread running Python (reading 1,500 skills) holds the GIL the
event loop needs to come back from each ``select``; on a busy machine the
kernel also preempts that thread while it holds the GIL, and the loop then
waits until it is scheduled again (tens of milliseconds). :func:`pace`,
called between the items of such a loop, makes the worker pause briefly
every couple of milliseconds so the loop gets the GIL at once. A full
garbage collection is such a hold too, run by whichever thread allocates:
:func:`freeze_startup_heap` takes what start-up built out of its reach.
"""

from __future__ import annotations

import asyncio
import gc
import threading
import time
from collections.abc import Coroutine
from typing import Any

PACE_BURST_SECONDS = 0.002
"""How long a worker runs before it pauses: a few skills parsed."""
PACE_PAUSE_SECONDS = 0.0002
"""Long enough for the waiting loop thread to take the GIL; 1,500 skills pause about 200 times."""

_paced = threading.local()


def freeze_startup_heap() -> None:
    """Once the server is built: its modules and objects live as long as the process, so no collection scans them.

    Every full collection walks every tracked object; the imported modules
    alone are about 80,000, and reading 1,500 skills on a worker thread
    triggers full collections that held the GIL, so the event loop, for 70 ms
    each (28 ms with the start-up heap frozen).
    """
    gc.freeze()


def pace() -> None:
    """Between two items of long work: off the loop, pause if this thread ran for :data:`PACE_BURST_SECONDS`.

    Never sleeps on a thread running an event loop (the same code also runs there,
    e.g. the CLI's synchronous load), so it is safe to call anywhere.
    """
    now = time.perf_counter()
    since = getattr(_paced, "since", None)
    if since is None:
        _paced.since = now
    elif now - since >= PACE_BURST_SECONDS:
        if asyncio._get_running_loop() is None:
            time.sleep(PACE_PAUSE_SECONDS)
        _paced.since = time.perf_counter()


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
