"""Building a scope's ``MEMORY.md`` from its scanned documents (Qwen Code's ``memory/indexer.ts``).

The index is generated, never hand-edited: one line per memory,
``- [<title>](<target>) — <hook>``, rebuilt from the files after every
change. It goes verbatim into the system prompt of everyone who loads it —
for team memory, every collaborator — so each field is defanged first.

Variant: **latest-observed** Qwen Code throughout, with reasons. The
seed-era builder cut every line at 150 characters, which can cut inside
the link target (a known bug upstream), and cut paths at 120 code
points — both give links to files that do not exist. It also
percent-encoded every non-ASCII character, so a few CJK file names (nine
bytes per character) could spend the whole 25,000-character budget and
evict every other entry. The latest builder fixes all three: the link is
never cut, the hook takes the room the link leaves (or is dropped below 24
units), printable non-ASCII stays raw, and over budget a two-pass greedy
keeps short lines first. Lengths are UTF-16 code units, as in JS.

Team memory groups documents with the same normalised description on one
line with ``(also: …)`` and sorts by relative path with a code-unit
comparison, so the committed file is identical on every machine.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from qwen_lsp.text.jstext import JS_SPACE, JS_SPACE_RE, js_trim, js_trim_end, u16_head, u16_len
from qwen_lsp.memory.model import MemoryDoc

MAX_INDEX_LINE_CHARS = 150
MAX_INDEX_LINES = 200
MAX_INDEX_CHARS = 25_000
MAX_INDEX_FIELD_CHARS = 120
MIN_INDEX_HOOK_CHARS = 24
HOOK_SEPARATOR = " \u2014 "
ALSO_OPEN = " (also: "
TRUNCATION_WARNING = (
    "> WARNING: MEMORY.md is too large; only part of it was written. "
    "Keep index entries concise and move detail into topic files."
)

_CONTROLS = re.compile("[\u0000-\u001f\u007f-\u009f]")
_INVISIBLE = re.compile("[\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff\ud800-\udfff]")
"""Zero-width and bidi characters, plus lone surrogates (a Python ``str`` holds pairs as one code point)."""
_TARGET_SAFE_ASCII = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._~-/")
_TARGET_ENCODED_NON_ASCII = re.compile(
    f"[{JS_SPACE}\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160\u17b4\u17b5"
    "\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufeff\ufe00-\ufe0f\uffa0\ufff0-\ufffb"
    "\ud800-\udfff\U00010000-\U0010ffff]"
)
"""Non-ASCII that must still be encoded in a link target: whitespace, invisible format characters,
surrogates, and every astral character (JS tests per UTF-16 unit, and a surrogate is on the deny list)."""
_TRAILING_PUNCT = ".,;:!?)]}'\"`"


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
    """As ``sanitizeIndexField``: controls → space, invisible characters removed, code and link markdown defanged, one line, ≤ 120."""
    cleaned = _CONTROLS.sub(" ", value)
    cleaned = _INVISIBLE.sub("", cleaned)
    cleaned = cleaned.replace("`", "'").replace("](", "] (")
    cleaned = js_trim(JS_SPACE_RE.sub(" ", cleaned))
    return truncate_field(cleaned, MAX_INDEX_FIELD_CHARS)


def encode_target(relative_path: str) -> str:
    """Percent-encode a relative path for a link target; ``decodeURIComponent`` gives it back exactly."""
    out: list[str] = []
    for ch in relative_path:
        if ch in _TARGET_SAFE_ASCII or (ord(ch) > 0x9F and not _TARGET_ENCODED_NON_ASCII.match(ch)):
            out.append(ch)
        else:
            out.extend(f"%{byte:02X}" for byte in ch.encode("utf-8", "surrogatepass"))
    return "".join(out)


def index_line(doc: MemoryDoc, others: Sequence[MemoryDoc] = ()) -> str:
    """One entry: the link whole, then siblings that fit, then the hook in the room left."""
    title = sanitize_field(doc.title) or doc.type
    link = f"- [{title}]({encode_target(doc.relative_path)})"
    also = ""
    for other in others:
        target = encode_target(other.relative_path)
        candidate = f"{also}, {target}" if also else target
        if u16_len(link) + len(ALSO_OPEN) + u16_len(candidate) + 1 > MAX_INDEX_LINE_CHARS:
            continue  # dropped whole; a later, shorter sibling may still fit
        also = candidate
    suffix = f"{ALSO_OPEN}{also})" if also else ""
    room = MAX_INDEX_LINE_CHARS - u16_len(link) - u16_len(suffix) - len(HOOK_SEPARATOR)
    hook = sanitize_field(doc.description) or doc.type
    if u16_len(hook) > room and room < MIN_INDEX_HOOK_CHARS:
        return f"{link}{suffix}"
    return f"{link}{HOOK_SEPARATOR}{truncate_field(hook, room)}{suffix}"


def trim_to_budget(lines: Sequence[str]) -> str:
    """First 200 lines; over 25,000 units, keep lines ≤ 150 first, then any, in original order."""
    entries = list(lines[:MAX_INDEX_LINES])
    raw = "\n".join(entries)
    if u16_len(raw) <= MAX_INDEX_CHARS:
        return raw
    sizes = [u16_len(line) for line in entries]
    kept: set[int] = set()
    size = 0
    for limit in (MAX_INDEX_LINE_CHARS, MAX_INDEX_CHARS):
        for i, line_size in enumerate(sizes):
            if i in kept or line_size > limit:
                continue
            grown = size + (1 if kept else 0) + line_size
            if grown > MAX_INDEX_CHARS:
                continue
            size = grown
            kept.add(i)
    return "\n".join(line for i, line in enumerate(entries) if i in kept)


def assemble(lines: Sequence[str]) -> str:
    raw = "\n".join(lines)
    trimmed = trim_to_budget(lines)
    if len(lines) <= MAX_INDEX_LINES and len(trimmed) == len(raw):
        return trimmed
    return f"{trimmed}\n\n{TRUNCATION_WARNING}"


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
