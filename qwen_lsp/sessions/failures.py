"""A turn the model endpoint failed, kept in the session file so a reopened chat shows the same error.

Qwen Code 0.24.4 records every failed model request as a ``system`` record
of subtype ``ui_telemetry`` whose ``systemPayload.uiEvent`` is its
``ApiErrorEvent`` (``event.name: "qwen-code.api_error"``, ``error_message``,
``error_type``, ``status_code``, ``duration_ms``, ``model``, ``prompt_id``,
``auth_type``, ``response_id``), checked against the file the CLI wrote
after an HTTP 500. Its resume replays those records into ``/stats`` (a
failed request counted per model) and shows no error in the transcript.
We write one such record when a turn fails, in the same shape, so the CLI
counts it the same way, and read it (ours or the CLI's) back as the error of
that turn (``sessions.shown``).

``error_type`` is the CLI's "error class or category"; ours is the error's
``kind`` (``server``, ``auth``, …), the identifier the editor keys its
actions on. A CLI record names an SDK class (``InternalServerError``)
instead, so its kind is read from ``status_code`` as
``llm.errors.http_error`` maps statuses.

The text is untrusted and may be long (an endpoint's error body, a URL),
so it is cut to :data:`MAX_ERROR_CHARS` when written and again when read (a
file may have been written by anyone). Before it is written the API key,
``Authorization``/``Bearer`` values and the password of a URL are replaced
by ``[redacted]``: the session file is plain text in the user's home.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, get_args

from ..llm.errors import ErrorKind, status_kind

TELEMETRY_SUBTYPE = "ui_telemetry"
API_ERROR_EVENT = "qwen-code.api_error"
MAX_ERROR_CHARS = 2000
"""Longer than any message the model client writes (it quotes at most 300 characters of the server's text)."""
REDACTED = "[redacted]"

_SCAN_CHARS = 4 * MAX_ERROR_CHARS
"""How much is redacted before the cut: a secret straddling the cut must be redacted whole, not half-kept."""
_KINDS: frozenset[str] = frozenset(get_args(ErrorKind))
_HEADER_VALUE = re.compile(r"(?i)\b(authorization|x-api-key|api[-_]?key)(\"?\s*[:=]\s*\"?(?:bearer\s+)?)[^\s\"',;}]+")
_BEARER = re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]{8,}")
_URL_PASSWORD = re.compile(r"(?i)\b([a-z][a-z0-9+.-]{0,30}://[^\s/@:]{0,256}:)[^\s/@]{0,1024}@")
"""Bounded runs: an attempt that finds no ``@`` gives up after a fixed reach, so the scan stays linear."""


@dataclass(frozen=True)
class RecordedFailure:
    """The error a failed turn showed: its text and, when known, the kind the editor offers actions for."""

    message: str
    kind: ErrorKind | None


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` without the given secrets, header-style credentials or URL passwords, cut to the bound."""
    text = text[:_SCAN_CHARS]
    for secret in secrets:
        if len(secret) >= 4:
            text = text.replace(secret, REDACTED)
    text = _HEADER_VALUE.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", text)
    text = _BEARER.sub(lambda m: f"{m.group(1)}{REDACTED}", text)
    text = _URL_PASSWORD.sub(lambda m: f"{m.group(1)}{REDACTED}@", text)
    return _bounded(text)


def failure_payload(
    message: str,
    kind: ErrorKind,
    *,
    status: int | None,
    model: str | None,
    duration_ms: int,
    prompt_id: str,
    timestamp: str,
    secrets: Iterable[str] = (),
) -> dict[str, Any]:
    """The ``systemPayload`` of the record, field for field as Qwen Code 0.24.4's ``logApiError`` writes it."""
    event: dict[str, Any] = {
        "event.name": API_ERROR_EVENT,
        "event.timestamp": timestamp,
        "response_id": "",
        "model": model or "",
        "duration_ms": duration_ms,
        "prompt_id": prompt_id,
        "auth_type": "openai",
        "error_message": redact(message, secrets),
        "error_type": kind,
    }
    if status is not None:
        event["status_code"] = status
    return {"uiEvent": event}


def recorded_failure(record: Mapping[str, Any]) -> RecordedFailure | None:
    """The failure ``record`` holds, or None when it is not a model-request error (ours or the CLI's)."""
    if record.get("type") != "system" or record.get("subtype") != TELEMETRY_SUBTYPE:
        return None
    payload = record.get("systemPayload")
    event = payload.get("uiEvent") if isinstance(payload, dict) else None
    if not isinstance(event, dict) or event.get("event.name") != API_ERROR_EVENT:
        return None
    message = event.get("error_message")
    if not isinstance(message, str) or not message.strip():
        return None
    kind = event.get("error_type")
    return RecordedFailure(_bounded(message), kind if isinstance(kind, str) and kind in _KINDS else _status_kind(event.get("status_code")))  # type: ignore[arg-type]


def _status_kind(status: Any) -> ErrorKind | None:
    """A CLI record's kind from its HTTP status (it names an SDK class, not a kind); None without an error status."""
    if not isinstance(status, int) or isinstance(status, bool) or not 400 <= status <= 599:
        return None
    return status_kind(status)


def _bounded(text: str) -> str:
    return text if len(text) <= MAX_ERROR_CHARS else text[: MAX_ERROR_CHARS - 1] + "…"
