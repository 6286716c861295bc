"""Server-sent events read with a cap on each event's size (WHATWG HTML, "Parsing an event stream").

The endpoint is not trusted to be sane: one 400 MB ``data:`` line with no
newline used to be gathered whole by the line decoder under ``httpx_sse``
(the server's RSS grew to 1.3 GB and every other request waited on it).
Here lines are split from the raw bytes as they arrive, only the event
being built is kept, and an event whose data passes :data:`MAX_EVENT_BYTES`
(counted as sent, every line of it) ends the stream with :class:`EventTooLarge` at once, without reading the
rest. Only the ``data`` field is used (the chat stream sends nothing else
that matters); ``event``, ``id``, ``retry`` and comments are passed over.
"""

from __future__ import annotations

import re
from collections.abc import AsyncGenerator, AsyncIterator

MAX_EVENT_BYTES = 10 * 1024 * 1024
"""One event's data (and any one line) at most: above a tool call's argument cap (``client.MAX_ARGUMENT_CHARS``) sent in one event."""

_LINE_END = re.compile(rb"\r\n|\r|\n")


class EventTooLarge(ValueError):
    """An event (or a line) longer than the cap: the stream cannot be read further."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"one stream event passed {limit} bytes ({size} bytes read of it)")
        self.size = size
        self.limit = limit


async def sse_data(chunks: AsyncIterator[bytes], limit: int = MAX_EVENT_BYTES) -> AsyncGenerator[str, None]:
    """The ``data`` of each complete event (its ``data:`` lines joined by newlines), decoded as UTF-8.

    An event is dispatched at a blank line; what is left at the end of the
    stream without one is dropped, as the standard says.
    """
    pending = bytearray()  # the unfinished line; every line end before its last byte has been consumed
    data: list[bytes] = []
    size = 0
    async for chunk in chunks:
        resume = max(len(pending) - 1, 0)  # a CR kept at the end may be the first half of a CRLF
        pending += chunk
        start = 0
        while (found := _LINE_END.search(pending, max(start, resume))) is not None:
            if found.group() == b"\r" and found.end() == len(pending):
                break
            line = bytes(pending[start : found.start()])
            start = found.end()
            if not line:
                if data:
                    yield b"\n".join(data).decode("utf-8", "replace")
                data, size = [], 0
                continue
            size += len(line) + 1  # every line of the event counts, as sent: many tiny lines are no way around the cap
            if size > limit:
                raise EventTooLarge(size, limit)
            field, _, value = line.partition(b":")
            if field == b"data":
                data.append(value[1:] if value[:1] == b" " else value)
        del pending[:start]
        if len(pending) + size > limit:
            raise EventTooLarge(len(pending) + size, limit)
