"""Telling text from binary, decoding text that may not be clean UTF-8, and reading a bounded window of it.

The binary test is Qwen Code's ``isBinaryFile``: look at the first 4 KiB;
a byte-order mark means text, a NUL byte means binary, and so does more than
30% of control characters other than tab/newline/CR/FF. Text is decoded as
UTF-8 (or UTF-16 when it starts with that BOM) with undecodable bytes
replaced, so one bad byte never hides a file from the model.

The file may be hostile (a 2 GB file with no newline, a sparse file of
zeros), so nothing here holds a whole line or a whole file: lines are cut
while they are read (:func:`capped_lines`), a window stops at Qwen Code's
caps (:func:`read_window`), and files past Qwen Code's 10 MB read limit are
refused before any byte is read (:func:`size_refusal`). ``read_file`` and
editor attachments share these, so both answer the same way.
"""

from __future__ import annotations

import codecs
import io
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from .reading import ensure_regular

SNIFF_BYTES = 4096
MAX_LINE_CHARS = 2000
"""Per-line cap (Qwen Code's older ``MAX_LINE_LENGTH_TEXT_FILE``): one minified line cannot eat the budget."""
TRUNCATION_MARK = "... [truncated]"
DEFAULT_LINE_LIMIT = 1000
"""Lines shown when no limit is given (Qwen Code's ``truncateToolOutputLines``)."""
MAX_OUTPUT_CHARS = 25_000
"""Characters shown in all (Qwen Code's ``truncateToolOutputThreshold``)."""
MAX_FILE_MB = 9.9
"""Qwen Code refuses to read a file over 9.9 MB ("the 10MB limit"), whatever part of it was asked for."""
_READ_CHARS = 1 << 16
_LINE_END = re.compile(r"\r\n|\r|\n")

_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


def sniff_encoding(head: bytes) -> str | None:
    """The codec a BOM announces, or None when there is no BOM."""
    for bom, encoding in _BOMS:
        if head.startswith(bom):
            return encoding
    return None


def looks_binary(head: bytes) -> bool:
    """Qwen Code's heuristic, applied to the first bytes of a file."""
    if not head or sniff_encoding(head) is not None:
        return False
    sample = head[:SNIFF_BYTES]
    if b"\x00" in sample:
        return True
    control = sum(1 for b in sample if b < 9 or 13 < b < 32)
    return control / len(sample) > 0.3


def read_head(path: Path) -> bytes:
    ensure_regular(path)  # a FIFO would block the worker thread forever
    with open(path, "rb") as fh:
        return fh.read(SNIFF_BYTES)


def open_text(path: Path, head: bytes) -> IO[str]:
    """A text stream over ``path``: BOM-aware, invalid bytes replaced, newlines kept as written."""
    encoding = sniff_encoding(head) or "utf-8"
    return open(path, encoding=encoding, errors="replace", newline="")


def cap_line(line: str, limit: int = MAX_LINE_CHARS) -> str:
    return line if len(line) <= limit else line[:limit] + TRUNCATION_MARK


def size_refusal(path: str | os.PathLike[str]) -> str | None:
    """Qwen Code's message for a file over its read limit (``File size exceeds the 10MB limit``), or None."""
    megabytes = os.stat(path).st_size / (1024 * 1024)
    if megabytes <= MAX_FILE_MB:
        return None
    return f"File size exceeds the 10MB limit ({megabytes:.2f}MB)"


@dataclass(frozen=True)
class Line:
    text: str
    """The line without its ending, cut to the per-line cap (``... [truncated]`` marks a cut)."""
    ending: str
    """``\\n``, ``\\r\\n``, ``\\r``, or empty for a last line without one."""
    cut: bool = False


def capped_lines(fh: IO[str], limit: int = MAX_LINE_CHARS) -> Iterator[Line]:
    """The lines of a text stream (``newline=""`` endings), each cut at ``limit`` characters.

    Unlike iterating the stream, a line is never held whole: the stream is
    read in fixed chunks and only a line's first ``limit + 1`` characters are
    kept, so a file with no newline costs one chunk of memory, not its size.
    """
    kept: list[str] = []
    kept_len = 0
    while chunk := fh.read(_READ_CHARS):
        while chunk.endswith("\r") and (more := fh.read(1)):
            chunk += more  # keep a "\r\n" split by the chunk boundary in one piece
        pos = 0
        for match in _LINE_END.finditer(chunk):
            if kept_len <= limit:
                kept.append(chunk[pos : min(match.start(), pos + limit + 1 - kept_len)])
            yield _line("".join(kept), match.group(), limit)
            kept, kept_len, pos = [], 0, match.end()
        if kept_len <= limit:
            kept.append(chunk[pos : pos + limit + 1 - kept_len])
        kept_len += len(chunk) - pos
    if kept_len:
        yield _line("".join(kept), "", limit)


def _line(text: str, ending: str, limit: int) -> Line:
    if len(text) > limit:
        return Line(text[:limit] + TRUNCATION_MARK, ending, cut=True)
    return Line(text, ending)


@dataclass
class TextWindow:
    """Some consecutive lines of a file, within Qwen Code's caps."""

    lines: list[Line] = field(default_factory=list)
    total: int | None = None
    """How many lines the file has; None when the read stopped after the window."""
    more: bool = False
    """Lines follow the window."""
    cut_by_chars: bool = False
    """The window hit ``MAX_OUTPUT_CHARS``; its last line carries the truncation mark."""


def read_window(path: Path, head: bytes, start: int, wanted: int, *, count_all: bool, text: str | None = None) -> TextWindow:
    """Up to ``wanted`` lines from 0-based line ``start``, at most ``MAX_OUTPUT_CHARS`` in all.

    The line that crosses the character cap is cut (Qwen Code's rule: at
    least 10 characters of it stay). With ``count_all`` the rest of the file
    is read (chunk by chunk) to count its lines; without, reading stops at
    the first line past the window. ``text``, when given, is read instead of
    the file (an editor buffer).
    """
    window = TextWindow()
    used = 0
    count = 0
    with open_text(path, head) if text is None else io.StringIO(text, newline="") as fh:
        for count, line in enumerate(capped_lines(fh), start=1):
            if count <= start:
                continue
            if len(window.lines) >= wanted or window.cut_by_chars:
                window.more = True
                if count_all:
                    continue
                break
            sep = 1 if window.lines else 0
            if used + sep + len(line.text) > MAX_OUTPUT_CHARS:
                room = max(MAX_OUTPUT_CHARS - used - sep, 10)
                window.lines.append(Line(line.text[:room] + TRUNCATION_MARK, "", cut=True))
                window.cut_by_chars = True
                continue
            window.lines.append(line)
            used += sep + len(line.text)
    if count_all:
        window.total = count
    return window
