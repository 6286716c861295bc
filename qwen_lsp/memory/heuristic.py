"""The deterministic recall scorer (Qwen Code's ``recall.ts``, "v2"): what recall falls back to without a model.

This is Qwen Code's current scorer (``selectRelevantAutoMemoryDocuments`` at
the recall-eval fixture's commit), not the seed-era v1: v1 gave every
document with a body a point, so any query returned five filler memories —
a real bug v2 fixes. v3 (structured keyword fields, ``\\p{L}`` tokens) is
not adopted: our memories carry no keyword fields and v2 is the scorer the
quality bar was set against.

How a document scores against a query:

* Both sides are NFKC-normalised and lower-cased, so full-width ``ＡＰＩ``
  matches ``api``.
* The query becomes tokens: every ASCII run ``[a-z0-9]{3,}`` is one token; a
  run of Han / Hiragana / Katakana (by script extension) / Hangul becomes
  its code-point bigrams (``数据库`` → ``数据``, ``据库``), since those
  scripts are written without spaces. A lone CJK character gives nothing.
  At most 64 distinct tokens: the first 32, plus the 32 most recently seen
  after them.
* Per token, by substring: +4 if it occurs in the title, +3 in the
  description, +1 in the first 1,200 characters of the body.
* A document with no lexical hit scores 0 and is never returned (so a query
  about nothing stored returns nothing); otherwise up to +2 for query tokens
  that are the memory type's keywords.
* Order: score, then most recent, then input order (project before user).

Bounds (ours; Qwen Code has none): the query is tokenized from at most its
first and last 8,192 characters (the tokens kept are the head and the tail
anyway), and titles and descriptions are matched on their first 4,096
UTF-16 units — a frontmatter line longer than that is not a description a
person wrote. Work per query is then at most 64 tokens × (4 + 4 + 1.2 KB)
per document, and each document's normalised text is cached by content.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from .model import MemoryDoc, Topic
from ..text.jstext import u16_head

MAX_QUERY_TOKENS = 64
"""``MAX_HEURISTIC_QUERY_TOKENS``: half kept from the start of the query, half from the end."""
MAX_BODY_CHARS = 1_200
"""``MAX_DOC_BODY_CHARS``: the body is scored (and later shown) up to here, in UTF-16 units."""
MAX_QUERY_CHARS = 16_384
"""Our bound: a longer query is tokenized from its first and last half of this."""
MAX_FIELD_CHARS = 4_096
"""Our bound on the title and the description matched, in UTF-16 units."""
TYPE_KEYWORD_BOOST_CAP = 2
TITLE_WEIGHT, DESCRIPTION_WEIGHT, BODY_WEIGHT = 4, 3, 1

TYPE_KEYWORDS: dict[Topic, frozenset[str]] = {
    "user": frozenset({"user", "preference", "preferences", "background", "role", "terse"}),
    "feedback": frozenset({"feedback", "rule", "rules", "avoid", "style", "summary"}),
    "project": frozenset({"project", "goal", "goals", "incident", "deadline", "release"}),
    "reference": frozenset({"reference", "dashboard", "ticket", "docs", "doc", "link"}),
}

EMPTY_BODY_MARKER = "_No entries yet._"

# Code points of \p{Script=Han}, \p{Script=Hiragana}, \p{Script_Extensions=Katakana}
# and \p{Script=Hangul} (Unicode 16, generated with the ``regex`` package). Script
# *extensions* matter: the ideographic comma and full stop (U+3001, U+3002) and
# the prolonged sound mark (U+30FC) belong to Katakana's, so they join a CJK run.
_CJK_RANGES = (
    (0x0305, 0x0305), (0x0323, 0x0323), (0x1100, 0x11FF), (0x2E80, 0x2E99), (0x2E9B, 0x2EF3),
    (0x2F00, 0x2FD5), (0x3001, 0x3003), (0x3005, 0x3005), (0x3007, 0x3011), (0x3013, 0x301F),
    (0x3021, 0x3029), (0x302E, 0x3035), (0x3037, 0x303D), (0x3041, 0x3096), (0x3099, 0x30FF),
    (0x3131, 0x318E), (0x31F0, 0x321E), (0x3260, 0x327E), (0x32D0, 0x32FE), (0x3300, 0x3357),
    (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xA960, 0xA97C), (0xAC00, 0xD7A3), (0xD7B0, 0xD7C6),
    (0xD7CB, 0xD7FB), (0xF900, 0xFA6D), (0xFA70, 0xFAD9), (0xFE45, 0xFE46), (0xFF61, 0xFFBE),
    (0xFFC2, 0xFFC7), (0xFFCA, 0xFFCF), (0xFFD2, 0xFFD7), (0xFFDA, 0xFFDC), (0x16FE2, 0x16FE3),
    (0x16FF0, 0x16FF6), (0x1AFF0, 0x1AFF3), (0x1AFF5, 0x1AFFB), (0x1AFFD, 0x1AFFE), (0x1B000, 0x1B128),
    (0x1B132, 0x1B132), (0x1B150, 0x1B152), (0x1B155, 0x1B155), (0x1B164, 0x1B168), (0x1F200, 0x1F200),
    (0x20000, 0x2A6DF), (0x2A700, 0x2B81E), (0x2B820, 0x2CEAD), (0x2CEB0, 0x2EBE0), (0x2EBF0, 0x2EE5D),
    (0x2F800, 0x2FA1D), (0x30000, 0x3134A), (0x31350, 0x33479),
)
_CJK_CLASS = "".join(f"{chr(a)}-{chr(b)}" if a != b else chr(a) for a, b in _CJK_RANGES)


@lru_cache(maxsize=1)
def _token_run() -> re.Pattern[str]:
    """Compiled at the first recall, not at import: the CJK class takes ~3 ms to compile, paid by every start.

    Two character classes, no nesting: each position is looked at a bounded number of times.
    """
    return re.compile(f"[a-z0-9]{{3,}}|[{_CJK_CLASS}]+")


def normalize(text: str) -> str:
    """NFKC, then lower-case: what both the query and every field are compared in."""
    return unicodedata.normalize("NFKC", text).lower()


def normalize_body(body: str) -> str:
    """The body as scored and shown: trimmed, and the empty-topic placeholder counts as no body."""
    trimmed = body.strip()
    return "" if trimmed == EMPTY_BODY_MARKER else trimmed


def tokenize(query: str) -> list[str]:
    """The query's distinct tokens, capped at :data:`MAX_QUERY_TOKENS` (head first, then the recent tail)."""
    if len(query) > MAX_QUERY_CHARS:
        half = MAX_QUERY_CHARS // 2
        query = f"{query[:half]} {query[-half:]}"
    edge = MAX_QUERY_TOKENS // 2
    head: dict[str, None] = {}
    tail: dict[str, None] = {}

    def add(token: str) -> None:
        if token in head:
            return
        if token in tail:  # seen again: it becomes the most recent
            del tail[token]
            tail[token] = None
            return
        if len(head) < edge:
            head[token] = None
            return
        tail[token] = None
        if len(tail) > edge:
            del tail[next(iter(tail))]

    for match in _token_run().finditer(normalize(query)):
        run = match.group()
        if run[0] <= "\x7f":
            add(run)
        else:
            for i in range(len(run) - 1):
                add(run[i : i + 2])
    return [*head, *tail]


