"""Async client for OpenAI-compatible Chat Completions endpoints (README.md, "Editor settings").

One long-lived ``httpx.AsyncClient`` per ``ChatClient`` keeps connections warm
across turns.  Answers are always streamed (SSE, read by ``llm/sse.py``) and turned
into a small set of typed events, so the agent loop never sees wire chunks.

The endpoint is not trusted with memory either (docs/security.md, "Third
campaign"): one stream event is read to at most ``sse.MAX_EVENT_BYTES``,
one answer's text and reasoning to :data:`MAX_ANSWER_CHARS`, one tool
call's arguments to :data:`MAX_ARGUMENT_CHARS` and an answer holds at most
:data:`MAX_TOOL_CALLS` calls; an error answer is read to :data:`MAX_ERROR_BODY`
and a model list to :data:`MAX_MODELS_BODY`. Past a cap the stream is closed at once and
the turn ends with an ``LLMError`` that says which cap; what the answer
had said so far stays in the session.

Timeouts are split by what they protect against: ``connect`` (httpx), a
``first_byte`` budget for the response headers and the first event (prefill of
a long prompt is slow), and a ``stall`` limit on the gap between two events,
enforced with ``asyncio.timeout`` around each read (a socket read timeout alone
cannot tell "slow" from "dead" once a proxy keeps the connection open).

Retries (429, 5xx, a connection dropped before any answer) happen only before
a 200 stream has started: after the first event the user has seen text, and
repeating the request would duplicate it.  Connection refused fails fast.

Settings can change between turns.  The client is cheap to build, so the
engine simply makes a new ``ChatClient`` (and ``aclose``s the old one) when the
base URL, key, model or timeouts change, instead of this class mutating itself
under an in-flight stream.

``httpx`` is imported at first use, not with this module: its import (with
``rich`` and ``click`` when they are installed, through httpx's command line)
costs the server's start about 80 ms of CPU before ``initialize`` can be
answered, and the server's warm-up thread imports it anyway (``warmup.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import json
import logging
import math
import random
import socket
import ssl
import time
import urllib.request
from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Any

from ..text.json_depth import loads_bounded
from .errors import (
    LLMError,
    base_url_error,
    connect_error,
    connect_timeout,
    dns_error,
    first_byte_timeout,
    http_error,
    protocol_error,
    server_message,
    stall_error,
)
from .request_json import RequestEncoder
from .sse import EventTooLarge, sse_data
from .sampling import Sampling

if TYPE_CHECKING:
    import httpx


def _httpx() -> ModuleType:
    """The ``httpx`` module, imported on first use (see the module docstring); a dictionary lookup after."""
    import httpx

    return httpx

log = logging.getLogger(__name__)

#: Longest wait we accept from a server's ``Retry-After`` header.
RETRY_AFTER_CAP = 10.0


@dataclass(frozen=True)
class Timeouts:
    """Seconds; see the module docstring for what each one covers."""

    connect: float = 10
    first_byte: float = 60
    stall: float = 60


@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class ThoughtDelta:
    text: str


@dataclass(frozen=True)
class ToolCallEvent:
    """A complete tool call; ``arguments`` is ``{}`` when ``raw_arguments`` was not a JSON object.

    ``arguments_error`` then says why, so the loop answers the model with that
    instead of running the tool on ``{}`` (which would only complain about a
    missing field and hide the real mistake).
    """

    id: str
    name: str
    arguments: dict[str, Any]
    raw_arguments: str
    arguments_error: str | None = None


@dataclass(frozen=True)
class UsageEvent:
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


@dataclass(frozen=True)
class FinishEvent:
    """Always the last event: ``"stop"``, ``"length"``, ``"tool_calls"`` or the server's own word."""

    reason: str


StreamEvent = TextDelta | ThoughtDelta | ToolCallEvent | UsageEvent | FinishEvent


_FINISH_ALIASES = {
    "stop": "stop",
    "eos": "stop",
    "end_turn": "stop",
    "stop_sequence": "stop",
    "length": "length",
    "max_tokens": "length",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "tool_use": "tool_calls",
}


