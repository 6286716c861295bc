"""Slow first uses, done on a worker thread as the server starts, so the event loop never pays for them.

Some things cost a lot the first time only: importing watchdog (~60 ms),
httpx and the asyncio half of its transport (~50 ms and anyio's ~20 ms), loading Qwen's vocabulary
(~250 ms). Done lazily on the event loop, each holds it; done lazily on a
worker thread, the loop still waits when it reaches the same import (the
import lock) or the same load (the counter's lock) while the worker is at it:
the first chat's handler then held the loop for as long as the vocabulary
took to load. So the server runs every such step here, in order, on one
thread started with the server, and code on the loop that needs one first
awaits :meth:`Warmup.ready` — a check of a flag once the step is done, and
otherwise a wait that leaves the loop free.

A step that holds the GIL for long stretches no switch interval can cut (the
vocabulary: tiktoken builds its Rust tables in one call of ~100 ms) is marked
``before_initialize``: those run first, and the ``initialize`` handler waits
for them, because no request can be waiting before ``initialize`` is
answered. Everything else runs after, while the loop answers.

Adding one: a :class:`Step` in :func:`server_steps` (``imports(...)`` for
modules) and an ``await warmup.ready(name)`` before the first use on the
loop (none is needed where the first use is on a worker thread: it waits
there for the import lock, harmlessly). A one-shot ``qwen-lsp chat`` has no loop to keep free and no warm-up
(:data:`NO_WARMUP`: every step counts as done).
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass

log = logging.getLogger(__name__)

WATCHING = "watching"
"""watchdog and the platform's observer (``files/watching.py``)."""
HTTP = "http"
"""httpx itself (``llm/client.py`` imports it at first use) and the asyncio side of its transport: httpcore's
async pool and anyio's asyncio backend, imported at the first request."""
VOCABULARY = "vocabulary"
"""Qwen's BPE vocabulary (``llm/tokens.py``)."""
SHELL_PARSER = "shell_parser"
"""tree-sitter and its bash grammar (``shell/syntax.py``). The shell analysis runs on worker threads, so
nothing awaits it: warmed here, the first command's analysis does not pay for the import."""


@dataclass(frozen=True)
class Step:
    name: str
    run: Callable[[], object]
    before_initialize: bool = False
    """Holds the GIL in long uninterruptible calls: done before ``initialize`` is answered."""


def imports(*modules: str) -> Callable[[], None]:
    """A step's work: import ``modules`` (their first import, off the loop)."""

    def run() -> None:
        for module in modules:
            importlib.import_module(module)

    return run


class Warmup:
    """Runs its steps in order on one daemon thread; :meth:`ready` waits for one without holding the loop."""

    def __init__(self, steps: Sequence[Step]) -> None:
        ordered = [s for s in steps if s.before_initialize] + [s for s in steps if not s.before_initialize]
        self._steps = ordered
        self._done: dict[str, Future[None]] = {s.name: Future() for s in ordered}
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start the thread (once); steps run whatever happens to an earlier one."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="qwen-warmup", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        for step in self._steps:
            try:
                step.run()
            except Exception as exc:  # the first real use will meet the same problem and report it there
                log.warning("warming up %s failed: %s", step.name, exc)
            self._done[step.name].set_result(None)

    def done(self, name: str) -> bool:
        future = self._done.get(name)
        return future is None or future.done()

    async def ready(self, name: str) -> None:
        """Until step ``name`` ran (at once if it has, or if there is no such step); never blocks the loop."""
        future = self._done.get(name)
        if future is not None and not future.done():
            self.start()
            await asyncio.wrap_future(future)

    async def initialized(self) -> None:
        """Until every ``before_initialize`` step ran."""
        for step in self._steps:
            if step.before_initialize:
                await self.ready(step.name)


NO_WARMUP = Warmup(())
"""No steps: every :meth:`Warmup.ready` returns at once (a one-shot command, a test's workspace)."""


def server_steps(load_vocabulary: Callable[[], object]) -> list[Step]:
    """What the language server warms up, in order: the vocabulary, then the imports the first chat makes on the loop."""
    return [
        Step(VOCABULARY, load_vocabulary, before_initialize=True),
        Step(WATCHING, imports("qwen_lsp.files.watching")),
        Step(HTTP, imports("httpx", "httpcore", "anyio", "anyio._backends._asyncio", "anyio.streams.tls", "anyio.streams.memory")),
        Step(SHELL_PARSER, imports("tree_sitter", "tree_sitter_bash")),
    ]
