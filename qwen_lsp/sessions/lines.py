"""The lines of a session file, read in bounded pieces.

A session line can be enormous (an old attachment once wrote a 1.9 GB one)
and listing reads every session file, so no line is ever loaded past
:data:`MAX_LINE_BYTES`: a longer one is passed over in 1 MiB pieces and
reported by its size only. Memory stays one capped line, whatever the file.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

from ..files.reading import open_regular

MAX_LINE_BYTES = 8 << 20
"""Far above any record this server or Qwen Code writes (tool output and attachments are capped at 25 000 characters)."""
_SKIP_BYTES = 1 << 20


@dataclass(frozen=True)
class RawLine:
    number: int
    """1-based line number."""
    data: bytes | None
    """The line without its newline; None when it was longer than the cap and left unread."""
    size: int
    terminated: bool
    """False for a last line with no newline (a torn write)."""


def raw_lines(path: str | os.PathLike[str], max_bytes: int = MAX_LINE_BYTES) -> Iterator[RawLine]:
    """Every line of ``path``; ``OSError`` as ``open`` gives it (EINVAL for a FIFO or device)."""
    with open_regular(path) as fh:
        number = 0
        while data := fh.readline(max_bytes + 1):
            number += 1
            if data.endswith(b"\n"):
                yield RawLine(number, data[:-1], len(data) - 1, True)
            elif len(data) <= max_bytes:
                yield RawLine(number, data, len(data), False)
            else:
                yield _passed_over(fh, number, len(data))


def _passed_over(fh: BinaryIO, number: int, seen: int) -> RawLine:
    """Read past the rest of an over-long line, 1 MiB at a time, without keeping it."""
    size = seen
    buf = bytearray(_SKIP_BYTES)
    while n := fh.readinto(buf):  # type: ignore[attr-defined]  # open_regular gives a BufferedReader
        end = buf.find(b"\n", 0, n)
        if end >= 0:
            fh.seek(end + 1 - n, os.SEEK_CUR)  # the next line starts right after the newline
            return RawLine(number, None, size + end, True)
        size += n
    return RawLine(number, None, size, False)
