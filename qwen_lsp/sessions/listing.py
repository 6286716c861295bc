"""The session list (``qwen/sessions/list``), built from a bounded read of each file.

Sessions grow without limit (a long agentic session is megabytes of tool
output), and the list opens every one of them, so a row is made from two
windows, never the whole file: the first :data:`HEAD_BYTES` (the first
prompt; Qwen Code 0.24.4 reads its first 10 records for the same) and the
last :data:`TAIL_BYTES` (the latest records: timestamp, title, recent
dialog; the CLI's 64 KiB ``LITE_READ_BUF_SIZE``). A file no larger than the
two windows together is read whole. Either way only complete lines are
parsed: the window edges fall mid-record, and whatever lies between the
windows (a torn line, a 1 GB attachment, garbage) is never looked at.

What each field is then:

* ``title`` — the last ``custom_title`` (a name the user gave, or the CLI's
  generated one), looked for in the tail, then the head; else the recap
  title of the tail's dialog (``recap.recap_title``); else the first prompt
  in the head.
* ``updated_at`` — the timestamp of the last record read; the file's mtime
  when none has one.
* ``message_count`` — user and assistant records carrying a message (tool
  results and system records are not counted; records sharing a uuid count once). Exact when the file was
  read whole; for a larger file it is an estimate: the count found in the
  windows, scaled by file size over the bytes of the lines parsed (never
  less than the count found). Qwen Code drops the count from its list for
  the same cost reason; we keep the field, as the editor shows it.
* ``answered`` — judged on all records when read whole. A file too large
  for that is taken as answered: hiding a session with that much content
  would cost more than listing one whose every turn failed.

Rows are cached per file on ``(inode, size, mtime, ctime)``: session files
only grow, so an unchanged key means an unchanged row.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..files.reading import open_regular
from ..llm.content import Content
from ..files.paths import chats_dir
from .files import SESSION_SUFFIX, is_valid_session_id
from .recap import first_user_text, recap_title, trim_title
from .reader import is_content, record_from_line
from .records import parse_timestamp
from .visibility import was_answered

log = logging.getLogger(__name__)

HEAD_BYTES = 64 << 10
TAIL_BYTES = 64 << 10


@dataclass(frozen=True)
class SessionSummary:
    """One row of the session list (see the module docstring for what each field means)."""

    session_id: str
    title: str
    updated_at: datetime
    """UTC."""
    message_count: int
    path: Path
    answered: bool = True
    """False when every turn failed before an answer: such sessions are not listed (see ``visibility``)."""
    count_is_exact: bool = True
    """False when ``message_count`` is estimated from the windows of a large file."""


@dataclass
class _Window:
    records: list[dict[str, Any]]
    parsed_bytes: int
    """Bytes of the complete lines looked at (the base of the count estimate)."""


def summarize(path: Path) -> SessionSummary | None:
    """The list row for one session file; None when the windows hold no record."""
    with open_regular(path) as fh:
        size = os.fstat(fh.fileno()).st_size
        whole = size <= HEAD_BYTES + TAIL_BYTES
        if whole:
            head, tail = _parse(fh.read(size)), _Window([], 0)
        else:
            chunk = fh.read(HEAD_BYTES)
            head = _parse(chunk[: chunk.rfind(b"\n") + 1])
            fh.seek(size - TAIL_BYTES - 1)  # one byte early: a newline there means the window starts on a line
            chunk = fh.read(TAIL_BYTES + 1)
            tail = _parse(chunk[chunk.find(b"\n") + 1 :] if b"\n" in chunk else b"")
    records = head.records + tail.records
    if not records:
        return None
    return SessionSummary(
        session_id=path.name[: -len(SESSION_SUFFIX)],
        title=_title(head.records, head.records if whole else tail.records),
        updated_at=_updated_at(records, path),
        message_count=_message_count(head, tail, size, whole),
        path=path,
        answered=was_answered(records) if whole else True,
        count_is_exact=whole,
    )


def _parse(data: bytes) -> _Window:
    """The records on the lines of ``data``; lines that are not a usable record (a torn last one) are dropped quietly."""
    records: list[dict[str, Any]] = []
    parsed = 0
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    for line in lines:
        parsed += len(line) + 1
        if not line.strip():
            continue
        record = record_from_line(line)
        if record is not None:
            records.append(record)
    return _Window(records, parsed)


def _title(head: list[dict[str, Any]], recent: list[dict[str, Any]]) -> str:
    for records in (recent, head):
        for record in reversed(records):
            payload = record.get("systemPayload")
            if record.get("subtype") == "custom_title" and isinstance(payload, dict):
                title = payload.get("customTitle")
                if isinstance(title, str) and title.strip():
                    return trim_title(title)
    return recap_title(_dialog_messages(recent)) or first_user_text(_dialog_messages(head))


def _dialog_messages(records: list[dict[str, Any]]) -> list[Content]:
    """Messages of what the user typed and the model answered, in order.

    User records with a subtype other than ``mid_turn_user_message``
    (notifications, cron prompts, slash commands) are not the person
    talking; ``tool_result`` records hold only function responses.
    """
    out: list[Content] = []
    for record in records:
        kind, subtype, message = record.get("type"), record.get("subtype"), record.get("message")
        if not is_content(message):
            continue
        if kind == "assistant" or (kind == "user" and subtype in (None, "mid_turn_user_message")):
            out.append(message)
    return out


def _updated_at(records: list[dict[str, Any]], path: Path) -> datetime:
    for record in reversed(records):
        stamp = parse_timestamp(record.get("timestamp"))
        if stamp is not None:
            return stamp
    try:
        return datetime.fromtimestamp(path.stat().st_mtime, UTC)
    except OSError:
        return datetime.fromtimestamp(0, UTC)


def _message_count(head: _Window, tail: _Window, size: int, whole: bool) -> int:
    # Records sharing a uuid are one message (the pieces of a streamed answer, ``draft``), as Qwen Code counts them.
    found = len({r.get("uuid") if isinstance(r.get("uuid"), str) else id(r) for r in head.records + tail.records if _is_message(r)})
    parsed = head.parsed_bytes + tail.parsed_bytes
    if whole or parsed == 0:
        return found
    return max(found, round(found * size / parsed))


def _is_message(record: dict[str, Any]) -> bool:
    return record.get("type") in ("user", "assistant") and is_content(record.get("message"))


_MAX_CACHED_SUMMARIES = 4096
_summary_cache: dict[Path, tuple[tuple[int, ...], SessionSummary | None]] = {}


def _cached_summary(path: Path) -> SessionSummary | None:
    """``summarize(path)``, reused while the file's inode, size and times are unchanged."""
    st = path.stat()
    key = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    hit = _summary_cache.get(path)
    if hit is not None and hit[0] == key:
        return hit[1]
    summary = summarize(path)
    if len(_summary_cache) >= _MAX_CACHED_SUMMARIES:
        _summary_cache.clear()
    _summary_cache[path] = (key, summary)
    return summary


def list_sessions(cwd: str | os.PathLike[str]) -> list[SessionSummary]:
    """Every readable, answered session of ``cwd``, newest first.

    Files whose name is not a session id, and files with no valid record
    in their windows, are left out (and logged), never raised.
    """
    directory = chats_dir(cwd)
    try:
        candidates = sorted(directory.glob(f"*{SESSION_SUFFIX}"))
    except OSError as exc:
        log.warning("Cannot list sessions in %s: %s", directory, exc)
        return []
    summaries: list[SessionSummary] = []
    for path in candidates:
        if not path.is_file() or not is_valid_session_id(path.name[: -len(SESSION_SUFFIX)]):
            log.debug("Not a session file: %s", path)
            continue
        try:
            summary = _cached_summary(path)
        except Exception:  # one file must never take the whole list down
            log.exception("Cannot summarize session file %s; not listed", path)
            continue
        if summary is None:
            log.warning("Session file %s has no readable records; not listed", path)
            continue
        if not summary.answered:
            log.debug("Session %s was never answered; not listed", summary.session_id)
            continue
        summaries.append(summary)
    summaries.sort(key=lambda s: (s.updated_at, s.session_id), reverse=True)
    return summaries
