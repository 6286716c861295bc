"""Checking one session record before anything else looks at it.

Session files are read back by listing, resume, chat and the context
inspector, and every one of those used to trust the JSON: a ``timestamp`` of
``0001-01-01T00:00:00+01:00`` raised ``OverflowError`` when converted to UTC,
``parts: [123]`` or ``functionCall: "x"`` raised deep inside the request
builder, and a record nested a few hundred levels deep made ``deepcopy``
overflow the stack. One such line broke the list of every session.

So the reader runs :func:`check_record` on each parsed line: a record whose
content the engine would use (``message``, a compression checkpoint's
``compressedHistory``) must have the shape ``llm.content`` relies on, or the
record is skipped; an unusable ``timestamp`` is dropped from a record that
is otherwise kept. Either way the reason is reported, never raised.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

MAX_NESTING = 100
"""Deeper JSON than any real record; ``deepcopy`` and the JSON encoder recurse per level."""


def check_record(record: dict[str, Any]) -> tuple[bool, list[str]]:
    """Whether to keep ``record`` (cleaned in place), and the problems found in it."""
    if _depth_exceeds(record, MAX_NESTING):
        return False, [f"nested deeper than {MAX_NESTING} levels"]
    problems: list[str] = []
    if "timestamp" in record and parse_timestamp(record["timestamp"]) is None:
        problems.append(f"timestamp {str(record.pop('timestamp'))[:40]!r} is not a usable date; ignored")
    if "message" in record:
        problem = content_problem(record["message"])
        if problem:
            return False, [*problems, f"message: {problem}"]
    payload = record.get("systemPayload")
    if isinstance(payload, dict) and "compressedHistory" in payload:
        history = payload["compressedHistory"]
        if not isinstance(history, list):
            return False, [*problems, "systemPayload.compressedHistory is not a list"]
        for index, content in enumerate(history):
            problem = content_problem(content)
            if problem:
                return False, [*problems, f"systemPayload.compressedHistory[{index}]: {problem}"]
    return True, problems


def parse_timestamp(value: Any) -> datetime | None:
    """A record timestamp (JS ``toISOString()``) as an aware UTC datetime; None when unusable.

    ``OverflowError`` is caught too: a date at the edge of the calendar with
    an offset (year 1 at +01:00) parses, then cannot be moved to UTC.
    """
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value)
        return parsed.astimezone(UTC) if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    except (ValueError, OverflowError):
        return None


def content_problem(value: Any) -> str | None:
    """Why ``value`` is not a Content the engine can send, or None when it is one."""
    if not isinstance(value, dict):
        return "not an object"
    if value.get("role") not in ("user", "model"):
        return "role is not 'user' or 'model'"
    parts = value.get("parts")
    if not isinstance(parts, list):
        return "parts is not a list"
    for index, part in enumerate(parts):
        problem = _part_problem(part)
        if problem:
            return f"parts[{index}]: {problem}"
    return None


def _part_problem(part: Any) -> str | None:
    if not isinstance(part, dict):
        return "not an object"
    if "text" in part and not isinstance(part["text"], str):
        return "text is not a string"
    for key, body in (("functionCall", "args"), ("functionResponse", None)):
        if key not in part:
            continue
        value = part[key]
        if not isinstance(value, dict):
            return f"{key} is not an object"
        for name in ("id", "name"):
            if name in value and not isinstance(value[name], str):
                return f"{key}.{name} is not a string"
        if body and value.get(body) is not None and not isinstance(value[body], dict):
            return f"{key}.{body} is not an object"
    return None


def _depth_exceeds(value: Any, limit: int) -> bool:
    """True when containers nest deeper than ``limit`` (iterative: the check itself cannot overflow)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        if isinstance(item, dict):
            stack.extend((child, depth + 1) for child in item.values() if isinstance(child, (dict, list)))
        elif isinstance(item, list):
            stack.extend((child, depth + 1) for child in item if isinstance(child, (dict, list)))
    return False
