"""Errors from the model endpoint, worded so a person knows what to fix.

Every failure of the client surfaces as one ``LLMError`` with a ``kind`` the
engine can branch on (retry? tell the user to configure something?) and a
``message`` that names the endpoint, because "connection refused" alone does
not say *which* of the user's settings is wrong.
"""

from __future__ import annotations

import json
from urllib.parse import urlsplit

from ..errors import ModelErrorKind as ErrorKind

BASE_URL_SETTING = "model.baseUrl / OPENAI_BASE_URL"
"""Where a user changes the endpoint; every message about the address names it."""

#: How much of the server's own error text is quoted in our message.
SERVER_MESSAGE_LIMIT = 300


class LLMError(Exception):
    """A model request failed; ``str(err)`` is the actionable ``message``."""

    def __init__(self, kind: ErrorKind, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.kind: ErrorKind = kind
        self.message = message
        self.status = status

    def __repr__(self) -> str:
        return f"LLMError(kind={self.kind!r}, status={self.status!r}, message={self.message!r})"


def server_message(body: bytes | str) -> str:
    """The server's own explanation from an error body, shortened.

    OpenAI-style bodies carry it in ``error.message``; others use ``message`` or
    ``detail``, or are plain text.
    """
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    found: object = None
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, dict):
            found = error.get("message")
        elif isinstance(error, str):
            found = error
        found = found or data.get("message") or data.get("detail")
    message = (found if isinstance(found, str) else text).strip()
    if len(message) > SERVER_MESSAGE_LIMIT:
        message = message[: SERVER_MESSAGE_LIMIT - 1].rstrip() + "…"
    return message


def status_kind(status: int) -> ErrorKind:
    """The kind of a non-2xx response (also how a session record that names only a status is read back)."""
    if status in (401, 403):
        return "auth"
    if status == 404:
        return "not_found"
    if status == 429:
        return "rate_limit"
    return "server" if status >= 500 else "bad_request"


def http_error(status: int, body: bytes | str, *, base_url: str, model: str) -> LLMError:
    """Map a non-2xx response to an ``LLMError``."""
    said = server_message(body)
    suffix = f" Server said: {said}" if said else ""
    kind = status_kind(status)
    if kind == "auth":
        return LLMError(
            "auth",
            f"The API key was rejected by {base_url} (HTTP {status}). Check OPENAI_API_KEY or model.apiKey.{suffix}",
            status,
        )
    if kind == "not_found":
        return LLMError(
            "not_found",
            f"Model '{model}' or path not found at {base_url} (HTTP 404). "
            f"Check OPENAI_MODEL / model.name and the base URL (it usually ends in /v1).{suffix}",
            status,
        )
    if kind == "rate_limit":
        return LLMError("rate_limit", f"{base_url} is rate limiting requests (HTTP 429). Wait and try again.{suffix}", status)
    if kind == "server":
        return LLMError("server", f"The model server at {base_url} failed (HTTP {status}).{suffix}", status)
    return LLMError("bad_request", f"{base_url} rejected the request (HTTP {status}).{suffix}", status)


def base_url_error(base_url: str) -> LLMError | None:
    """A configuration error when ``base_url`` is not an http(s) URL with a host, else None.

    Checked before any request: ``localhost:8000/v1`` or ``file:///x`` would
    otherwise fail deep inside the HTTP stack as a vague transport error and
    be retried as if the network had hiccupped.
    """
    try:
        parts = urlsplit(base_url)
        has_host = bool(parts.hostname)
    except ValueError:
        parts, has_host = None, False
    if parts is not None and parts.scheme in ("http", "https") and has_host:
        return None
    if parts is None:
        problem = "it is not a valid URL"
    elif not parts.scheme or "//" not in base_url:
        problem = "it has no http:// or https:// scheme"
    elif parts.scheme not in ("http", "https"):
        problem = f"'{parts.scheme}' is not an HTTP scheme"
    else:
        problem = "it names no host"
    return LLMError(
        "config",
        f"The base URL {_shown(base_url)!r} is not usable: {problem}. Set {BASE_URL_SETTING} to the endpoint's "
        "http(s) address, usually ending in /v1 (for example http://127.0.0.1:8000/v1).",
    )


def _shown(value: str, limit: int = 200) -> str:
    """A settings value quoted in a message, cut short: settings files may hold anything."""
    return value if len(value) <= limit else value[: limit - 1] + "…"


def connect_error(base_url: str) -> LLMError:
    return LLMError(
        "connect",
        f"Nothing is listening at {base_url}. Start the model server or fix {BASE_URL_SETTING}.",
    )


def dns_error(base_url: str) -> LLMError:
    host = urlsplit(base_url).hostname or base_url
    return LLMError(
        "connect",
        f"The host '{host}' of {base_url} could not be resolved (DNS lookup failed). "
        f"Check the spelling in {BASE_URL_SETTING} and your network or DNS.",
    )


def connect_timeout(base_url: str, seconds: float) -> LLMError:
    return LLMError(
        "timeout",
        f"Could not connect to {base_url} within {seconds:g} s (connect timeout). "
        f"Check that the host is reachable and {BASE_URL_SETTING} is right; "
        "the limit is model.timeouts.connect.",
    )


def first_byte_timeout(base_url: str, seconds: float) -> LLMError:
    return LLMError(
        "timeout",
        f"{base_url} did not start answering within {seconds:g} s (first-byte timeout). A large prompt or a busy "
        "server can need longer: raise model.timeouts.firstByte in settings (no environment variable sets it).",
    )


def stall_error(base_url: str, seconds: float) -> LLMError:
    return LLMError(
        "stall",
        f"The model stopped sending data for {seconds:g} s (stall timeout). Endpoint: {base_url}. "
        "The limit is model.timeouts.stall in settings.",
    )


def protocol_error(base_url: str, detail: str = "") -> LLMError:
    extra = f" ({detail})" if detail else ""
    return LLMError("protocol", f"The model's stream ended unexpectedly{extra}. Endpoint: {base_url}.")