@dataclass(frozen=True, slots=True)
class _Fields:
    """A document's normalised title, description and body, stored as one NUL-separated string.

    A token (letters, digits, CJK) never contains NUL, so it cannot match
    across two fields, and one ``find`` tells both whether the token occurs
    at all and in which field it first does: the fields before that one are
    known misses without scanning them again.
    """

    joined: str
    description_start: int
    body_start: int


@lru_cache(maxsize=8192)
def _fields(title: str, description: str, body: str) -> _Fields:
    t = normalize(u16_head(title, MAX_FIELD_CHARS))
    d = normalize(u16_head(description, MAX_FIELD_CHARS))
    b = normalize(u16_head(normalize_body(body), MAX_BODY_CHARS))
    return _Fields(f"{t}\0{d}\0{b}", len(t) + 1, len(t) + len(d) + 2)


def score(tokens: Sequence[str], doc: MemoryDoc) -> int:
    """The document's score for already-tokenized query ``tokens`` (0: not relevant at all)."""
    f = _fields(doc.title, doc.description, doc.body)
    joined, desc_at, body_at = f.joined, f.description_start, f.body_start
    lexical = 0
    for token in tokens:
        at = joined.find(token)
        if at < 0:
            continue
        if at < desc_at:  # first seen in the title; the description and the body may have it too
            lexical += TITLE_WEIGHT
            at = joined.find(token, desc_at)
            if at < 0:
                continue
        if at < body_at:
            lexical += DESCRIPTION_WEIGHT
            at = joined.find(token, body_at)
            if at < 0:
                continue
        lexical += BODY_WEIGHT
    if lexical == 0:
        return 0
    keywords = TYPE_KEYWORDS[doc.type]
    return lexical + min(sum(1 for token in tokens if token in keywords), TYPE_KEYWORD_BOOST_CAP)


def rank(query: str, docs: Iterable[MemoryDoc], limit: int) -> list[MemoryDoc]:
    """The ``limit`` best documents with a score above 0: by score, then newest, then input order."""
    tokens = tokenize(query)
    if not tokens or limit <= 0:
        return []
    scored = [(s, doc) for doc in docs if (s := score(tokens, doc)) > 0]
    scored.sort(key=lambda pair: (-pair[0], -pair[1].mtime))  # stable: ties keep input order
    return [doc for _, doc in scored[:limit]]
