"""``meta.json`` and ``extract-cursor.json``: the bookkeeping files in a project's memory state dir.

Both are written as Qwen Code writes them — ``JSON.stringify(value, null,
2)`` plus a newline, timestamps as ``Date.toISOString()`` — so either tool
can read what the other recorded (Qwen Code's ``memory/paths.ts``, ``extract.ts``, ``dream.ts``). Writes are
atomic; a file that is missing or unreadable counts as empty, because
bookkeeping must never stop memory from working.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..files.reading import atomic_write_text

log = logging.getLogger(__name__)

META_FILE = "meta.json"
CURSOR_FILE = "extract-cursor.json"
MAX_STATE_FILE_BYTES = 1_000_000


def iso(moment: datetime) -> str:
    """JavaScript's ``toISOString``: UTC, milliseconds, ``Z``."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.astimezone(UTC).microsecond // 1000:03d}Z"


def parse_iso(value: object) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def js_json(value: Mapping[str, Any]) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def read_json(path: Path) -> dict[str, Any]:
    """The object in ``path``, or ``{}`` when it is missing, too large or not a JSON object."""
    try:
        if path.stat().st_size > MAX_STATE_FILE_BYTES:
            log.warning("%s is larger than %d bytes; ignored", path, MAX_STATE_FILE_BYTES)
            return {}
        value = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        log.warning("unreadable %s (%s); treated as empty", path, exc)
        return {}
    return value if isinstance(value, dict) else {}


def update_meta(state_dir: Path, now: datetime, **fields: Any) -> dict[str, Any]:
    """Merge ``fields`` into ``meta.json`` (created with ``version``/``createdAt`` when missing); returns it."""
    path = state_dir / META_FILE
    meta = read_json(path)
    meta.setdefault("version", 1)
    meta.setdefault("createdAt", iso(now))
    meta["updatedAt"] = iso(now)
    meta.update(fields)
    atomic_write_text(path, js_json(meta))
    return meta


def read_cursor(state_dir: Path) -> dict[str, Any]:
    return read_json(state_dir / CURSOR_FILE)


def write_cursor(state_dir: Path, session_id: str, offset: int, now: datetime) -> None:
    """``{sessionId, processedOffset, updatedAt}``, 2-space JSON and a newline (as ``runAutoMemoryExtract``)."""
    atomic_write_text(state_dir / CURSOR_FILE, js_json({"sessionId": session_id, "processedOffset": offset, "updatedAt": iso(now)}))
