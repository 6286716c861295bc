"""Reading session JSONL back: records, the session list, and the history to resume.

The files are shared with the Qwen Code CLI and may have been cut short by a
crash (a torn last line), hand-edited, or written by a newer version with
record types we do not know. So reading never fails as a whole: every line
that is not a JSON object, is too long (``lines.MAX_LINE_BYTES``, never
loaded), nests too deep, or has content of the wrong shape
(``records.check_record``) is skipped and reported, and everything else is
kept (design §6). One bad file is left out of the list, never the list.

Resume follows spec §13.2 (seed-era ``buildApiHistoryFromConversation``):
the last ``chat_compression`` checkpoint that carries ``compressedHistory``
is the base, later non-system messages are appended, and a
``mid_turn_user_message`` merges into the user turn before it. Before that,
the records are narrowed to the active branch by following ``parentUuid``
back from the last record, as Qwen Code's ``reconstructHistory`` does, so a
session the CLI rewound resumes on the branch the user kept.
"""

from __future__ import annotations

import copy
import json
import logging
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeGuard

from qwen_lsp.llm.content import Content, visible_text
from qwen_lsp.paths import chats_dir
from qwen_lsp.sessions.files import SESSION_SUFFIX, is_valid_session_id, session_path
from qwen_lsp.sessions.lines import MAX_LINE_BYTES, RawLine, raw_lines
from qwen_lsp.sessions.records import MAX_NESTING, check_record, parse_timestamp
from qwen_lsp.sessions.visibility import was_answered

log = logging.getLogger(__name__)

TITLE_MAX_CHARS = 80
_WHITESPACE = re.compile(r"\s+")


@dataclass
class ReadResult:
    """The records of one JSONL file, and the lines that had to be skipped."""

    records: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[tuple[int, str]] = field(default_factory=list)
    """``(1-based line number, reason)`` for every line that was not kept."""


@dataclass(frozen=True)
class SessionSummary:
    """One row of the session list (``qwen/sessions/list``)."""

    session_id: str
    title: str
    updated_at: datetime
    """Timestamp of the last record (UTC); the file's mtime when no record has one."""
    message_count: int
    """User and assistant messages (tool results and system records are not counted)."""
    path: Path
    answered: bool = True
    """False when every turn failed before an answer: such sessions are not listed (see ``visibility``)."""


def read_records(path: str | os.PathLike[str]) -> ReadResult:
    """Every usable record of ``path``, in file order.

    A missing file reads as empty. A torn last line (no trailing newline and
    not valid JSON) is the expected aftermath of a crash mid-write; any other
    bad line — too long, invalid UTF-8, invalid JSON, a non-object, a record
    of the wrong shape — is skipped with a warning.
    """
    result = ReadResult()
    try:
        for line in raw_lines(path):
            _read_line(path, line, result)
    except FileNotFoundError:
        return result
    except OSError as exc:
        log.warning("Cannot read session file %s: %s", path, exc)
        result.skipped.append((0, f"unreadable file: {exc.strerror or exc}"))
    return result


def _read_line(path: str | os.PathLike[str], line: RawLine, result: ReadResult) -> None:
    if line.data is None:
        reason = f"line of {line.size} bytes is longer than the {MAX_LINE_BYTES} byte limit; not read"
    elif not line.data.strip():
        return
    else:
        record, reason = _parse_line(line.data)
        if record is not None:
            keep, problems = check_record(record)
            for problem in problems:
                log.warning("Session file %s: line %d: %s", path, line.number, problem)
            if keep:
                result.records.append(record)
                return
            reason = problems[-1]
        elif not line.terminated and reason.startswith("invalid JSON"):
            log.info("Session file %s: ignoring a torn last line %d", path, line.number)
            result.skipped.append((line.number, "torn last line (incomplete write)"))
            return
    log.warning("Session file %s: skipping line %d: %s", path, line.number, reason)
    result.skipped.append((line.number, reason))


def _parse_line(raw: bytes) -> tuple[dict[str, Any] | None, str]:
    """The JSON object on one line, or None and why it is not one."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, f"invalid UTF-8 at byte {exc.start}"
    try:
        value = json.loads(text)
    except RecursionError:
        return None, f"nested deeper than {MAX_NESTING} levels"
    except ValueError as exc:
        return None, f"invalid JSON: {exc}"
    if not isinstance(value, dict):
        return None, "not a JSON object"
    return value, ""


def active_branch(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records on the path from the root to the last record, oldest first.

    Follows ``parentUuid`` links back from the last record that has a
    ``uuid``. When a link points at a record we do not have (a line that was
    skipped as unreadable), the walk continues with the record just before
    the current one in file order, so one damaged line loses only itself.
    Records without a ``uuid`` take no part in the chain; with no uuids at
    all the records are returned as they are.
    """
    positions: dict[str, int] = {}
    for at, record in enumerate(records):
        uuid = record.get("uuid")
        if isinstance(uuid, str):
            positions.setdefault(uuid, at)
    if not positions:
        return list(records)

    pos: int | None = max(positions.values())
    chain: list[int] = []
    seen: set[int] = set()
    while pos is not None and pos not in seen:
        seen.add(pos)
        chain.append(pos)
        parent = records[pos].get("parentUuid")
        if parent is None:
            break
        parent_pos = positions.get(parent) if isinstance(parent, str) else None
        pos = parent_pos if parent_pos is not None else _previous_with_uuid(records, pos)
    chain.reverse()
    return [records[p] for p in chain]


