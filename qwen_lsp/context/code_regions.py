"""Where an ``@path`` counts as code (and is not imported), as Qwen Code 0.24 decides it.

Qwen Code lexes the file with ``marked`` and walks the token tree, marking
``code`` and ``codespan`` tokens. The walk is narrower than "everything
Markdown calls code", and the output depends on it:

* a **list** or a **table** token has no ``tokens`` of its own, so nothing
  inside a list item or a table cell is ever code: a fence inside a list
  item is imported;
* each child is located by searching its raw text in the parent's raw
  text. Inside a **blockquote** the children are lexed from the text with
  the ``>`` markers removed, so a child is only found when that makes no
  difference: it sits on one line or continues lazily (no ``>`` on its
  later lines), no ``>`` blank line comes before it, and (for the blocks
  whose raw text swallows the following blank lines: headings, rules,
  indented code, lists, quotes) none follows it. The first child that is
  not found ends the walk of that blockquote;
* marked turns ``\r\n`` and ``\r`` into ``\n`` before lexing, and the
  offsets it finds are then compared with offsets in the *original* text.
  In a CRLF file the regions therefore drift one character per earlier
  line break. We reproduce that, since it decides what gets imported.

We parse with markdown-it (CommonMark plus GFM tables), which gives block
line ranges, and apply those rules on top. Block-level corner cases where
marked and CommonMark disagree remain (see ``docs/context.md``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token


@cache
def _markdown() -> MarkdownIt:
    """The parser, imported and built on first use: most context files never need it (see :class:`CodeRegions`)."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table")


_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_BACKTICKS = re.compile(r"`+")
_FENCE_MARKERS = tuple((mark, re.compile(re.escape(mark * 3)).search) for mark in "`~")
_QUOTE_MARKER = re.compile(r" {0,3}>")
_QUOTE_PREFIX = re.compile(r"(?: {0,3}>[ \t]?)*")
_NEVER_WALKED = frozenset({"bullet_list_open", "ordered_list_open", "table_open"})
_KEEPS_PARAGRAPH_RAW = frozenset({"paragraph_open"})  # marked's paragraph raw stops before the blank line


def _line_starts(content: str) -> list[int]:
    starts = [0]
    starts.extend(m.end() for m in _LINE_BREAK.finditer(content))
    starts.append(len(content))
    return starts


def _inline_code_spans(content: str, lo: int, hi: int, markups: list[str]) -> list[tuple[int, int]]:
    """Locate, in order, the code spans markdown-it found between ``lo`` and ``hi``.

    markdown-it gives inline tokens no character offsets, only their
    backtick ``markup``; a code span opens and closes with a run of exactly
    that many backticks, so we walk the runs in the source.
    """
    spans: list[tuple[int, int]] = []
    runs = [(m.start(), m.end()) for m in _BACKTICKS.finditer(content, lo, hi)]
    k = 0
    for markup in markups:
        width = len(markup)
        while k < len(runs) and runs[k][1] - runs[k][0] != width:
            k += 1
        close = k + 1
        while close < len(runs) and runs[close][1] - runs[close][0] != width:
            close += 1
        if close >= len(runs):
            break
        spans.append((runs[k][0], runs[close][1]))
        k = close + 1
    return spans


@dataclass
class _Frame:
    """An open container token during the walk."""

    kind: str
    map: list[int]
    walked: bool
    broken: bool = False  # a blockquote whose walk was cut by a child not found


