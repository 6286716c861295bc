"""Reading session JSONL back: records, and the history to resume (the list is ``listing``).

The files are shared with the Qwen Code CLI and may have been cut short by a
crash (a torn last line), hand-edited, or written by a newer version with
record types we do not know. So reading never fails as a whole: every line
that is not a JSON object, is too long (``lines.MAX_LINE_BYTES``, never
loaded), nests too deep, or has content of the wrong shape
(``records.check_record``) is skipped and reported, and everything else is
kept (docs/reliability.md).

Resume follows Qwen Code's seed-era ``buildApiHistoryFromConversation``:
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
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TypeGuard

from ..llm.content import Content
from .failures import recorded_failure
from .files import is_valid_session_id, session_path
from .lines import MAX_LINE_BYTES, RawLine, raw_lines
from .records import MAX_NESTING, check_record

log = logging.getLogger(__name__)


@dataclass
class ReadResult:
    """The records of one JSONL file, and the lines that had to be skipped."""

    records: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[tuple[int, str]] = field(default_factory=list)
    """``(1-based line number, reason)`` for every line that was not kept."""


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


def record_from_line(raw: bytes) -> dict[str, Any] | None:
    """One line's record, checked (``records.check_record``); None when it is not a usable one.

    The quiet path for readers of partial windows (``listing``), where a
    line cut by the window edge is expected; ``read_records`` reports why.
    """
    record, _reason = _parse_line(raw)
    if record is None or not check_record(record)[0]:
        return None
    return record


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

    As Qwen Code's ``reconstructHistory``: the leaf is the last record in
    file order that has a ``uuid``; the walk follows ``parentUuid`` as the
    *first* record of each uuid gives it; records sharing one uuid are one
    message (:func:`_aggregate`), which is how a streamed answer saved in
    pieces (``sessions.draft``) reads back as one answer. When a link points
    at a record we do not have (a line that was skipped as unreadable), the
    walk continues with the record just before the current one in file
    order, so one damaged line loses only itself. Records without a
    ``uuid`` take no part in the chain; with no uuids at all the records are
    returned as they are.
    """
    positions: dict[str, list[int]] = {}
    leaf: int | None = None
    for at, record in enumerate(records):
        uuid = record.get("uuid")
        if isinstance(uuid, str):
            positions.setdefault(uuid, []).append(at)
            leaf = at
    if leaf is None:
        return list(records)

    pos: int | None = positions[records[leaf]["uuid"]][0]
    chain: list[int] = []
    seen: set[int] = set()
    while pos is not None and pos not in seen:
        seen.add(pos)
        chain.append(pos)
        parent = records[pos].get("parentUuid")
        if parent is None:
            break
        parent_at = positions.get(parent) if isinstance(parent, str) else None
        pos = parent_at[0] if parent_at is not None else _previous_with_uuid(records, pos)
    chain.reverse()
    return [_aggregate([records[p] for p in positions[records[p]["uuid"]]]) for p in chain]


def _aggregate(group: list[dict[str, Any]]) -> dict[str, Any]:
    """Records sharing one uuid as one, as Qwen Code's ``aggregateRecords`` merges them.

    The first record is the base; later ones append their message parts,
    replace ``usageMetadata`` and move ``timestamp`` forward. A group of one
    is returned as it is (no copy), so the common case costs nothing.
    """
    if len(group) == 1:
        return group[0]
    base = dict(group[0])
    for record in group[1:]:
        message = record.get("message")
        if is_content(message):
            current = base.get("message")
            if is_content(current):
                base["message"] = {"role": current["role"], "parts": [*current["parts"], *message["parts"]]}
            else:
                base["message"] = message
        if "usageMetadata" in record:
            base["usageMetadata"] = record["usageMetadata"]
        if record.get("model") and not base.get("model"):
            base["model"] = record["model"]
        stamp = record.get("timestamp")
        if isinstance(stamp, str) and stamp > str(base.get("timestamp", "")):
            base["timestamp"] = stamp
    return base


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


def is_content(value: Any) -> TypeGuard[Content]:
    return isinstance(value, dict) and isinstance(value.get("parts"), list) and value.get("role") in ("user", "model")


def build_history(records: Sequence[dict[str, Any]], *, strip_thoughts: bool = False) -> list[Content]:
    """The model-facing history a resumed session continues from (``buildApiHistoryFromConversation``).

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
            history = [copy.deepcopy(c) for c in compressed if is_content(c)]
            start = pos + 1
            break

    for record in branch[start:]:
        if record.get("type") == "system":
            continue
        message = record.get("message")
        if not is_content(message):
            continue
        message = copy.deepcopy(message)
        if record.get("subtype") == "mid_turn_user_message" and history and history[-1]["role"] == "user":
            history[-1]["parts"].extend(message["parts"])
        else:
            history.append(message)

    if strip_thoughts:
        history = _without_thoughts(history)
    return history


def build_conversation(records: Sequence[dict[str, Any]]) -> list[tuple[Content | None, dict[str, Any]]]:
    """Every message of the active branch as it was recorded, compression checkpoints ignored.

    What the user saw (and sees again on resume), as opposed to
    :func:`build_history`, which is what the model continues from: after a
    compression the model has a summary, the person still has the whole
    conversation (the Qwen Code CLI shows it the same way). Each message comes
    with its record, whose ``interrupted`` mark (``sessions.recording``) and
    ``toolCallResult`` say how it looked: a stopped answer reopens as stopped.
    A failed model request's record (``sessions.failures``) comes with no
    Content, in its place among the messages, so the failed turn reopens
    with its error.
    """
    conversation: list[tuple[Content | None, dict[str, Any]]] = []
    for r in active_branch(records):
        if r.get("type") != "system" and is_content(r.get("message")):
            conversation.append((copy.deepcopy(r["message"]), r))
        elif recorded_failure(r) is not None:
            conversation.append((None, r))
    return conversation


def _without_thoughts(history: list[Content]) -> list[Content]:
    kept: list[Content] = []
    for content in history:
        parts = [p for p in content["parts"] if not (isinstance(p, dict) and p.get("thought"))]
        if parts:
            kept.append({**content, "parts": parts})
    return kept


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
