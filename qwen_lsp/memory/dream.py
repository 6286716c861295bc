"""Dream: a periodic forked run that consolidates the project's memories (Qwen Code's ``memory/dream.ts``).

:meth:`Dream.maybe_run` is called after a turn; it returns at once with
``skipped`` unless every gate passes, in this order (seed-era):

1. ``disabled`` — the setting is off;
2. ``same_session`` — this session already dreamed (``meta.lastDreamSessionId``);
3. ``min_hours`` — less than 24 h since ``meta.lastDreamAt``;
4. ``scan_throttled`` — this project's chats were counted less than 10
   minutes ago (the time is recorded only after a real count);
5. ``min_sessions`` — fewer than 5 other sessions changed since the last
   dream: files in the project's ``chats/`` whose name matches
   ``^[0-9a-fA-F-]{32,36}\\.jsonl$``, modified after ``lastDreamAt``, the
   current session's own file excluded;
6. (not a gate) when the previous run failed to release its lock, the lock
   is removed now and the flag cleared, so the same process recovers;
7. ``locked`` — ``consolidation.lock`` in the state dir is held: it names a
   PID that is alive (``os.kill(pid, 0)``) and is at most 1 hour old. A
   lock with a dead or invalid PID, or older than an hour, is removed;
8. ``running`` — a dream of this project is already in flight here.

The lock is created with ``O_CREAT | O_EXCL`` and holds our PID. The
dream is a fork of the parent turn (``fork.py``) with the four-phase task
(orient, gather from the transcripts narrowly, consolidate, update the
index — rebuilt by the store from the files, so the task asks for good
``name``/``description`` lines instead of a hand-edited ``MEMORY.md``),
8 turns / 5 minutes, writes allowed in the project memory only.
Its transcripts directory is a read root; the task's ``grep … | tail -50``
recipe runs in the read-only shell when the chat declares one, else the
model uses ``grep_search`` (the fork adds no shell of its own: see below).

Only a completed dream is recorded (``meta.json``: ``lastDreamAt``,
``lastDreamSessionId``, touched topics) and followed by an index rebuild.
A cancelled dream records nothing and skips the rebuild (a
cancel must not pass for a finished run, or the 24-hour gate would hide
the fact that nothing was consolidated); a failed one records nothing
either, so the next eligible turn tries again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Literal

from ..files.paths import chats_dir
from .extract import ExtractStore, touched_topics
from .forking import MemoryForkRunner, ParentTurn
from .meta import META_FILE, iso, parse_iso, read_json, update_meta
from .model import Topic

log = logging.getLogger(__name__)

MAX_TURNS = 8
MAX_SECONDS = 5 * 60.0
MIN_HOURS = 24
MIN_SESSIONS = 5
SCAN_THROTTLE_SECONDS = 10 * 60.0
LOCK_FILE = "consolidation.lock"
LOCK_STALE_SECONDS = 60 * 60.0
SESSION_FILE = re.compile(r"^[0-9a-fA-F-]{32,36}\.jsonl$")
MAX_CHAT_FILES_SCANNED = 100_000

DreamStatus = Literal["skipped", "updated", "noop", "failed", "cancelled"]
DreamSkip = Literal["disabled", "same_session", "min_hours", "scan_throttled", "min_sessions", "locked", "running"]


@dataclass
class DreamResult:
    status: DreamStatus
    skipped_reason: DreamSkip | None = None
    touched_topics: list[Topic] = field(default_factory=list)
    files_written: list[str] = field(default_factory=list)
    error: str | None = None


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except OSError:  # ESRCH: gone; EPERM counts as "not ours to trust", as Node's process.kill throwing
        return False
    return True


def lock_held(path: Path, now: float) -> bool:
    """``dreamLockExists``: True for a fresh lock naming a live PID; any other lock is removed."""
    try:
        stat = path.stat()
        text = path.read_text(encoding="utf-8", errors="replace")[:32].strip()
    except FileNotFoundError:
        return False
    pid = int(text) if text.isdigit() else 0
    if now - stat.st_mtime <= LOCK_STALE_SECONDS and pid > 0 and pid_alive(pid):
        return True
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    return False


def force_remove(path: Path) -> None:
    """Remove whatever sits at the lock's path (a file, or a directory left by something else)."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def take_lock(path: Path) -> bool:
    """Create the lock with our PID; False when someone created it first."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return False
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(str(os.getpid()))
    return True


def count_sessions(chats: Path, since: datetime | None, current_session: str) -> int:
    """Sessions other than ``current_session`` whose transcript changed after ``since``."""
    count = 0
    own = f"{current_session}.jsonl"
    threshold = since.timestamp() if since else float("-inf")
    try:
        entries = os.scandir(chats)
    except (FileNotFoundError, NotADirectoryError):
        return 0
    with entries:
        for seen, entry in enumerate(entries):
            if seen >= MAX_CHAT_FILES_SCANNED:
                break
            if entry.name == own or not SESSION_FILE.match(entry.name):
                continue
            try:
                if entry.is_file() and entry.stat().st_mtime > threshold:
                    count += 1
            except OSError:
                continue
    return count


def dream_task(memory_root: Path, transcripts: Path) -> str:
    """The four-phase consolidation task (Qwen Code's phases, in our words; the rules ride along)."""
    index = memory_root / "MEMORY.md"
    return "\n".join(
        [
            "You are now doing a memory dream: a reflective consolidation pass over this project's memory files. "
            "Do not answer the user.",
            "",
            "Rules:",
            "- Merge memories that say the same thing into one file and delete the others.",
            "- Keep every durable fact that is still accurate.",
            "- Fix a stale or contradicted fact only when the evidence is clear.",
            "- Write only inside the memory directory; files under `pinned/` are read-only.",
            "- If nothing needs consolidation, change nothing and say so.",
            "",
            f"Memory directory: `{memory_root}`",
            f"Session transcripts: `{transcripts}` (large JSONL files: grep narrowly, never read one whole)",
            "",
            "## Phase 1 — Orient",
            "- List the memory directory to see which files exist.",
            f"- Read `{index}` to see the current index.",
            "- Skim the topic directories (`user/`, `project/`, `feedback/`, `reference/`).",
            "",
            "## Phase 2 — Gather recent signal",
            "Look for information worth keeping, in rough priority order:",
            "1. Memories that drifted: facts contradicted by what the other memory files now say.",
            "2. Transcript search, only for terms you already suspect matter: `grep_search` with a narrow "
            f"pattern in `{transcripts}` (include `*.jsonl`), or, when you have `run_shell_command`,",
            f'   `grep -rn "<narrow term>" {transcripts}/ --include="*.jsonl" | tail -50`',
            "Do not read transcripts exhaustively.",
            "",
            "## Phase 3 — Consolidate",
            "For each topic directory:",
            "- Find duplicate or near-duplicate files (the same fact worded differently).",
            "- Merge them: write the canonical version into one file, delete the redundant ones.",
            "- Fix stale or contradicted facts when the memory content makes it clear; turn relative dates "
            "(`yesterday`, `next week`) into absolute ones.",
            "",
            "## Phase 4 — Update the index",
            f"`{index}` is rebuilt from the surviving files automatically (one line each: "
            "`- [Title](relative/path.md) — one-line hook`); do not write it yourself. Make every surviving "
            "file's `name` and `description` a short, accurate index line, so the index stays under 200 lines and 25 KB.",
            "",
            "---",
            "",
            "Summarize what you merged or pruned. If nothing needed consolidation, say so briefly.",
        ]
    )


class Dream:
    """Consolidation for one project; see the module doc. Create one per project and keep it."""

    def __init__(
        self,
        store: ExtractStore,
        runner: MemoryForkRunner,
        *,
        workspace_root: Path,
        enabled: Callable[[], bool] = lambda: True,
        transcripts: Path | None = None,
        max_turns: int = MAX_TURNS,
        max_seconds: float = MAX_SECONDS,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store = store
        self._runner = runner
        self._workspace = workspace_root
        self._enabled = enabled
        self._transcripts = transcripts if transcripts is not None else chats_dir(workspace_root)
        self._max_turns = max_turns
        self._max_seconds = max_seconds
        self._clock = clock
        self._monotonic = monotonic
        self._last_scan: float | None = None
        self._release_failed = False
        self._running = False
        self._cancel = asyncio.Event()

    @property
    def lock_path(self) -> Path:
        return self.store.state_dir() / LOCK_FILE

    def cancel(self) -> None:
        """Stop a running dream; it resolves ``cancelled`` and records nothing."""
        self._cancel.set()

    async def maybe_run(self, session_id: str, parent: ParentTurn, *, force: bool = False, started: Callable[[], None] | None = None) -> DreamResult:
        """Check the gates; when all pass, run the dream to its end (wrap in a task to run it in the background).

        ``force`` (a dream the user asked for: ``qwen-lsp memory dream``) skips the
        schedule gates (1–5) but never the lock or a dream already running.
        ``started`` is called once the gates passed and the lock is ours (progress begins there).
        """
        skipped = None if force else await self._gates(session_id)
        if skipped is not None:
            return DreamResult("skipped", skipped)
        if self._running:
            return DreamResult("skipped", "running")
        if not await asyncio.to_thread(take_lock, self.lock_path):
            return DreamResult("skipped", "locked")
        self._running = True
        self._cancel = asyncio.Event()
        try:
            if started is not None:
                started()
            return await self._dream(session_id, parent)
        finally:
            self._running = False
            try:
                await asyncio.to_thread(self.lock_path.unlink)
            except FileNotFoundError:
                pass
            except OSError as exc:
                log.warning("could not release %s: %s; the next schedule removes it", self.lock_path, exc)
                self._release_failed = True

    async def _gates(self, session_id: str) -> DreamSkip | None:
        if not self._enabled():
            return "disabled"
        meta = await asyncio.to_thread(read_json, self.store.state_dir() / META_FILE)
        if meta.get("lastDreamSessionId") == session_id:
            return "same_session"
        last = parse_iso(meta.get("lastDreamAt"))
        now = self._clock()
        if last is not None and now - last < timedelta(hours=MIN_HOURS):
            return "min_hours"
        tick = self._monotonic()
        if self._last_scan is not None and tick - self._last_scan < SCAN_THROTTLE_SECONDS:
            return "scan_throttled"
        sessions = await asyncio.to_thread(count_sessions, self._transcripts, last, session_id)
        self._last_scan = tick
        if sessions < MIN_SESSIONS:
            return "min_sessions"
        if self._release_failed:
            await asyncio.to_thread(force_remove, self.lock_path)
            self._release_failed = False
        if await asyncio.to_thread(lock_held, self.lock_path, time.time()):
            return "locked"
        return None

    async def _dream(self, session_id: str, parent: ParentTurn) -> DreamResult:
        store = self.store
        memory_root = store.root("project")
        fork = await self._runner(
            parent,
            dream_task(memory_root, self._transcripts),
            writable=[memory_root],
            team=None,
            read_roots=[memory_root, self._transcripts],
            max_turns=self._max_turns,
            max_seconds=self._max_seconds,
            cancel=self._cancel,
            open_call_note="Background consolidation started.",
            protected=[store.root("user")],
        )
        if fork.status == "cancelled":
            return DreamResult("cancelled", files_written=fork.files_written)
        if fork.status == "failed":
            return DreamResult("failed", files_written=fork.files_written, error=fork.reason)
        topics, _, _ = touched_topics(fork.files_written, memory_root, store.root("user"))
        now = self._clock()
        await asyncio.to_thread(
            update_meta,
            store.state_dir(),
            now,
            lastDreamAt=iso(now),
            lastDreamSessionId=session_id,
            lastDreamTouchedTopics=list(topics),
            lastDreamStatus="updated" if topics else "noop",
        )
        await asyncio.to_thread(store.rebuild_index, "project")
        return DreamResult("updated" if topics else "noop", touched_topics=topics, files_written=fork.files_written)