class _Walk:
    def __init__(self, content: str) -> None:
        self.content = content
        self.starts = _line_starts(content)
        self.regions: list[tuple[int, int]] = []

    def offset(self, line: int) -> int:
        return self.starts[min(line, len(self.starts) - 1)]

    def _line(self, n: int) -> str:
        if n + 1 >= len(self.starts):
            return ""
        return self.content[self.starts[n] : self.starts[n + 1]].rstrip("\r\n")

    def _blank_in_quote(self, n: int) -> bool:
        return not _QUOTE_PREFIX.sub("", self._line(n), count=1).strip()

    def found_in_quote(self, token: Token, quote: _Frame) -> bool:
        """Would marked's ``indexOf`` find this direct child of ``quote`` in the quote's raw text?"""
        first, end = token.map or (0, 0)
        if any(self._blank_in_quote(n) for n in range(quote.map[0], first)):
            return False
        if any(_QUOTE_MARKER.match(self._line(n)) for n in range(first + 1, end)):
            return False
        if token.type in _KEEPS_PARAGRAPH_RAW:
            return True
        return not (end < quote.map[1] and self._blank_in_quote(end))

    def _blank(self, n: int) -> bool:
        return n + 1 < len(self.starts) and not self._line(n).strip(" \t")

    def _fence_end(self, next_line: int) -> int:
        """End of marked's fence raw: the closing line, plus its newline when a non-blank line follows.

        (A lone newline between two blocks is appended to the first one's
        raw text; a blank line becomes a token of its own.) The exact end
        only matters in CRLF files, where regions drift onto later text.
        """
        start = self.offset(next_line)
        if start == 0 or self.content[start - 1] != "\n":
            return start
        return start - 1 if start < len(self.content) and self._blank(next_line) else start

    def _code_block_end(self, next_line: int) -> int:
        """Indented code's raw swallows the blank lines after it."""
        while self._blank(next_line):
            next_line += 1
        return self.offset(next_line)

    def run(self) -> list[tuple[int, int]]:
        stack: list[_Frame] = []
        for token in _markdown().parse(self.content):
            if token.nesting == -1:
                if stack:
                    stack.pop()
                continue
            parent = stack[-1] if stack else None
            walked = parent is None or parent.walked
            if walked and parent is not None and parent.kind == "blockquote_open" and token.map is not None:
                if parent.broken or not self.found_in_quote(token, parent):
                    parent.broken = True
                    walked = False
            if token.nesting == 1:
                stack.append(_Frame(token.type, token.map or [0, 0], walked and token.type not in _NEVER_WALKED))
                continue
            if not walked or token.map is None:
                continue
            lo, hi = self.offset(token.map[0]), self.offset(token.map[1])
            if token.type == "fence":
                self.regions.append((lo, self._fence_end(token.map[1])))
            elif token.type == "code_block":
                self.regions.append((lo, self._code_block_end(token.map[1])))
            elif token.type == "inline" and token.children:
                markups = [c.markup for c in token.children if c.type == "code_inline"]
                if markups:
                    self.regions.extend(_inline_code_spans(self.content, lo, hi, markups))
        return self.regions


def find_code_regions(content: str) -> list[tuple[int, int]]:
    """``[start, end)`` offsets of the code blocks and code spans Qwen Code would not import from.

    The offsets are in the text with line breaks normalised to ``\n`` and
    are meant to be compared with offsets in ``content`` (see above).
    """
    return _Walk(_LINE_BREAK.sub("\n", content)).run()


class CodeRegions:
    """Code regions of one text, computed only when an answer depends on them.

    Parsing Markdown costs far more than reading the file, and most ``@``
    references can be decided without it: a reference cannot be inside code
    when no fence opener precedes it, its line is not indented or inside a
    container, and its paragraph (code spans never cross a blank line) has
    no backtick. Callers also skip the question when both answers give the
    same output (a missing target keeps its text either way). With a
    ``\r`` in the text the regions drift away from the lines they belong
    to, so there is no shortcut then.
    """

    def __init__(self, content: str) -> None:
        self._content = content
        self._regions: list[tuple[int, int]] | None = None
        self._first_fence: int | None = None  # where the first fence opener could start; len+1 if none
        self._clear_paragraph = (0, 0)  # [start, end) of the last paragraph found without a backtick

    def _fence_start(self) -> int:
        """Where the first fence marker starts (``len + 1`` if none); ``-1`` with a ``\r``, which allows no shortcut."""
        text = self._content
        if "\r" in text:
            return -1
        first = len(text) + 1
        # A one-character test is a memchr: far cheaper than a three-character search that finds nothing.
        # The search itself is a compiled literal: str.find takes ~3 µs on a page with many single backticks.
        for marker, search in _FENCE_MARKERS:
            if marker in text:
                found = search(text)
                if found is not None and found.start() < first:
                    first = found.start()
        return first

    def contains(self, pos: int) -> bool:
        if self._regions is None:
            text = self._content
            first = self._first_fence
            if first is None:
                first = self._first_fence = self._fence_start()
            if pos <= first:  # no fence opener before it (and no \r): the cheap tests may decide
                line_start = text.rfind("\n", 0, pos) + 1  # no \r here: a text with one has no shortcut
                lead = text[line_start]  # pos is inside the text, so its line has a first character
                if not (lead in " \t>-*+" or lead.isdigit()):
                    clear_start, clear_end = self._clear_paragraph
                    if clear_start < pos < clear_end:  # the paragraph of an earlier answer: no backtick in it
                        return False
                    para_start = max(text.rfind("\n\n", 0, pos), 0)
                    para_end = text.find("\n\n", pos)
                    if para_end == -1:
                        para_end = len(text)
                    if text.find("`", para_start, para_end) == -1:
                        self._clear_paragraph = (para_start, para_end)
                        return False
            self._regions = find_code_regions(text)
        return any(lo <= pos < hi for lo, hi in self._regions)
