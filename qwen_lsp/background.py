"""Work beside the event loop: fire-and-forget tasks, and worker threads that leave it the GIL.

``asyncio`` keeps only weak references to tasks, so a task nobody holds can
be collected mid-run; and shutdown must know what is still running. The
engine, memory and follow-ups each keep one of these instead of a bare set.

A worker thread running Python (reading 1,500 skills) holds the GIL the
event loop needs to come back from each ``select``. :func:`pace`, called
between the items of such work, makes the worker pause briefly every couple
of milliseconds so the loop gets the GIL at once rather than after the
switch interval; :func:`prepare_server_process` shortens that interval for
the rest and keeps full garbage collections (a GIL hold by whichever thread
allocates) off the start-up heap, which :func:`defer_collections` keeps them
off while it is built, too.
"""

from __future__ import annotations

import asyncio
import gc
import sys
import threading
import time
from collections.abc import Coroutine
from typing import Any

PACE_BURST_SECONDS = 0.002
"""How long a worker runs before it pauses: a few skills parsed."""
PACE_PAUSE_SECONDS = 0.0002
"""Long enough for the waiting loop thread to take the GIL; 1,500 skills pause about 200 times."""

SWITCH_INTERVAL_SECONDS = 0.001
"""The server's GIL switch interval: the longest a waiting event loop lets a worker run on."""

_paced = threading.local()
_pacing = False


def defer_collections() -> None:
    """Before the server's modules are imported: no cyclic collection until :func:`prepare_server_process`.

    Importing the server makes about 80,000 objects that live as long as the
    process (classes, functions, pydantic and lsprotocol schemas); each young
    generation that fills up meanwhile is collected, and each full collection
    walks all of them again: about a tenth of the start's CPU, paid before
    ``initialize`` can be answered. The garbage those imports leave (some
    17,000 objects, a few MB) is frozen with the rest instead of collected,
    as the ``gc.freeze`` documentation advises for a heap built once.
    """
    gc.disable()


def prepare_server_process() -> None:
    """Once the server is built: tune the interpreter for an event loop that shares it with worker threads.

    * The start-up heap is frozen: its modules and objects live as long as the
      process, and every full collection walked them all (about 80,000
      objects). Reading 1,500 skills on a worker triggers full collections,
      each holding the GIL, so the event loop, for 70 ms (28 ms frozen).
    * The GIL switch interval drops to :data:`SWITCH_INTERVAL_SECONDS`: a
      thread waiting for the GIL asks its holder to let go only after that
      long (5 ms by default), and the loop waits so on each return from
      ``select`` while a worker runs Python that :func:`pace` does not cover
      (library code, one ``sorted`` of 1,500 skills): twice per wake-up.
    * Worker loops :func:`pace` themselves.
    """
    global _pacing
    gc.freeze()
    gc.enable()  # off since defer_collections, when the command line called it
    sys.setswitchinterval(SWITCH_INTERVAL_SECONDS)
    _pacing = True


def pace() -> None:
    """Between two items of long work: off the loop, pause if this thread ran for :data:`PACE_BURST_SECONDS`.

    Only in the server (after :func:`prepare_server_process`): a one-shot
    command has no other chat to keep streaming. Never sleeps on a thread
    running an event loop, so it is safe to call from code that runs there too.
    """
    if not _pacing:
        return
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
