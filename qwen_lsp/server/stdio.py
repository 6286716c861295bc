"""LSP over stdin/stdout on the event loop itself: framing that survives a lying peer, output with backpressure.

pygls's stdio loop (``pygls.io_.run_async``) has three faults this module
replaces:

* it reads every header line and every body through a worker thread —
  three thread hand-offs per message, most of the time a burst of 10,000
  ``didOpen`` took to drain;
* it trusts ``Content-Length`` and only recognises a header that starts its
  line: after one message whose length is too small, the rest of that body
  and the next message's header arrive as one "line", so that message and
  every later one were silently eaten. Here a header is recognised at the
  *end* of a line too, so the stream resynchronises on the next message;
* it writes stdout synchronously: a client that stops reading its output
  blocked the whole event loop (no model stream, no watcher, no cancel).
  Here stdout is a non-blocking transport; while the client lags more than
  ``OUTPUT_HIGH_WATER`` behind, no new message is read (the peer's writes
  back up instead of our memory) and chat streams merge their text deltas
  (``server/events.py``), so what waits for the client stays bounded.

Sizes are bounded: a header line keeps at most ``MAX_HEADER_LINE`` bytes,
and a body over ``MAX_MESSAGE`` is skipped in pieces, never held (a request
is answered -32600 when its ``id`` is in the first bytes). A body that is not
JSON, or no JSON-RPC message, is logged and dropped: JSON-RPC 2.0 would
answer it with ``id: null``, but pygls-based clients take an error without
an id for a malformed notification and fail, and no request waits for it.
Large bodies are parsed on a worker thread so the loop keeps serving meanwhile.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import stat
import sys
from collections.abc import Callable
from typing import BinaryIO

from lsprotocol.types import ResponseError

from .pygls_internals import InternalsProtocol

from ..text.json_depth import TooDeep, loads_bounded, loads_pruned

log = logging.getLogger(__name__)

MAX_HEADER_LINE = 64 * 1024
"""A header line longer than this is garbage; only its tail is kept (a header may end it, see the module doc)."""
_TAIL = 64
MAX_MESSAGE = 64 * 1024 * 1024
"""Larger bodies are skipped unparsed. A 50 MB file opened in the editor still syncs."""
_SKIP_PIECE = 1024 * 1024
_SNIFF = 1024
THREAD_PARSE_OVER = 256 * 1024
"""Bodies over this are parsed on a worker thread (a 50 MB ``json.loads`` takes a good part of a second)."""
OUTPUT_HIGH_WATER = 64 * 1024
OUTPUT_LOW_WATER = 16 * 1024

_CONTENT_LENGTH = b"content-length:"
_ID_PREFIX = re.compile(rb'^\s*\{[^{}]{0,200}?"id"\s{0,8}:\s{0,8}(\d{1,18}|"[^"\\]{0,200}")')
"""The ``id`` of an oversized request, when it comes before ``params`` (every client we know writes it so). Bounded quantifiers only."""

INVALID_REQUEST = -32600
MAX_DEPTH = 100
"""Deeper JSON is refused before anything structures it (LSP messages nest a dozen levels; 200 KB of ``[`` once ended the server)."""
SETTINGS_METHODS = frozenset({"initialize", "workspace/didChangeConfiguration"})
"""Messages that carry the editor's settings, and responses (a ``workspace/configuration`` answer): read to
``MAX_DEPTH`` with the deeper parts left out, so one absurd setting cannot cost the user all the others
(the settings layer reports it); any other message nested too deep is refused."""


def content_length(line: bytes) -> int | None:
    """The length a ``Content-Length`` header ending ``line`` declares, else None.

    Searched from the end, so ``<rest of a body>Content-Length: 57\\r\\n``
    (what follows a body whose declared length was too small) still counts.
    """
    at = line.lower().rfind(_CONTENT_LENGTH)
    if at < 0:
        return None
    value = line[at + len(_CONTENT_LENGTH) :].strip()
    return int(value) if value.isdigit() and len(value) <= 12 else None


class Output(asyncio.Protocol):
    """stdout as a non-blocking pipe transport, with flow control the server can consult.

    ``paused`` is true while more than ``OUTPUT_HIGH_WATER`` bytes wait for
    the client; ``call_when_writable`` runs a callback once it has caught up.
    """

    def __init__(self) -> None:
        self.transport: asyncio.WriteTransport | None = None
        self.paused = False
        self.lost = False
        self._waiters: list[Callable[[], None]] = []

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.WriteTransport)
        transport.set_write_buffer_limits(high=OUTPUT_HIGH_WATER, low=OUTPUT_LOW_WATER)
        self.transport = transport

    def pause_writing(self) -> None:
        self.paused = True

    def resume_writing(self) -> None:
        self.paused = False
        self._wake()

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        self.paused = False
        self._wake()

    def _wake(self) -> None:
        waiters, self._waiters = self._waiters, []
        for callback in waiters:
            callback()

    def call_when_writable(self, callback: Callable[[], None]) -> None:
        if self.paused:
            self._waiters.append(callback)
        else:
            callback()

    async def writable(self) -> None:
        if self.paused:
            done: asyncio.Future[None] = asyncio.get_running_loop().create_future()

            def wake() -> None:
                if not done.done():
                    done.set_result(None)

            self.call_when_writable(wake)
            await done

    # pygls's writer interface ------------------------------------------------
    def write(self, data: bytes) -> None:
        if self.transport is not None and not self.lost:
            self.transport.write(data)

    def close(self) -> None:
        """The transport still writes out what is buffered before it closes (``exit`` follows the ``shutdown`` answer)."""
        if self.transport is not None:
            self.transport.close()


async def _header_line(reader: asyncio.StreamReader) -> bytes | None:
    """The next header line (None at end of input); of an overlong line only the tail survives."""
    tail = b""
    while True:
        try:
            return tail + await reader.readuntil(b"\n")
        except asyncio.LimitOverrunError as exc:
            tail = (tail + await reader.read(max(1, exc.consumed)))[-_TAIL:]
        except asyncio.IncompleteReadError:
            return None


async def _skip(reader: asyncio.StreamReader, length: int) -> bytes | None:
    """Drop an oversized body in pieces; return its first bytes (None at end of input)."""
    head = b""
    left = length
    while left:
        piece = await reader.read(min(left, _SKIP_PIECE))
        if not piece:
            return None
        head = head or piece[:_SNIFF]
        left -= len(piece)
    return head


class StdioServer:
    """The read loop and the error answers for one stdio connection of ``protocol``."""

    def __init__(self, protocol: InternalsProtocol, output: Output, should_stop: Callable[[], bool]) -> None:
        self.protocol = protocol
        self.output = output
        self.should_stop = should_stop

    async def serve(self, reader: asyncio.StreamReader) -> None:
        length: int | None = None
        while not self.should_stop() and not self.output.lost:
            await self.output.writable()
            line = await _header_line(reader)
            if line is None:
                return
            if line.strip():
                declared = content_length(line)
                length = declared if declared is not None else length
                continue
            if length is None:
                continue
            if length > MAX_MESSAGE:
                head = await _skip(reader, length)
                if head is None:
                    return
                self._refuse_oversized(length, head)
            else:
                try:
                    body = await reader.readexactly(length)
                except asyncio.IncompleteReadError:
                    return
                await self._dispatch(body)
            length = None

    async def _dispatch(self, body: bytes) -> None:
        try:
            obj = await asyncio.to_thread(loads_bounded, body, MAX_DEPTH) if len(body) > THREAD_PARSE_OVER else loads_bounded(body, MAX_DEPTH)
        except TooDeep as exc:
            obj = await self._settings_pruned(body)
            if obj is None:
                log.warning("dropped a message of %d bytes: %s", len(body), exc)
                self._answer_request_in(body[:_SNIFF], f"Invalid request: {exc}.")
                return
        except ValueError as exc:  # UnicodeDecodeError is one too
            log.warning("dropped a message that is not JSON (%d bytes): %s", len(body), exc)
            return
        if not isinstance(obj, dict) or "jsonrpc" not in obj:
            msg_id = obj.get("id") if isinstance(obj, dict) and "method" in obj else None
            log.warning("dropped a JSON value that is no JSON-RPC 2.0 message: %.200r", body)
            if isinstance(msg_id, (int, str)):  # a request after all: its sender waits for an answer
                self._error(msg_id, INVALID_REQUEST, "Invalid request: not a JSON-RPC 2.0 message (\"jsonrpc\": \"2.0\" is missing).")
            return
        try:
            self.protocol.handle_message(self.protocol.structure_message(obj))
        except Exception as exc:  # structure_message already answered a request it could not read
            log.warning("could not handle a %s message: %s", obj.get("method", "response"), exc)

    async def _settings_pruned(self, body: bytes) -> dict | None:
        """A settings-carrying message (``SETTINGS_METHODS``) read to ``MAX_DEPTH``; None for any other or for non-JSON."""
        try:
            obj, cuts = await asyncio.to_thread(loads_pruned, body, MAX_DEPTH)
        except (ValueError, RecursionError):
            return None
        if not isinstance(obj, dict) or not (obj.get("method") in SETTINGS_METHODS or ("method" not in obj and "id" in obj)):
            return None
        log.warning("%s: %d value(s) nested deeper than %d levels were left out", obj.get("method", "a response"), cuts, MAX_DEPTH)
        return obj

    def _refuse_oversized(self, length: int, head: bytes) -> None:
        log.warning("skipped a message of %d bytes (the limit is %d)", length, MAX_MESSAGE)
        self._answer_request_in(head, f"Request too large: {length} bytes, the limit is {MAX_MESSAGE}.")

    def _answer_request_in(self, head: bytes, message: str) -> None:
        """Answer -32600 to an unreadable message when its first bytes show a request's ``id`` (a notification gets nothing)."""
        found = _ID_PREFIX.match(head)
        if found is not None and b'"method"' in head:
            raw = found.group(1)
            msg_id: int | str = int(raw) if raw.isdigit() else raw[1:-1].decode("utf-8", "replace")
            self._error(msg_id, INVALID_REQUEST, message)

    def _error(self, msg_id: int | str, code: int, message: str) -> None:
        self.protocol.send_response(msg_id, error=ResponseError(code=code, message=message))


async def serve_stdio(protocol: InternalsProtocol, output: Output, should_stop: Callable[[], bool], stdin: BinaryIO, stdout: BinaryIO) -> None:
    """Attach ``stdin``/``stdout`` to the running loop and serve until end of input, ``exit`` or a lost client."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=MAX_HEADER_LINE)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stdin)
    await loop.connect_write_pipe(lambda: output, stdout)
    protocol.set_writer(output)
    await StdioServer(protocol, output, should_stop).serve(reader)
    if output.lost:
        log.error("the client closed the server's output; shutting down")


def pipes_usable(*streams: BinaryIO) -> bool:
    """Event-loop pipes need pipes, sockets or terminals; anything else (``< file``, ``/dev/null``) keeps pygls's reader."""
    if sys.platform == "win32":
        return False
    try:
        return all(stat.S_ISFIFO(m := os.fstat(s.fileno()).st_mode) or stat.S_ISSOCK(m) or os.isatty(s.fileno()) for s in streams)
    except (OSError, ValueError, AttributeError):
        return False