def normalise_finish_reason(reason: str) -> str:
    return _FINISH_ALIASES.get(reason.lower(), reason)


#: How much of a model's bad argument string is quoted back to it.
ARGUMENTS_EXCERPT = 200
#: Deeper arguments are refused as a tool error: sessions skip records nested past 100 levels, and no tool's schema nests.
MAX_ARGUMENT_DEPTH = 64
MAX_COMPLETION_BYTES = 1 << 20
"""A non-streamed completion (a classifier's verdict) is a few hundred bytes; a larger body is refused."""

#: A stream event nests a handful of levels (arguments arrive as strings); deeper ones are skipped like non-JSON.
MAX_STREAM_EVENT_DEPTH = 100
#: One answer's text plus reasoning, in characters (some 250,000 tokens: four times the largest output limit of a Qwen model).
MAX_ANSWER_CHARS = 1_000_000
#: One tool call's argument string: write_file's 1,000,000 characters even when each is sent as a six-character \uXXXX escape.
MAX_ARGUMENT_CHARS = 8_000_000
#: Tool calls in one answer.
MAX_TOOL_CALLS = 128
#: Events larger than this are decoded off the event loop.
THREAD_DECODE_OVER = 256 * 1024


def parse_arguments(raw: str, name: str) -> tuple[dict[str, Any], str | None]:
    """Decode a tool call's argument string: ``(arguments, None)``, or ``({}, why)`` when unusable.

    A model's bad JSON must not end the turn; the reason goes back to the model
    as the tool's error so it can retry with valid arguments.
    """
    if not raw.strip():
        return {}, None
    excerpt = raw if len(raw) <= ARGUMENTS_EXCERPT else raw[:ARGUMENTS_EXCERPT] + "…"
    try:
        value = loads_bounded(raw, MAX_ARGUMENT_DEPTH)
    except ValueError as exc:  # TooDeep is one: a 5,000-deep nest is an answer to the model, not a failed turn
        log.warning("Tool call %r has arguments that are not valid JSON; using {}: %.200s", name, raw)
        return {}, f"The arguments of the '{name}' call were not valid JSON ({exc}); nothing was run. Arguments received: {excerpt}"
    if not isinstance(value, dict):
        log.warning("Tool call %r has arguments that are not a JSON object; using {}: %.200s", name, raw)
        return {}, f"The arguments of the '{name}' call were not a JSON object; nothing was run. Arguments received: {excerpt}"
    return value, None


# No request has ever used two billion tokens; a usage figure above this is a broken endpoint, and
# taken at face value it would make the meter and the compaction threshold believe the window is
# overflowing forever.
MAX_USAGE_TOKENS = 2**31 - 1


