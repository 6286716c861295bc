"""The workspace's files and folders for ``@`` completion: listed once, matched fuzzily per keystroke.

The walk leaves out what the startup folder listing leaves out (``listing_ignore.py``: ``.git``,
the ``.gitignore`` files in a git repository, ``.qwenignore``, ``.agentignore`` and
``.aiignore``), enters no symlinked folder (a link could lead out of the workspace, or in a loop)
and stops at :data:`MAX_ENTRIES`. The list is kept and rebuilt in the background when it is older
than :data:`FRESH_SECONDS`, so a keystroke never waits for a walk after the first; matching is one
RE2 pass (linear time, whatever the query) over all the paths for those holding the query as a
subsequence, then a score for those only, best matches first: the query inside the file name, then inside the path, then as a subsequence, shorter paths
first among equals.
"""

from __future__ import annotations

import bisect
import heapq
import os
import re
import threading
import time
from dataclasses import dataclass, field

from ..matching.linear_regex import compile_linear
from .listing_ignore import ListingIgnore
from .prompts import is_git_repository

MAX_ENTRIES = 300_000
"""Files and folders listed at most; a larger tree is listed up to here, breadth first, and marked truncated."""
FRESH_SECONDS = 10.0
MAX_QUERY = 200
"""Characters of a query that are matched; a longer one is cut (no path search needs more)."""


@dataclass(frozen=True)
class Listing:
    entries: tuple[str, ...]
    """Relative, ``/``-separated; folders end in ``/``."""
    lowered: tuple[str, ...]
    truncated: bool
    joined: str = field(default="", repr=False)
    """``lowered`` joined by newlines: one linear RE2 pass finds every path a query could match."""
    starts: tuple[int, ...] = field(default=(), repr=False)
    """Where each path begins in :attr:`joined`."""


def list_files(root: str, max_entries: int = MAX_ENTRIES) -> Listing:
    """Blocking: every file and folder under ``root`` the listing filters keep, breadth first, bounded."""
    ignore = ListingIgnore.for_root(root, is_git_repository(root))
    out: list[str] = []
    queue = [""]
    truncated = False
    head = 0
    while head < len(queue):
        rel_dir = queue[head]
        head += 1
        try:
            with os.scandir(os.path.join(root, rel_dir) if rel_dir else root) as it:
                children = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        for entry in children:
            rel = f"{rel_dir}{entry.name}"
            if entry.name == ".git" or ignore.ignored(os.path.join(root, rel)):
                continue
            if len(out) >= max_entries:
                truncated = True
                break
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_dir:
                out.append(rel + "/")
                queue.append(rel + "/")
            else:
                out.append(rel)
        if truncated:
            break
    entries = tuple(out)
    lowered = tuple(e.lower() for e in entries)
    starts, at = [], 0
    for e in lowered:
        starts.append(at)
        at += len(e) + 1
    return Listing(entries, lowered, truncated, "\n".join(lowered), tuple(starts))


def _score(path: str, query: str) -> int | None:
    """Higher is better; None when ``query`` is not a subsequence of ``path`` (both lower-cased)."""
    name_start = path.rstrip("/").rfind("/") + 1
    name = path[name_start:]
    if query in name:
        return 3_000 - len(path) + (500 if name.startswith(query) else 0)
    if query in path:
        return 2_000 - len(path)
    at = 0
    gaps = 0
    for ch in query:
        found = path.find(ch, at)
        if found < 0:
            return None
        gaps += found != at
        at = found + 1
    return 1_000 - len(path) - 10 * gaps


def match(listing: Listing, query: str, limit: int) -> list[str]:
    """The best ``limit`` entries for ``query`` (``@`` and ``./`` prefixes ignored; empty: the top level)."""
    q = query.strip().lstrip("@").replace("\\", "/").lower()
    while q.startswith("./"):
        q = q[2:]
    if not q:
        return [e for e in listing.entries if "/" not in e.rstrip("/")][:limit]
    q = q[:MAX_QUERY]
    scored = ((s, -i) for i in _candidates(listing, q) if (s := _score(listing.lowered[i], q)) is not None)
    return [listing.entries[-i] for _s, i in heapq.nlargest(limit, scored)]


def _candidates(listing: Listing, q: str) -> list[int]:
    """Indexes of the paths holding ``q`` as a subsequence, found by RE2 in one pass over all of them."""
    if "\n" in q:
        return []
    gap = "[^\n]*"
    pattern = "(?m)^" + gap + gap.join(re.escape(ch) for ch in q) + gap + "$"
    found = compile_linear(pattern).finditer(listing.joined)
    return [bisect.bisect_right(listing.starts, m.start()) - 1 for m in found]


class FileIndex:
    """One workspace's listing, rebuilt in the background once stale; the first call waits for the walk."""

    def __init__(self, root: str) -> None:
        self._root = root
        self._lock = threading.Lock()
        self._listing: Listing | None = None
        self._built = 0.0
        self._refreshing = False

    def listing(self) -> Listing:
        """Blocking on the first call only."""
        with self._lock:
            current, stale = self._listing, time.monotonic() - self._built > FRESH_SECONDS
            start = current is not None and stale and not self._refreshing
            if start:
                self._refreshing = True
        if current is None:
            return self._rebuild()
        if start:
            threading.Thread(target=self._rebuild, name="qwen-file-index", daemon=True).start()
        return current

    def _rebuild(self) -> Listing:
        try:
            listing = list_files(self._root)
        finally:
            with self._lock:
                self._refreshing = False
        with self._lock:
            self._listing, self._built = listing, time.monotonic()
        return listing
