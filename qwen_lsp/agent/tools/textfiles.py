"""Telling text from binary, and decoding text that may not be clean UTF-8.

The binary test is Qwen Code's ``isBinaryFile``: look at the first 4 KiB;
a byte-order mark means text, a NUL byte means binary, and so does more than
30% of control characters other than tab/newline/CR/FF. Text is decoded as
UTF-8 (or UTF-16 when it starts with that BOM) with undecodable bytes
replaced, so one bad byte never hides a file from the model.
"""

from __future__ import annotations

import codecs
from pathlib import Path
from typing import IO

from ...files import ensure_regular

SNIFF_BYTES = 4096
MAX_LINE_CHARS = 2000
"""Per-line cap (Qwen Code's older ``MAX_LINE_LENGTH_TEXT_FILE``): one minified line cannot eat the budget."""
TRUNCATION_MARK = "... [truncated]"

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
