"""``read_file``'s read cache: an unchanged file range is not read and rendered again.

Keyed by the resolved path and ``(mtime_ns, size, offset, limit)``: a hit
returns exactly what a fresh read would (the file has the same size and
modification time), so the cache can never show the model stale text.

Why not Qwen Code's placeholder ("file unchanged since last read, see
above")? Microcompaction keeps the *newest* N tool results and clears the
older ones, so a placeholder can outlive the full result it points to, and
the model is left with neither (the compaction tests caught exactly that).
Answering with the same content is always safe.

Invalidation still matters, to keep memory bounded and to be ready for a
placeholder scheme that compaction knows about: compaction reports the paths
whose read results it cleared (``Compactor(on_reads_evicted=...)``, for that chat; None
means "could not tell which", so everything goes), a compression clears
the chat's cache, and a write tool forgets the path it changed. Caches are
per chat and hold at most ``MAX_ENTRIES`` reads (oldest dropped first).
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Generic, TypeVar

from ...sessions.registry import Slot

Stamp = tuple[int, int, int, int | None]
"""``(mtime_ns, size, offset, limit)`` of one read."""

MAX_ENTRIES = 64

Result = TypeVar("Result")
"""What a read rendered (the tool's ``ToolResult``); generic so this module needs nothing of ``agent/tool.py``."""


class ReadCache(Generic[Result]):
    """One chat's cache; thread-safe (``read_file`` runs on a worker thread, eviction on the event loop)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._reads: OrderedDict[tuple[Path, Stamp], Result] = OrderedDict()

    def get(self, path: Path, stamp: Stamp) -> Result | None:
        with self._lock:
            hit = self._reads.get((path, stamp))
            if hit is not None:
                self._reads.move_to_end((path, stamp))
            return hit

    def put(self, path: Path, stamp: Stamp, result: Result) -> None:
        with self._lock:
            self._reads[(path, stamp)] = result
            while len(self._reads) > MAX_ENTRIES:
                self._reads.popitem(last=False)

    def forget(self, paths: Iterable[Path] | None) -> None:
        """Forget ``paths`` (None: everything)."""
        with self._lock:
            if paths is None:
                self._reads.clear()
                return
            gone = set(paths)
            for key in [k for k in self._reads if k[0] in gone]:
                del self._reads[key]

    def evict(self, paths: frozenset[str] | None) -> None:
        """Compaction cleared the read results of these paths (None: it could not tell which) from the chat."""
        # The paths are the model's own spelling; the keys are resolved. A relative one cannot be placed: forget all.
        resolved = None if paths is None or not all(os.path.isabs(p) for p in paths) else [Path(os.path.realpath(p)) for p in paths]
        self.forget(resolved)

    def __len__(self) -> int:
        return len(self._reads)


READ_CACHE: Slot[ReadCache[Any]] = Slot("read_cache", ReadCache)
"""Each chat's cache, kept on the chat."""
