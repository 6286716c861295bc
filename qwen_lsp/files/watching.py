"""A debounced file watcher shared by the cores that follow files on disk.

Skills, rules and context files all need the same thing: notice edits made
outside the editor, wait until a burst of events settles (an editor's save
is often delete+create+modify), then rebuild once. watchdog delivers events
on its observer thread; this class folds them into one callback per burst
and, when given an event loop, runs that callback on the loop thread so the
caller never touches shared state from a foreign thread.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver
from watchdog.observers.api import ObservedWatch

log = logging.getLogger(__name__)

OnChange = Callable[[frozenset[Path]], None]

WANTED_EVENTS = [
    FileCreatedEvent, DirCreatedEvent, FileDeletedEvent, DirDeletedEvent,
    FileMovedEvent, DirMovedEvent, FileModifiedEvent, FileClosedEvent,
]
"""The events worth a rebuild, given to watchdog so inotify is not even asked for the rest.

Opens and read-only closes change nothing we cache, and every read of a watched
file (our own load of 1,500 SKILL.md files, the watch set-up listing each
directory) was otherwise an event built in Python on watchdog's threads, holding
the GIL the event loop needs. A directory's "modified" only echoes an entry
inside it changing, and that entry has its own event, which ``ignore`` can judge
(a new FIFO must not trigger a rebuild through its parent's mtime).
"""


class _Forward(FileSystemEventHandler):
    def __init__(self, owner: DebouncedWatcher) -> None:
        self._owner = owner

    def on_any_event(self, event: FileSystemEvent) -> None:
        paths = [event.src_path, getattr(event, "dest_path", "")]
        for raw in paths:
            if raw:
                self._owner._notice(Path(raw if isinstance(raw, str) else raw.decode()))


class DebouncedWatcher:
    """Watch directories; call ``on_change(paths)`` once per burst of events.

    ``ignore(path)`` filters events (e.g. anything under ``.git``).
    ``max_depth`` limits how deep below a watched root an event may be (as
    chokidar's ``depth``); ``None`` means unlimited.
    """

    def __init__(
        self,
        on_change: OnChange,
        *,
        debounce: float = 0.15,
        ignore: Callable[[Path], bool] | None = None,
        max_depth: int | None = None,
        loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        self._on_change = on_change
        self._debounce = debounce
        self._ignore = ignore
        self._max_depth = max_depth
        self._loop = loop
        self._lock = threading.Lock()
        self._pending: set[Path] = set()
        self._timer: threading.Timer | None = None
        self._observer: BaseObserver | None = None
        self._watches: dict[tuple[Path, bool], ObservedWatch] = {}
        self._handler = _Forward(self)

    @property
    def watched(self) -> frozenset[Path]:
        return frozenset(root for root, _recursive in self._watches)

    def set_roots(self, roots: Iterable[Path], flat: Iterable[Path] = ()) -> None:
        """Watch exactly these existing directories; others are dropped.

        ``roots`` are watched recursively, ``flat`` ones only for their direct
        entries — enough to notice a ``QWEN.md`` or a ``.qwen`` folder appear
        without registering an inotify watch for every folder of a large tree.
        """
        wanted = {(Path(r), True) for r in roots if Path(r).is_dir()}
        wanted |= {(Path(r), False) for r in flat if Path(r).is_dir() and (Path(r), True) not in wanted}
        observer = self._ensure_observer()
        for key in list(self._watches):
            if key not in wanted:
                try:
                    observer.unschedule(self._watches.pop(key))
                except (KeyError, ValueError, OSError) as exc:
                    log.debug("unwatch %s: %s", key[0], exc)
        for key in wanted - set(self._watches):
            root, recursive = key
            try:
                self._watches[key] = observer.schedule(self._handler, str(root), recursive=recursive, event_filter=WANTED_EVENTS)
            except OSError as exc:  # e.g. inotify watch limit reached
                log.warning("cannot watch %s: %s", root, exc)

    def stop(self) -> None:
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            self._pending.clear()
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=2)
            self._observer = None
            self._watches.clear()

    def _ensure_observer(self) -> BaseObserver:
        if self._observer is None:
            self._observer = Observer()
            self._observer.daemon = True
            self._observer.start()
        return self._observer

    def _within_depth(self, path: Path) -> bool:
        if self._max_depth is None:
            return True
        for root, _recursive in tuple(self._watches):  # set_roots may change the dict from the loop thread
            try:
                rel = path.relative_to(root)
            except ValueError:
                continue
            if len(rel.parts) <= self._max_depth + 1:
                return True
        return False

    def _notice(self, path: Path) -> None:
        if (self._ignore is not None and self._ignore(path)) or not self._within_depth(path):
            return
        with self._lock:
            self._pending.add(path)
            if self._timer is not None:
                self._timer.cancel()
            self._timer = threading.Timer(self._debounce, self._fire)
            self._timer.daemon = True
            self._timer.start()

    def _fire(self) -> None:
        with self._lock:
            paths = frozenset(self._pending)
            self._pending.clear()
            self._timer = None
        if not paths:
            return
        if self._loop is not None:
            try:
                self._loop.call_soon_threadsafe(self._safe_call, paths)
            except RuntimeError:  # loop already closed during shutdown
                pass
        else:
            self._safe_call(paths)

    def _safe_call(self, paths: frozenset[Path]) -> None:
        try:
            self._on_change(paths)
        except Exception:  # a failing listener must not kill the watcher
            log.exception("file-change listener failed")
