"""Reading session JSONL back: records, the session list, and the history to resume.

The files are shared with the Qwen Code CLI and may have been cut short by a
crash (a torn last line), hand-edited, or written by a newer version with
record types we do not know. So reading never fails as a whole: every line
that is not a JSON object is skipped and reported, and everything else is
kept (design §6).

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
from typing import Any

from qwen_lsp.files import read_bytes
from qwen_lsp.llm.content import Content, visible_text
from qwen_lsp.paths import chats_dir
from qwen_lsp.sessions.files import SESSION_SUFFIX, is_valid_session_id, session_path
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
    """Every JSON object line of ``path``, in file order.

    A missing file reads as empty. A torn last line (no trailing newline and
    not valid JSON) is the expected aftermath of a crash mid-write; any other
    bad line — invalid UTF-8, invalid JSON, a non-object — is skipped with a
    warning.
    """
    result = ReadResult()
    try:
        data = read_bytes(path)
    except FileNotFoundError:
        return result
    except OSError as exc:
        log.warning("Cannot read session file %s: %s", path, exc)
        result.skipped.append((0, f"unreadable file: {exc.strerror or exc}"))
        return result

    lines = data.split(b"\n")
    last_index = len(lines) - 1  # after a trailing newline this is b"" and harmless
    for index, raw in enumerate(lines):
        line_no = index + 1
        if not raw.strip():
            continue
        record, reason = _parse_line(raw)
        if record is not None:
            result.records.append(record)
            continue
        if index == last_index and reason.startswith("invalid JSON"):
            reason = "torn last line (incomplete write)"
            log.info("Session file %s: ignoring a torn last line %d", path, line_no)
        else:
            log.warning("Session file %s: skipping line %d: %s", path, line_no, reason)
        result.skipped.append((line_no, reason))
    return result


def _parse_line(raw: bytes) -> tuple[dict[str, Any] | None, str]:
    """The JSON object on one line, or None and why it is not one."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, f"invalid UTF-8 at byte {exc.start}"
    try:
        value = json.loads(text)
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
    for pos, record in enumerate(records):
        uuid = record.get("uuid")
        if isinstance(uuid, str):
            positions.setdefault(uuid, pos)
    if not positions:
        return list(records)

    pos = max(positions.values())
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


def _is_content(value: Any) -> bool:
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


def parse_timestamp(value: Any) -> datetime | None:
    """A record timestamp (JS ``toISOString()``) as an aware UTC datetime."""
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed.astimezone(UTC) if parsed.tzinfo else parsed.replace(tzinfo=UTC)


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
        summary = summarize(path)
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