def _token_count(value: object) -> int | None:
    """A usage figure as a count ≥ 0; None for anything that is not a plausible finite number
    (``"abc"``, ``1e999``, ``1e20``)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value > MAX_USAGE_TOKENS:
        return None
    return max(0, int(value))


@dataclass
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)
    size: int = 0


class _ChunkReader:
    """Turns decoded stream chunks into events, holding tool calls until they are complete.

    Tool-call pieces arrive keyed by ``index`` spread over many chunks (id and
    name first, then argument fragments), so calls are emitted only when the
    stream finishes.
    """

    def __init__(self, base_url: str) -> None:
        self._base_url = base_url
        self._answer_chars = 0
        self._calls: dict[int, _PartialCall] = {}
        self._usage: UsageEvent | None = None
        self.finish_reason: str | None = None

    def _malformed(self, detail: str) -> LLMError:
        """A chunk that is not OpenAI's shape: the endpoint's fault, reported as such (never "internal bug")."""
        return LLMError(
            "protocol",
            f"The model server at {self._base_url} sent a stream chunk that is not in the OpenAI Chat Completions "
            f"format ({detail}). Check that model.baseUrl / OPENAI_BASE_URL points at an OpenAI-compatible API "
            "and that the model supports streaming tool calls.",
        )

    def _too_large(self, what: str) -> LLMError:
        """A cap of the module doc was hit: the stream stops here, and the user reads which one."""
        return LLMError(
            "protocol",
            f"The model server at {self._base_url} sent {what}; the answer was stopped there and nothing more was read. "
            "What it had said so far is kept in the chat. If this keeps happening, check the endpoint (model.baseUrl).",
        )

    def feed(self, chunk: dict[str, Any]) -> list[StreamEvent]:
        """Events from one decoded chunk; raises ``LLMError`` (kind ``protocol``) for a malformed one."""
        if "error" in chunk:
            said = server_message(json.dumps(chunk))
            raise LLMError("server", f"The model server at {self._base_url} reported an error mid-stream. Server said: {said}")
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            self._read_usage(usage)
        events: list[StreamEvent] = []
        choices = chunk.get("choices") or []
        if not isinstance(choices, list):
            raise self._malformed("'choices' is not a list")
        if not choices:
            return events
        choice = choices[0]
        if not isinstance(choice, dict):
            raise self._malformed("a choice is not an object")
        delta = choice.get("delta") or {}
        if not isinstance(delta, dict):
            raise self._malformed("'delta' is not an object")
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
        if isinstance(reasoning, str) and reasoning:
            self._count_answer(len(reasoning))
            events.append(ThoughtDelta(reasoning))
        content = delta.get("content")
        if isinstance(content, str) and content:
            self._count_answer(len(content))
            events.append(TextDelta(content))
        pieces = delta.get("tool_calls") or []
        if not isinstance(pieces, list):
            raise self._malformed("'tool_calls' is not a list")
        for position, piece in enumerate(pieces):
            if not isinstance(piece, dict):
                raise self._malformed("a tool call piece is not an object")
            index = piece.get("index", position)
            if isinstance(index, bool) or not isinstance(index, int):
                raise self._malformed(f"a tool call index is {type(index).__name__}, not an integer")
            self._add_call_piece(index, piece)
        if choice.get("finish_reason"):
            self.finish_reason = normalise_finish_reason(str(choice["finish_reason"]))
        return events

    def too_large_event(self, exc: EventTooLarge) -> LLMError:
        return self._too_large(f"one stream event larger than {exc.limit:,} bytes (a line without its end)")

    def _count_answer(self, chars: int) -> None:
        self._answer_chars += chars
        if self._answer_chars > MAX_ANSWER_CHARS:
            raise self._too_large(f"an answer longer than {MAX_ANSWER_CHARS:,} characters")

    def _read_usage(self, usage: dict[str, Any]) -> None:
        """Keep the counts; negative ones are clamped to 0, unusable ones count as absent."""
        prompt = _token_count(usage.get("prompt_tokens")) or 0
        completion = _token_count(usage.get("completion_tokens")) or 0
        total = _token_count(usage.get("total_tokens"))
        self._usage = UsageEvent(prompt, completion, total if total else prompt + completion)

    def _add_call_piece(self, index: int, piece: dict[str, Any]) -> None:
        if index not in self._calls and len(self._calls) >= MAX_TOOL_CALLS:
            raise self._too_large(f"more than {MAX_TOOL_CALLS} tool calls in one answer")
        call = self._calls.setdefault(index, _PartialCall())
        function = piece.get("function") or {}
        if not isinstance(function, dict):
            raise self._malformed("a tool call's 'function' is not an object")
        call_id, name = piece.get("id"), function.get("name")
        if call_id is not None and not isinstance(call_id, str):
            raise self._malformed("a tool call id is not a string")
        if name is not None and not isinstance(name, str):
            raise self._malformed("a tool call name is not a string")
        if call_id and not call.id:
            call.id = call_id
        if name and not call.name:
            call.name = name
        if isinstance(function.get("arguments"), str):
            call.size += len(function["arguments"])
            if call.size > MAX_ARGUMENT_CHARS:
                raise self._too_large(f"tool call arguments longer than {MAX_ARGUMENT_CHARS:,} characters ({call.name or 'a call'})")
            call.arguments.append(function["arguments"])

    def finish(self, saw_done: bool) -> list[StreamEvent]:
        """The closing events; raises when the stream was cut before it said it was finished."""
        if not saw_done and self.finish_reason is None:
            raise protocol_error(self._base_url)
        events: list[StreamEvent] = []
        if self.finish_reason == "length" and self._calls:
            # Cut off by max_tokens while writing a call: its arguments are incomplete, so
            # nothing of it may run; the turn ends "length" and the caller says so.
            log.warning("The answer hit the token limit inside %d tool call(s); dropping them", len(self._calls))
            self._calls.clear()
        for index in sorted(self._calls):
            call = self._calls[index]
            raw = "".join(call.arguments)
            call_id = call.id or f"call_{index}_{time.time_ns():x}"
            arguments, problem = parse_arguments(raw, call.name)
            events.append(ToolCallEvent(call_id, call.name, arguments, raw, problem))
        if self._usage is not None:
            events.append(self._usage)
        # [DONE] without a finish_reason: servers that omit it still finished normally.
        reason = self.finish_reason or ("tool_calls" if self._calls else "stop")
        events.append(FinishEvent(reason))
        return events


def _is_dns_failure(exc: BaseException) -> bool:
    """Whether a connect error was a failed name lookup (``socket.gaierror`` somewhere in its causes)."""
    seen: BaseException | None = exc
    for _ in range(10):  # the chain is short; bound it anyway
        if seen is None:
            return False
        if isinstance(seen, socket.gaierror):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


AFTER_DONE_EVENTS = 8
AFTER_DONE_S = 0.05
"""How much of a stream :func:`_read_to_end` reads past ``[DONE]``: normally nothing but the end of the body."""


async def _read_to_end(source: AsyncIterator[Any]) -> None:
    """Read what follows ``[DONE]`` (a server sends the end of its chunked body right after) so that
    closing the response hands the connection back to the pool instead of closing it: an unread body
    is dropped with its socket, and every next turn paid a new TCP and TLS handshake.

    Bounded by count and time: a server that keeps talking, or holds the body open, past ``[DONE]``
    costs at most :data:`AFTER_DONE_S`, and then its connection is closed as before.
    """
    try:
        async with asyncio.timeout(AFTER_DONE_S):
            for _ in range(AFTER_DONE_EVENTS):
                if await anext(source, None) is None:
                    return
    except (TimeoutError, EventTooLarge, _httpx().TransportError) as exc:
        log.debug("not reusing the connection: %s after [DONE]", type(exc).__name__)


MAX_ERROR_BODY = 64 * 1024
"""Bytes of an error answer read: its message is quoted at a few hundred characters."""
MAX_MODELS_BODY = 8 * 1024 * 1024
"""Bytes of a ``GET /models`` answer read (a list of tens of thousands of models is a few MB)."""


async def _read_capped(response: httpx.Response, limit: int) -> tuple[bytes, bool]:
    """At most ``limit`` bytes of the body and whether that was all of it; the rest is never read."""
    body = bytearray()
    async for chunk in response.aiter_bytes():
        body += chunk[: limit - len(body) + 1]
        if len(body) > limit:
            return bytes(body[:limit]), False
    return bytes(body), True


def _retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header (delta-seconds or an HTTP date)."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _tls_verification(base_url: str) -> ssl.SSLContext | bool:
    """What httpx verifies TLS with: its default (``True``: the CA bundle) unless TLS can never be used.

    Loading the bundle costs ~25 ms of CPU, and a one-shot ``qwen-lsp chat``
    waits for it before its first request. A plain ``http://`` endpoint (a
    local model server) reached with no proxy set never handshakes TLS:
    requests go only to ``base_url`` and redirects are not followed. It gets
    a context that trusts no certificate at all, so were TLS ever asked of
    it, the handshake would fail closed, never go unverified. Any proxy in
    the environment (which httpx reads through ``urllib.request.getproxies``)
    keeps the default, since a proxy may be reached over TLS.
    """
    if not base_url.lower().startswith("http://") or urllib.request.getproxies():
        return True
    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # verify_mode CERT_REQUIRED, check_hostname on, no CA loaded


class ChatClient:
    """Streams chat completions from one endpoint; see the module docstring."""

    def __init__(
        self,
        base_url: str,
        api_key: str | None,
        model: str,
        *,
        timeouts: Timeouts = Timeouts(),
        max_retries: int = 3,
        retry_base: float = 0.25,
        transport: httpx.AsyncBaseTransport | None = None,
        sampling: Sampling | None = None,
    ) -> None:
        """Raises ``LLMError`` (kind ``config``) at once for a base URL that is not http(s).

        ``sampling`` (``llm/sampling.py``) fills every request's sampling fields and ``max_tokens``;
        None sends only what each caller asks for."""
        bad_url = base_url_error(base_url.strip())
        if bad_url is not None:
            raise bad_url
        self.base_url = base_url.strip().rstrip("/")
        self.model = model
        self.timeouts = timeouts
        self.max_retries = max_retries
        self.retry_base = retry_base
        self.sampling = sampling
        self._json = RequestEncoder()
        self._urls: dict[str, httpx.URL] = {}
        """Each path's URL, parsed once: httpx parses a string URL again for every request."""
        headers: dict[str, str] = {}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self._http = _httpx().AsyncClient(
            headers=headers,
            transport=transport,
            verify=_tls_verification(self.base_url),
            # Reads are bounded per event by asyncio.timeout (first_byte / stall), not by httpx.
            timeout=_httpx().Timeout(connect=timeouts.connect, read=None, write=timeouts.first_byte, pool=timeouts.first_byte),
        )

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> ChatClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def _backoff(self, attempt: int, retry_after: str | None) -> float:
        asked = _retry_after(retry_after)
        if asked is not None:
            return min(asked, RETRY_AFTER_CAP)
        return self.retry_base * 2**attempt + random.uniform(0, self.retry_base)

    async def _open(self, method: str, path: str, body: dict[str, Any] | None, max_retries: int | None = None) -> tuple[httpx.Response, float]:
        """Send a request; return the streaming 2xx response and its first-byte deadline.

        The deadline (loop time) covers the headers *and* the first event, so a
        server that answers headers at once but then prefills for minutes is
        still caught by ``first_byte``.
        """
        url = self._urls.get(path) or self._urls.setdefault(path, _httpx().URL(f"{self.base_url}{path}"))
        content = None if body is None else self._json.encode(body)
        headers = None if content is None else {"Content-Type": "application/json"}
        loop = asyncio.get_running_loop()
        retries = self.max_retries if max_retries is None else max_retries
        attempt = 0
        while True:
            request = self._http.build_request(method, url, content=content, headers=headers)
            retry_after: str | None = None
            deadline = loop.time() + self.timeouts.first_byte
            try:
                async with asyncio.timeout_at(deadline):
                    response = await self._http.send(request, stream=True)
            except TimeoutError:
                raise first_byte_timeout(self.base_url, self.timeouts.first_byte) from None
            except _httpx().ConnectTimeout:
                raise connect_timeout(self.base_url, self.timeouts.connect) from None
            except _httpx().ConnectError as exc:
                log.debug("connect to %s failed: %s", url, exc)
                raise (dns_error if _is_dns_failure(exc) else connect_error)(self.base_url) from None
            except _httpx().TimeoutException:
                raise first_byte_timeout(self.base_url, self.timeouts.first_byte) from None
            except _httpx().TransportError as exc:
                # Dropped before any answer (e.g. a stale keep-alive socket): safe to repeat.
                error = protocol_error(self.base_url, f"connection dropped before a response: {exc}")
            else:
                if response.is_success:
                    return response, deadline
                error = await self._error_from(response)
                retry_after = response.headers.get("retry-after")
            if error.kind not in ("rate_limit", "server", "protocol") or attempt >= retries:
                raise error
            delay = self._backoff(attempt, retry_after)
            log.warning("%s; retrying in %.2f s (%d/%d)", error.message, delay, attempt + 1, retries)
            await asyncio.sleep(delay)
            attempt += 1

    async def _error_from(self, response: httpx.Response) -> LLMError:
        try:
            async with asyncio.timeout(self.timeouts.first_byte):
                body, _ = await _read_capped(response, MAX_ERROR_BODY)  # only its start is quoted
        except (TimeoutError, _httpx().HTTPError):
            body = b""
        finally:
            await response.aclose()
        return http_error(response.status_code, body, base_url=self.base_url, model=self.model)

    def _body(
        self,
        messages: Sequence[Mapping[str, object]],
        *,
        stream: bool,
        tools: list[dict[str, Any]] | None,
        max_tokens: int | None,
        temperature: float | None,
        extra_body: dict[str, Any] | None,
    ) -> dict[str, Any]:
        """One request's body, streamed or not: the configured sampling parameters (and ``max_tokens`` as
        0.24.4 reconciles it) over the caller's, ``extra_body`` last."""
        body: dict[str, Any] = {"model": self.model, "messages": messages, "stream": stream}
        if stream:
            body["stream_options"] = {"include_usage": True}
        if tools:
            body["tools"] = tools
        if self.sampling is not None:
            max_tokens = self.sampling.max_tokens_for(max_tokens)
        if max_tokens is not None:
            body["max_tokens"] = max_tokens
        if temperature is not None:
            body["temperature"] = temperature
        if self.sampling is not None:
            body.update(self.sampling.params)
        if extra_body:
            body.update(extra_body)
        return body

    async def stream(
        self,
        messages: Sequence[Mapping[str, object]],
        *,
        tools: list[dict[str, Any]] | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        extra_body: dict[str, Any] | None = None,
        max_retries: int | None = None,
    ) -> AsyncIterator[StreamEvent]:
        """Stream one completion as events; ``FinishEvent`` is always last.

        ``max_retries`` overrides the client's for this request (0: one attempt, as side queries want).

        Closing the generator early (``aclose``, or cancelling the task that
        iterates it) closes the HTTP response at once, so the server sees the
        hang-up and stops generating.  Iterate it inside
        ``contextlib.aclosing`` when you may stop before the end.
        """
        body = self._body(messages, stream=True, tools=tools, max_tokens=max_tokens, temperature=temperature, extra_body=extra_body)
        response, deadline = await self._open("POST", "/chat/completions", body, max_retries)
        try:
            async with contextlib.aclosing(self._events(response, deadline)) as events:
                async for event in events:
                    yield event
        finally:
            await response.aclose()

    async def complete(
        self,
        messages: Sequence[Mapping[str, object]],
        *,
        tools: list[dict[str, Any]] | None = None,
        tool_choice: str | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        extra_body: dict[str, Any] | None = None,
        max_retries: int | None = 0,
    ) -> dict[str, Any]:
        """One completion, not streamed (``stream: false``): the response's first ``choices[].message``.

        For short structured answers (auto mode's classifier asks as Qwen Code 0.24.4 does: a
        ``respond_in_schema`` tool with ``tool_choice: "required"``). The body is read up to
        :data:`MAX_COMPLETION_BYTES` within the first-byte timeout; a larger or slower one is an error.
        """
        body = self._body(messages, stream=False, tools=tools, max_tokens=max_tokens, temperature=temperature, extra_body=extra_body)
        if tool_choice is not None:
            body["tool_choice"] = tool_choice
        response, deadline = await self._open("POST", "/chat/completions", body, max_retries)
        try:
            async with asyncio.timeout_at(deadline):
                raw, whole = await _read_capped(response, MAX_COMPLETION_BYTES)
            if not whole:
                raise protocol_error(self.base_url, f"a completion larger than {MAX_COMPLETION_BYTES} bytes")
        except TimeoutError:
            raise first_byte_timeout(self.base_url, self.timeouts.first_byte) from None
        except _httpx().TransportError as exc:
            raise protocol_error(self.base_url, f"connection lost: {exc}") from None
        finally:
            await response.aclose()
        try:
            answer = loads_bounded(raw.decode("utf-8", errors="replace"), MAX_STREAM_EVENT_DEPTH)
            message = answer["choices"][0]["message"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise protocol_error(self.base_url, "the completion is not an OpenAI Chat Completions response") from None
        if not isinstance(message, dict):
            raise protocol_error(self.base_url, "the completion's message is not an object")
        return message

    async def _events(self, response: httpx.Response, first_deadline: float) -> AsyncGenerator[StreamEvent, None]:
        reader = _ChunkReader(self.base_url)
        saw_done = False
        first = True
        loop = asyncio.get_running_loop()
        content_type = response.headers.get("content-type", "")
        if "text/event-stream" not in content_type:
            raise LLMError(
                "protocol",
                f"{self.base_url} answered with '{content_type or 'no content type'}' instead of an event stream. "
                "Check that OPENAI_BASE_URL / model.baseUrl points at an OpenAI-compatible API (it usually ends in /v1).",
                response.status_code,
            )
        source = sse_data(response.aiter_bytes())
        async with contextlib.aclosing(source):
            while True:
                deadline = first_deadline if first else loop.time() + self.timeouts.stall
                try:
                    async with asyncio.timeout_at(deadline):
                        sse = await anext(source, None)
                except TimeoutError:
                    if first:
                        raise first_byte_timeout(self.base_url, self.timeouts.first_byte) from None
                    raise stall_error(self.base_url, self.timeouts.stall) from None
                except EventTooLarge as exc:
                    raise reader.too_large_event(exc) from None
                except _httpx().TransportError as exc:
                    if reader.finish_reason is not None:
                        break  # everything that matters arrived; only [DONE] was lost
                    raise protocol_error(self.base_url, f"connection lost: {exc}") from None
                first = False
                if sse is None:
                    break
                data = sse.strip()
                if not data:
                    continue
                if data == "[DONE]":
                    saw_done = True
                    await _read_to_end(source)
                    break
                try:
                    if len(data) > THREAD_DECODE_OVER:
                        chunk = await asyncio.to_thread(loads_bounded, data, MAX_STREAM_EVENT_DEPTH)
                    else:
                        chunk = loads_bounded(data, MAX_STREAM_EVENT_DEPTH)
                except ValueError:
                    log.warning("Skipping a stream event that is not JSON: %.200s", data)
                    continue
                if not isinstance(chunk, dict):
                    log.warning("Skipping a stream event that is JSON but not an object: %.200s", data)
                    continue
                for event in reader.feed(chunk):
                    yield event
        for event in reader.finish(saw_done):
            yield event

    async def list_models(self) -> list[str]:
        """Model ids the endpoint offers (``GET /models``); used by ``doctor`` to check reachability."""
        response, deadline = await self._open("GET", "/models", None)
        try:
            async with asyncio.timeout_at(deadline):
                raw, complete = await _read_capped(response, MAX_MODELS_BODY)
            if not complete:
                raise LLMError("protocol", f"{self.base_url} answered GET /models with more than {MAX_MODELS_BODY:,} bytes; that is not a model list.")
        except TimeoutError:
            raise first_byte_timeout(self.base_url, self.timeouts.first_byte) from None
        except _httpx().TransportError as exc:
            raise protocol_error(self.base_url, f"connection lost: {exc}") from None
        finally:
            await response.aclose()
        try:
            data = json.loads(raw)
            return [str(m["id"]) for m in data["data"]]
        except (ValueError, KeyError, TypeError):
            raise LLMError("protocol", f"{self.base_url} answered GET /models with something that is not a model list.") from None
