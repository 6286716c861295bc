"""Building a scope's ``MEMORY.md`` from its scanned documents, byte for byte as Qwen Code 0.24.4 does.

The index is generated, never hand-edited: one line per memory,
``- [<title>](<target>) — <hook>``, rebuilt from the files after every
change. It goes verbatim into the system prompt of everyone who loads it —
for team memory, every collaborator — so each field is defanged first.

Both tools write the same files (a committed team index in particular), so
this follows the builder 0.24.4 ships (its ``indexer.ts``, the seed-era
one), checked against the real CLI (``tests/data/memory/cli_index/``):
fields are cut hard at 120 UTF-16 units (119 and ``…``), the link target
percent-encodes every character but ``A–Z a–z 0–9 . _ ~ - /`` (its first
120 code points), and the whole line is cut at 150 units (149, trimmed,
``…``) even when that cuts into the link — a later Qwen Code keeps the
link whole, but writing that here would make the two tools rewrite each
other's lines for ever. Over 200 lines or 25,000 units the index is cut
at the last line break before the budget and says so. Lengths are UTF-16
code units, as in JS; a cut through a surrogate pair leaves the lone half,
which Node writes as U+FFFD.

Team memory groups documents with the same normalised description on one
line with ``(also: …)`` and sorts by relative path with a code-unit
comparison, so the committed file is identical on every machine.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..text.jstext import JS_SPACE_RE, js_trim, js_trim_end, u16_head, u16_len
from .model import MemoryDoc

MAX_INDEX_LINE_CHARS = 150
MAX_INDEX_LINES = 200
MAX_INDEX_CHARS = 25_000
MAX_INDEX_FIELD_CHARS = 120
HOOK_SEPARATOR = " \u2014 "
ALSO_OPEN = " (also: "
TRUNCATION_WARNING = (
    "> WARNING: MEMORY.md is too large; only part of it was written. "
    "Keep index entries concise and move detail into topic files."
)

_CONTROLS = re.compile("[\u0000-\u001f\u007f-\u009f]")
_INVISIBLE = re.compile("[\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff\ud800-\udfff]")
"""0.24.4's zero-width and bidi characters, plus lone surrogates: a file read as UTF-8 never holds
one, but a Python ``str`` from elsewhere could, and it could not be written back as UTF-8."""
_TARGET_SAFE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._~-/")
_TRAILING_PUNCT = ".,;:!?)]}'\"`"


def js_slice(value: str, units: int) -> str:
    """``value.slice(0, units)`` in JS as Node writes it: a pair cut in half leaves U+FFFD."""
    head = u16_head(value, units)
    return head + "\ufffd" if u16_len(head) < units and u16_len(value) > u16_len(head) else head


def _cut(value: str, limit: int) -> str:
    """0.24.4's hard cut: over ``limit`` units, the first ``limit - 1`` (end trimmed) and ``…``."""
    if u16_len(value) <= limit:
        return value
    return js_trim_end(js_slice(value, limit - 1)) + "\u2026"


def truncate_field(value: str, limit: int) -> str:
    """Cut to ``limit`` units with ``…``, at a word boundary only when that keeps ≥ 60 % (CJK-safe)."""
    if u16_len(value) <= limit:
        return value
    head = u16_head(value, limit - 1)
    runs = list(JS_SPACE_RE.finditer(head))
    # head.replace(/\s+\S*$/, ''): drop the last whitespace run and whatever follows it
    boundary = js_trim_end(head[: runs[-1].start()]) if runs else head
    cut = boundary if u16_len(boundary) >= limit * 0.6 else head
    return js_trim_end(cut) + "\u2026"


def sanitize_field(value: str) -> str:
    """0.24.4's ``sanitizeIndexField``: controls → space, invisible characters removed, code and link
    markdown defanged, whitespace collapsed, then the hard cut at 120 units."""
    cleaned = _CONTROLS.sub(" ", value)
    cleaned = _INVISIBLE.sub("", cleaned)
    cleaned = cleaned.replace("`", "'").replace("](", "] (")
    cleaned = js_trim(JS_SPACE_RE.sub(" ", cleaned))
    return _cut(cleaned, MAX_INDEX_FIELD_CHARS)


def encode_target(relative_path: str) -> str:
    """0.24.4's ``encodeIndexPathTarget``: the first 120 code points, all but the safe ASCII as UTF-8 ``%XX``."""
    out: list[str] = []
    for ch in relative_path[:MAX_INDEX_FIELD_CHARS]:
        if ch in _TARGET_SAFE:
            out.append(ch)
        else:
            out.extend(f"%{byte:02X}" for byte in ch.encode("utf-8", "surrogatepass"))
    return "".join(out)


def doc_line(doc: MemoryDoc) -> str:
    title = sanitize_field(doc.title) or doc.type
    description = sanitize_field(doc.description) or doc.type
    return f"- [{title}]({encode_target(doc.relative_path)}){HOOK_SEPARATOR}{description}"


def index_line(doc: MemoryDoc, others: Sequence[MemoryDoc] = ()) -> str:
    """One entry (with its team siblings), the whole line cut at 150 units."""
    line = doc_line(doc)
    if others:
        line += f"{ALSO_OPEN}{', '.join(encode_target(o.relative_path) for o in others)})"
    return _cut(line, MAX_INDEX_LINE_CHARS)


def assemble(lines: Sequence[str]) -> str:
    """0.24.4's ``assembleIndex``: the first 200 lines, cut at the last line break before 25,000 units."""
    raw = "\n".join(lines)
    cut_lines = len(lines) > MAX_INDEX_LINES
    text = "\n".join(lines[:MAX_INDEX_LINES]) if cut_lines else raw
    if u16_len(text) > MAX_INDEX_CHARS:
        head = js_slice(text, MAX_INDEX_CHARS + 1)
        at = head.rfind("\n")
        text = text[:at] if at > 0 else js_slice(text, MAX_INDEX_CHARS)
    if not cut_lines and len(text) == len(raw):
        return text
    return f"{text}\n\n{TRUNCATION_WARNING}"


def build_index(docs: Sequence[MemoryDoc]) -> str:
    """The user or project ``MEMORY.md``: one line per document, in scan order (newest first)."""
    return assemble([index_line(doc) for doc in docs])


def normalize_description(description: str) -> str:
    """Lower-cased, whitespace collapsed, trailing punctuation stripped: the team grouping key."""
    collapsed = js_trim(JS_SPACE_RE.sub(" ", description.lower()))
    return js_trim(collapsed.rstrip(_TRAILING_PUNCT))


def _code_unit_key(value: str) -> bytes:
    return value.encode("utf-16-be", "surrogatepass")


def build_team_index(docs: Sequence[MemoryDoc]) -> str:
    """The team ``MEMORY.md``: sorted by path (code units), equal descriptions grouped with ``(also: …)``."""
    ordered = sorted(docs, key=lambda d: _code_unit_key(d.relative_path))
    groups: dict[str, list[MemoryDoc]] = {}
    for doc in ordered:
        norm = normalize_description(doc.description)
        key = f"d:{norm}" if norm else f"u:{doc.relative_path}"
        groups.setdefault(key, []).append(doc)
    return assemble([index_line(members[0], members[1:]) for members in groups.values()])