def _previous_with_uuid(records: Sequence[dict[str, Any]], pos: int) -> int | None:
    for prev in range(pos - 1, -1, -1):
        if isinstance(records[prev].get("uuid"), str):
            return prev
    return None


def _is_compression_checkpoint(record: dict[str, Any]) -> bool:
    payload = record.get("systemPayload")
    return (
        record.get("type") == "system"
        and record.get("subtype") == "chat_compression"
        and isinstance(payload, dict)
        and isinstance(payload.get("compressedHistory"), list)
    )


def _is_content(value: Any) -> TypeGuard[Content]:
    return isinstance(value, dict) and isinstance(value.get("parts"), list) and value.get("role") in ("user", "model")


def build_history(records: Sequence[dict[str, Any]], *, strip_thoughts: bool = False) -> list[Content]:
    """The model-facing history a resumed session continues from (spec §13.2).

    ``records`` are a file's records in order (``read_records(...).records``);
    the active branch is taken first. The result is a deep copy: callers may
    mutate it. With ``strip_thoughts`` thought parts are removed and contents
    left without parts are dropped.
    """
    branch = active_branch(records)
    start = 0
    history: list[Content] = []
    for pos in range(len(branch) - 1, -1, -1):
        if _is_compression_checkpoint(branch[pos]):
            compressed = branch[pos]["systemPayload"]["compressedHistory"]
            history = [copy.deepcopy(c) for c in compressed if _is_content(c)]
            start = pos + 1
            break

    for record in branch[start:]:
        if record.get("type") == "system":
            continue
        message = record.get("message")
        if not _is_content(message):
            continue
        message = copy.deepcopy(message)
        if record.get("subtype") == "mid_turn_user_message" and history and history[-1]["role"] == "user":
            history[-1]["parts"].extend(message["parts"])
        else:
            history.append(message)

    if strip_thoughts:
        history = _without_thoughts(history)
    return history


def _without_thoughts(history: list[Content]) -> list[Content]:
    kept: list[Content] = []
    for content in history:
        parts = [p for p in content["parts"] if not (isinstance(p, dict) and p.get("thought"))]
        if parts:
            kept.append({**content, "parts": parts})
    return kept


def session_title(records: Sequence[dict[str, Any]]) -> str:
    """The last ``custom_title`` if one was set, else the first user prompt, trimmed."""
    for record in reversed(records):
        payload = record.get("systemPayload")
        if record.get("subtype") == "custom_title" and isinstance(payload, dict):
            title = payload.get("customTitle")
            if isinstance(title, str) and title.strip():
                return _trim_title(title)
    for record in records:
        if record.get("type") == "user" and "subtype" not in record and _is_content(record.get("message")):
            text = visible_text(record["message"])
            if text.strip():
                return _trim_title(text)
    return ""


def _trim_title(text: str) -> str:
    flat = _WHITESPACE.sub(" ", text).strip()
    if len(flat) <= TITLE_MAX_CHARS:
        return flat
    return flat[: TITLE_MAX_CHARS - 1].rstrip() + "…"


def summarize(path: Path) -> SessionSummary | None:
    """The list row for one session file; None when it holds no records."""
    records = read_records(path).records
    if not records:
        return None
    updated_at = next((t for r in reversed(records) if (t := parse_timestamp(r.get("timestamp")))), None)
    if updated_at is None:
        try:
            updated_at = datetime.fromtimestamp(path.stat().st_mtime, UTC)
        except OSError:
            updated_at = datetime.fromtimestamp(0, UTC)
    return SessionSummary(
        session_id=path.name[: -len(SESSION_SUFFIX)],
        title=session_title(records),
        updated_at=updated_at,
        message_count=sum(
            1 for r in records if r.get("type") in ("user", "assistant") and _is_content(r.get("message"))
        ),
        path=path,
        answered=was_answered(records),
    )


_MAX_CACHED_SUMMARIES = 4096
_summary_cache: dict[Path, tuple[tuple[int, ...], SessionSummary | None]] = {}


def _cached_summary(path: Path) -> SessionSummary | None:
    """``summarize(path)``, reused while the file is unchanged.

    Session files only grow, so the same inode, size and times mean the same
    row: listing then costs one ``stat`` per file instead of a full read,
    which matters once a session holds a huge (skipped) line.
    """
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
    """Every readable session of ``cwd``, newest first.

    Files whose name is not a session id, and files with no valid record,
    are left out (and logged), never raised.
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


def delete_session(cwd: str | os.PathLike[str], session_id: str) -> bool:
    """Remove one session's JSONL. False when the id is invalid or no such session exists."""
    if not is_valid_session_id(session_id):
        log.warning("Refusing to delete session with invalid id %r", session_id)
        return False
    path = session_path(cwd, session_id)
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    except OSError as exc:
        log.warning("Cannot delete session file %s: %s", path, exc)
        return False
    return True
