"""Memory extraction after a user turn: a forked run that writes what is worth keeping (Qwen Code's ``extract.ts``).

After each answered turn the engine calls :meth:`Extractor.schedule` with
the session id and the turn's captured parent request (the agent's ``ParentRequest``).

Scheduling (as ``MemoryManager.scheduleExtract``):

* a turn whose model already wrote project memory — a ``write_file``,
  ``edit``, ``replace`` or ``create_file`` call whose path is inside the
  project memory root, or a ``save_memory`` call — is skipped
  (``memory_tool``): extracting again would duplicate what it saved. Only
  the latest turn is looked at (from its user prompt on), so one manual
  save does not silence extraction for the rest of the session;
* one run per project at a time. A request made while one runs waits as
  the single trailing request; a newer request replaces it, and the
  replaced one resolves as ``superseded``.

A run (as ``runAutoMemoryExtract``, ``extractionAgentPlanner.ts``): the cursor (``extract-cursor.json``) says how
much of this session's history was already processed — only for the same
session, and reset to 0 when the history shrank (compression), or new
messages would be skipped forever. With no new non-empty user message the
cursor moves to the end and nothing runs. Otherwise a fork of the parent
turn gets the task (both memory roots, the existing memories with their
``current=`` text cut at 280 characters, read first then write, ``pinned/``
is read-only), read tools, a read-only shell when the chat declares one,
and ``write_file``/``edit`` that write through the memory store, under the
memory permission rule, for 5 turns / 2 minutes. Touched topics come from
the written paths (the root must be followed by ``/``, then a topic
directory). With topics touched, ``meta.json`` is bumped and the indexes
rebuilt: a project index failure fails the run (the cursor stays, so the
run is retried), a user index failure only warns. The cursor then moves to
the end when the fork touched anything or used a tool, else stays.

Three departures from Qwen Code's task. The fork may write only the
project memory root: user-scope memories appear in every other project's
prompt, and this run learns from text the repository can control, so a
user memory is saved only by the user (``save_memory`` with
``scope: global`` outside plan mode, ``qwen-lsp memory remember``); the
task says user facts go under the project's ``user/`` folder. Qwen Code runs this fork with its
own system prompt; we keep the parent's (``fork.py`` explains why: the
prompt cache), so the extraction rules travel in the task message. And
Qwen Code asks the model to edit ``MEMORY.md`` itself; our store rebuilds
every index from the files after each write and refuses hand-written
indexes, so the task says so instead of wasting a turn on a refused write.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, Protocol

from ..llm.content import INJECTED_PREFIXES, Content
from .forking import PATH_KEYS, MemoryForkRunner, ParentTurn
from .paths import realpath_nearest_existing
from .meta import iso, read_cursor, update_meta, write_cursor
from .model import SCOPES, TOPICS, MemoryDoc, Scope, Topic

log = logging.getLogger(__name__)

MAX_TURNS = 5
MAX_SECONDS = 2 * 60.0
MAX_TOPIC_SUMMARY_CHARS = 280
MEMORY_WRITE_TOOLS = frozenset({"write_file", "edit", "replace", "create_file"})
SAVE_MEMORY_TOOL = "save_memory"
OPEN_CALL_NOTE = "Background extraction started."

ExtractStatus = Literal["updated", "noop", "skipped", "failed", "cancelled"]
SkipReason = Literal["memory_tool", "superseded", "no_new_messages"]


class ExtractStore(Protocol):
    """The part of ``MemoryStore`` extraction and dream use."""

    def root(self, scope: Scope) -> Path: ...
    def state_dir(self) -> Path: ...
    def scan(self, scope: Scope) -> list[MemoryDoc]: ...
    def write_text(self, path: Path, content: str) -> Any: ...
    def rebuild_index(self, scope: Scope) -> bool: ...


@dataclass
class ExtractResult:
    status: ExtractStatus
    skipped_reason: SkipReason | None = None
    touched_topics: list[Topic] = field(default_factory=list)
    touched_project: bool = False
    touched_user: bool = False
    files_written: list[str] = field(default_factory=list)
    system_message: str | None = None
    """``Managed auto-memory updated: feedback.md, user.md`` when topics were touched."""
    error: str | None = None


# ----------------------------------------------------------------- pure helpers
def _is_real_user_text(content: Content) -> bool:
    """A user Content carrying text the user typed (not only reminders or function responses)."""
    if content.get("role") != "user":
        return False
    return any(
        "text" in p and not p.get("thought") and p["text"].strip() and not p["text"].lstrip().startswith(INJECTED_PREFIXES)
        for p in content.get("parts", [])
    )


def last_turn(history: Sequence[Content]) -> Sequence[Content]:
    """The latest turn: from the last user prompt to the end."""
    for index in range(len(history) - 1, -1, -1):
        if _is_real_user_text(history[index]):
            return history[index:]
    return history


def wrote_memory(turn: Sequence[Content], roots: Sequence[Path]) -> bool:
    """Whether the model saved memory itself in ``turn``: a ``save_memory`` call, or a write into one of ``roots``
    (the memory folders, as Qwen Code 0.24.4's ``partWritesToMemory``) — counted only when it succeeded.

    0.24.4 counts the call even when it was refused (declined, or outside what the chat may write),
    so a refused "remember this" loses the turn's extraction too; here a call whose function
    response is an error does not count, and extraction still runs.
    """
    real_roots = [realpath_nearest_existing(root) for root in roots]
    failed = {
        part["functionResponse"].get("id")
        for content in turn
        for part in content.get("parts", [])
        if "functionResponse" in part and "error" in (part["functionResponse"].get("response") or {})
    }
    for content in turn:
        for part in content.get("parts", []):
            call = part.get("functionCall")
            if call is None or call.get("id") in failed:
                continue
            if call["name"] == SAVE_MEMORY_TOOL:
                return True
            if call["name"] not in MEMORY_WRITE_TOOLS:
                continue
            args = call.get("args") or {}
            for key in PATH_KEYS:
                raw = args.get(key)
                if isinstance(raw, str) and os.path.isabs(raw.strip()) and "\x00" not in raw:
                    real = realpath_nearest_existing(Path(raw.strip()))
                    if any(real.is_relative_to(root) for root in real_roots):
                        return True
    return False


def has_new_user_message(history: Sequence[Content], start: int) -> bool:
    return any(_is_real_user_text(c) for c in history[start:])


def touched_topics(paths: Sequence[str], project_root: Path, user_root: Path) -> tuple[list[Topic], bool, bool]:
    """Qwen Code's ``touchedTopicsFromFilePaths``: topics and the two scope flags from written paths.

    Separators are canonicalised to ``/`` on both sides; a path is inside a
    root only when the root is followed by ``/``; the first segment after
    it must be one of the four topics.
    """

    def canon(value: str) -> str:
        return value.replace("\\", "/")

    project, user = canon(str(project_root)), canon(str(user_root))
    topics: list[Topic] = []
    in_project = in_user = False
    for raw in paths:
        path = canon(raw)
        if path.startswith(project) and path[len(project) : len(project) + 1] == "/":
            in_project, rest = True, path[len(project) + 1 :]
        elif path.startswith(user) and path[len(user) : len(user) + 1] == "/":
            in_user, rest = True, path[len(user) + 1 :]
        else:
            continue
        segment = rest.split("/", 1)[0]
        for topic in TOPICS:
            if segment == topic and topic not in topics:
                topics.append(topic)
    return topics, in_project, in_user


def system_message(topics: Sequence[Topic]) -> str | None:
    return f"Managed auto-memory updated: {', '.join(f'{t}.md' for t in topics)}" if topics else None


def _cut(text: str, limit: int) -> str:
    normalized = " ".join(text.split())
    return normalized if len(normalized) <= limit else normalized[:limit].rstrip() + "…"


def existing_memories_block(user_docs: Sequence[MemoryDoc], project_docs: Sequence[MemoryDoc]) -> str:
    def render(doc: MemoryDoc, scope: str) -> str:
        body = _cut("" if doc.body == "_No entries yet._" else doc.body, MAX_TOPIC_SUMMARY_CHARS)
        return "\n".join(
            [
                f"- [{doc.title}]({doc.relative_path}) — {doc.description or '(no description)'}",
                f"  scope={scope}",
                f"  topic={doc.type}",
                f"  path={doc.path}",
                f"  current={body or '(empty)'}",
            ]
        )

    return "\n\n".join([*(render(d, "user") for d in user_docs), *(render(d, "project") for d in project_docs)])


def extraction_task(project_root: Path, user_root: Path, existing: str) -> str:
    """The fork's task message: the extraction rules (no system prompt of its own) and the job."""
    return "\n".join(
        [
            "You are now the background memory extractor for this conversation. Do not answer the user; "
            "update persistent memory from the conversation above, then stop.",
            "",
            "Rules:",
            "- Save only durable facts the user stated: who they are, how they want you to work, facts about "
            "the project, where to find things. Ignore temporary, session-only, speculative or question content.",
            "- If the user explicitly asked you to remember something durable, keep it.",
            "- Follow the memory types, their scopes and the what-not-to-save list in your system instructions.",
            "- One memory per file, with `name`, `description` (one line: it decides future recall) and `type` "
            "frontmatter, then the fact, a `**Why:**` line and a `**How to apply:**` line.",
            "- Work only from the conversation above and the existing memory files: do not inspect repository "
            "code, git history or unrelated files.",
            "- If nothing durable should be saved, change no files.",
            "",
            "Memory has TWO directories; this background run may write only the project one:",
            f"- USER memory (across projects: who the user is): `{user_root}` (read-only here)",
            f"- PROJECT memory (this project only): `{project_root}`; save facts of every type here, "
            "under the type's folder (`user/` for who the user is).",
            "",
            "Tools in this run: `read_file`, `grep_search`, `glob`, `list_directory` (and a read-only "
            "`run_shell_command` when this chat has one), and `write_file`/`edit` for paths inside the project memory directory. "
            "Files under `pinned/` are read-only.",
            "- Your turn budget is small. `edit` needs the file's current text, so first issue every read you "
            "need in one batch, then every `write_file`/`edit` in one batch. Do not interleave reads and writes.",
            "- Prefer updating an existing memory over creating a duplicate; check both directories first.",
            "- Keep each memory under `user/`, `feedback/`, `project/` or `reference/` in the chosen directory.",
            "- Each directory's `MEMORY.md` index (one line per memory: `- [Title](relative/path.md) — hook`) "
            "is rebuilt from the files automatically after every write; do not write it yourself. Put the "
            "content in the memory file and make its `name` and `description` a good index line.",
            "",
            "## Existing memory files (both directories)",
            "",
            existing or "(none yet)",
        ]
    )


# ----------------------------------------------------------------- the scheduler
@dataclass
class _Request:
    session_id: str
    parent: ParentTurn
    future: asyncio.Future[ExtractResult]


class Extractor:
    """Extraction for one project; see the module doc. Create one per project and keep it."""

    def __init__(
        self,
        store: ExtractStore,
        runner: MemoryForkRunner,
        *,
        workspace_root: Path,
        max_turns: int = MAX_TURNS,
        max_seconds: float = MAX_SECONDS,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.store = store
        self._runner = runner
        self._workspace = workspace_root
        self._max_turns = max_turns
        self._max_seconds = max_seconds
        self._clock = clock
        self._running: asyncio.Task[None] | None = None
        self._queued: _Request | None = None
        self._cancel = asyncio.Event()

    @property
    def busy(self) -> bool:
        return self._running is not None and not self._running.done()

    def schedule(self, session_id: str, parent: ParentTurn) -> asyncio.Future[ExtractResult]:
        """Start (or queue) extraction for the turn ``parent`` captured; the future resolves with its result."""
        future: asyncio.Future[ExtractResult] = asyncio.get_running_loop().create_future()
        if wrote_memory(last_turn(parent.history), [self.store.root(scope) for scope in SCOPES]):
            future.set_result(ExtractResult("skipped", "memory_tool"))
            return future
        request = _Request(session_id, parent, future)
        if self.busy:
            if self._queued is not None and not self._queued.future.done():
                self._queued.future.set_result(ExtractResult("skipped", "superseded"))
            self._queued = request
            return future
        self._running = asyncio.create_task(self._serve(request), name="memory-extract")
        return future

    def cancel(self) -> None:
        """Stop the running extraction (it resolves ``cancelled``) and drop the queued one."""
        self._cancel.set()
        if self._queued is not None and not self._queued.future.done():
            self._queued.future.set_result(ExtractResult("cancelled"))
        self._queued = None

    async def drain(self) -> None:
        """Wait until nothing runs or waits."""
        while self._running is not None and not self._running.done():
            await asyncio.shield(self._running)

    async def _serve(self, request: _Request) -> None:
        current: _Request | None = request
        while current is not None:
            self._cancel = asyncio.Event()  # a cancel stops the run it was meant for, not the next one
            try:
                result = await self.run(current.session_id, current.parent)
            except Exception as exc:  # the future carries the failure; the scheduler keeps serving
                log.exception("memory extraction failed")
                result = ExtractResult("failed", error=str(exc))
            if not current.future.done():
                current.future.set_result(result)
            current, self._queued = self._queued, None

    # ----------------------------------------------------------------- one run
    async def run(self, session_id: str, parent: ParentTurn) -> ExtractResult:
        """One extraction now (no queueing); see the module doc for the steps."""
        store = self.store
        state_dir = store.state_dir()
        history = parent.history
        cursor = await asyncio.to_thread(read_cursor, state_dir)
        offset = cursor.get("processedOffset")
        start = offset if cursor.get("sessionId") == session_id and isinstance(offset, int) and offset >= 0 else 0
        if start > len(history):
            start = 0
        if not has_new_user_message(history, start):
            await asyncio.to_thread(write_cursor, state_dir, session_id, len(history), self._clock())
            return ExtractResult("skipped", "no_new_messages")

        project_root, user_root = store.root("project"), store.root("user")
        user_docs, project_docs = await asyncio.to_thread(self._scan_both)
        task = extraction_task(project_root, user_root, existing_memories_block(user_docs, project_docs))
        fork = await self._runner(
            parent,
            task,
            writable=[project_root],  # user scope reaches every project's prompt: only the user saves there
            team=store.root("team"),
            read_roots=[project_root, user_root],
            max_turns=self._max_turns,
            max_seconds=self._max_seconds,
            cancel=self._cancel,
            open_call_note=OPEN_CALL_NOTE,
            protected=[user_root],  # even through a project memory folder linked there
        )
        if fork.status != "completed":
            return ExtractResult("cancelled" if fork.status == "cancelled" else "failed", files_written=fork.files_written, error=fork.reason)
        topics, in_project, in_user = touched_topics(fork.files_written, project_root, user_root)
        now = self._clock()
        if topics:
            await asyncio.to_thread(
                update_meta,
                state_dir,
                now,
                lastExtractionAt=iso(now),
                lastExtractionSessionId=session_id,
                lastExtractionTouchedTopics=list(topics),
                lastExtractionStatus="updated",
            )
            await self._rebuild(in_project, in_user)
        advanced = len(history) if topics or fork.used_tools else start
        await asyncio.to_thread(write_cursor, state_dir, session_id, advanced, now)
        return ExtractResult(
            "updated" if topics else "noop",
            touched_topics=topics,
            touched_project=in_project,
            touched_user=in_user,
            files_written=fork.files_written,
            system_message=system_message(topics),
        )

    def _scan_both(self) -> tuple[list[MemoryDoc], list[MemoryDoc]]:
        try:
            user_docs = self.store.scan("user")
        except OSError as exc:  # the user scope is best-effort; the project's view must not depend on it
            log.warning("user memory scan failed; extraction sees project memories only: %s", exc)
            user_docs = []
        return user_docs, self.store.scan("project")

    async def _rebuild(self, project: bool, user: bool) -> None:
        if project:
            await asyncio.to_thread(self.store.rebuild_index, "project")  # a failure propagates: the cursor stays
        if user:
            try:
                await asyncio.to_thread(self.store.rebuild_index, "user")
            except Exception as exc:
                log.warning("user memory index rebuild failed: %s", exc)
