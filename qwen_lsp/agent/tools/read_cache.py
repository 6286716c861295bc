"""``read_file``'s read cache: a re-read of an unchanged file range is answered with a short note.

Qwen Code's file-read cache spares the prompt a second copy of a file the
model already has in the conversation: when the same range of a file is
read again and the file has not changed (same size and modification time),
the answer says so instead of repeating the content.

That is only true while the earlier result is still in the history, so the
cache must forget whatever leaves it: compaction reports the paths whose
read results it cleared (``Compactor(on_reads_evicted=...)``; None means
"could not tell which", so everything is forgotten), a full compression or
``qwen/compress`` replaces the history (the chat's cache is cleared), and a
write tool forgets the path it changed. Caches are per chat; a resumed chat
starts with an empty one.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable
from pathlib import Path

Stamp = tuple[int, int, int, int | None]
"""``(mtime_ns, size, offset, limit)`` of one read."""


class ReadCache:
    """One chat's cache; thread-safe (``read_file`` runs on a worker thread, eviction on the event loop)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._reads: dict[Path, set[Stamp]] = {}

    def seen(self, path: Path, stamp: Stamp) -> bool:
        with self._lock:
            return stamp in self._reads.get(path, ())

    def remember(self, path: Path, stamp: Stamp) -> None:
        with self._lock:
            self._reads.setdefault(path, set()).add(stamp)

    def forget(self, paths: Iterable[Path] | None) -> None:
        """Forget ``paths`` (None: everything)."""
        with self._lock:
            if paths is None:
                self._reads.clear()
            else:
                for path in paths:
                    self._reads.pop(path, None)


class ReadCaches:
    """Every chat's cache in one workspace."""

    def __init__(self) -> None:
        self._by_session: dict[str, ReadCache] = {}

    def for_session(self, session_id: str) -> ReadCache:
        return self._by_session.setdefault(session_id, ReadCache())

    def evict(self, paths: frozenset[str] | None) -> None:
        """Compaction cleared these read results somewhere; forgetting them in every chat is always safe."""
        # The paths are the model's own spelling; the cache keys are resolved. A relative one cannot be placed: forget all.
        resolved = None if paths is None or not all(os.path.isabs(p) for p in paths) else [Path(os.path.realpath(p)) for p in paths]
        for cache in self._by_session.values():
            cache.forget(resolved)

    def forget(self, session_id: str) -> None:
        self._by_session.pop(session_id, None)
