"""Globs compiled for linear-time matching: untrusted patterns must never freeze the server.

Globs come from places an attacker controls: ``paths:`` in a cloned
repository's SKILL.md files and rules, and the model's ``glob`` and
``grep_search`` calls. wcmatch translates globs to Python regexes full of
lookarounds and nested lazy quantifiers, so ``**/+(?|?)Q`` backtracks
exponentially while holding the GIL (10 s for a 24-character file name,
doubling per character). Here a glob is translated to a regex without
lookarounds and compiled with RE2, whose matching time is linear in the
path, whatever the pattern.

The dialect is picomatch's with ``dot: true`` (what Qwen Code uses), over
normalized relative paths (no ``.``/``..`` segments, no doubled or trailing
slashes — every caller passes such paths, which is why the guards wcmatch
adds against those segments are not needed): ``*`` and ``?`` stay within a
segment, a ``**`` segment crosses any number of directories, ``[...]``
classes (``!``/``^`` negation, ranges, POSIX names), ``\\`` escapes, and,
when ``extglob`` is on, ``@( ) *( ) +( ) ?( )``. Braces are expanded first
(bracex, at most 1000 alternatives).

The one construct a regex cannot express without lookahead is the
negated extglob ``!(...)``. A glob with one (not nested in another group)
is matched by splitting the path around it and checking each piece with
RE2 (see :func:`_negation_matcher`), within a fixed budget of steps;
a second ``!(...)`` is refused. Every refusal is an :class:`InvalidGlob`
whose message says why: callers drop that glob and keep the rest.
"""

from __future__ import annotations

import bisect
import logging
import re
from collections.abc import Callable

from .linear_regex import LinearRegexError, compile_linear

EXPANSION_LIMIT = 1000
"""Brace alternatives one glob may expand to (wcmatch's own default)."""
MAX_GROUP_DEPTH = 32
"""Extglob groups nested deeper than this are refused (the translator recurses once per level)."""
MAX_NEGATED_PATH = 1024
"""Longest path a ``!(...)`` glob is tried on (longer ones never match it)."""
MAX_NEGATED_STEPS = 5_000
"""Sub-matches one ``!(...)`` glob may try on one path (a few ms) before it counts as not matching."""

_EXTGLOB_OPENERS = frozenset("@*+?!")
_EXTGLOB_SUFFIX = {"@": "", "*": "*", "+": "+", "?": "?"}

Matcher = Callable[[str], bool]

log = logging.getLogger(__name__)


class InvalidGlob(ValueError):
    """A glob that cannot be compiled safely; the message says why."""


class _Negation(Exception):
    """Raised by the translator at a top-level ``!(...)``: where it starts and ends in the glob."""

    def __init__(self, start: int, end: int) -> None:
        super().__init__(start, end)
        self.start = start
        self.end = end


def expand_braces(pattern: str) -> list[str]:
    """Brace alternatives of ``pattern`` (escapes kept); refuses expansions past :data:`EXPANSION_LIMIT`."""
    import bracex  # imported where first used: a one-shot `qwen-lsp chat` expands no glob before its request

    try:
        return bracex.expand(pattern, keep_escapes=True, limit=EXPANSION_LIMIT)
    except bracex.ExpansionLimitException:  # not a ValueError: it used to escape every caller
        raise InvalidGlob(f"brace expansion gives more than {EXPANSION_LIMIT} patterns") from None
    except (ValueError, RecursionError) as exc:
        raise InvalidGlob(str(exc) or type(exc).__name__) from None


def compile_alternative(
    alternative: str, *, ignore_case: bool = False, extglob: bool = True, lazy: bool = False
) -> Matcher:
    """A full-match predicate for one brace-free glob; raises :class:`InvalidGlob`.

    ``lazy`` defers the RE2 compile (~0.2 ms) to the first match: activation
    indexes hold thousands of globs and most are never tried. A lazy glob
    that RE2 then refuses (a reversed range like ``[z-a]``) is logged and
    matches nothing.
    """
    try:
        source = translate(alternative, extglob=extglob)
    except _Negation as neg:
        return _negation_matcher(alternative, neg, ignore_case)
    if lazy:
        return _LazyGlob(source, ignore_case)
    return _eager(source, ignore_case)


def compile_any(alternatives: list[str], *, ignore_case: bool = False, extglob: bool = True, lazy: bool = False) -> Matcher:
    """One predicate true when any alternative matches (used for ``!{a,b}`` and for tool globs)."""
    matchers = [compile_alternative(alt, ignore_case=ignore_case, extglob=extglob, lazy=lazy) for alt in alternatives]
    if len(matchers) == 1:
        return matchers[0]
    return lambda path: any(m(path) for m in matchers)


def compile_pattern(pattern: str, *, ignore_case: bool = False, extglob: bool = True, basename: bool = False) -> Matcher:
    """A model-supplied glob (braces expanded); with ``basename``, a glob without ``/`` matches file names at any depth."""
    alternatives = expand_braces(pattern)
    if basename:
        alternatives = [alt if "/" in alt else "**/" + alt for alt in alternatives]
    return compile_any(alternatives, ignore_case=ignore_case, extglob=extglob)


def _eager(source: str, ignore_case: bool) -> Matcher:
    try:
        compiled = compile_linear(source, ignore_case=ignore_case)
    except LinearRegexError as exc:
        raise InvalidGlob(str(exc)) from None
    return lambda path: compiled.fullmatch(path) is not None


class _LazyGlob:
    __slots__ = ("_ignore_case", "_match", "_source")

    def __init__(self, source: str, ignore_case: bool) -> None:
        self._source = source
        self._ignore_case = ignore_case
        self._match: Matcher | None = None

    def __call__(self, path: str) -> bool:
        if self._match is None:
            try:
                self._match = _eager(self._source, self._ignore_case)
            except InvalidGlob as exc:
                log.warning("glob regex %r does not compile: %s", self._source, exc)
                self._match = lambda _path: False
        return self._match(path)


def _negation_matcher(glob: str, neg: _Negation, ignore_case: bool) -> Matcher:
    """``pre!(X)post`` without lookarounds, with the ksh/bash meaning.

    The path matches when it splits into ``A B C`` with ``pre`` matching
    ``A``, ``post`` matching ``C``, and ``B`` holding no ``/`` and not
    matching ``X``. Every piece is an RE2 full match, and ``B`` never
    crosses a segment, so a path of n characters costs at most
    n × (segment length) small RE2 calls — and never more than
    :data:`MAX_NEGATED_STEPS`: past that (only hostile names get there)
    the path counts as not matching, rather than a backtracking lookahead
    running for minutes.
    """
    pre, body, post = glob[: neg.start], glob[neg.start + 2 : neg.end - 1], glob[neg.end :]
    try:
        pre_rx = _eager(_Translator(pre, True).segments(complete=False), ignore_case)
        post_rx = _eager(_Translator(post, True).segments(segment_start=False), ignore_case)
        inner = _Translator(body, True)
        inner.depth = 1  # a `!(` inside the negated group is nested
        group = inner.group(0, closing=False)
        excluded_rx = _eager(group[0] if group else "", ignore_case)
    except _Negation:
        raise InvalidGlob(
            "only one negated extglob !(...) per pattern is supported: "
            "more would need unbounded backtracking; use a separate negated entry instead"
        ) from None

    def matches(path: str) -> bool:
        n = len(path)
        if n > MAX_NEGATED_PATH:
            return False
        ends: list[int] | None = None
        steps = 0
        for k in range(n + 1):
            if not pre_rx(path[:k]):
                continue
            if ends is None:
                ends = [j for j in range(n + 1) if post_rx(path[j:])]
            slash = path.find("/", k)
            segment_end = n if slash < 0 else slash
            for j in ends[bisect.bisect_left(ends, k) : bisect.bisect_right(ends, segment_end)]:
                steps += 1
                if steps > MAX_NEGATED_STEPS:
                    return False
                if not excluded_rx(path[k:j]):
                    return True
        return False

    return matches


def translate(glob: str, *, extglob: bool = True) -> str:
    """The RE2 source (full match) for one brace-free glob."""
    return _Translator(glob, extglob).segments()


class _Translator:
    """A recursive-descent pass over one glob, producing lookaround-free regex source."""

    def __init__(self, glob: str, extglob: bool) -> None:
        self.glob = glob
        self.extglob = extglob
        self.depth = 0
        self.steps = 0
        self.budget = 2 * len(glob) + 1000

    def segments(self, *, segment_start: bool = True, complete: bool = True) -> str:
        """The whole glob: ``**`` segments become ``(?:[^/]+/)*`` (or ``.*`` at the end).

        The pieces around a ``!(...)`` continue a segment: ``segment_start=False``
        for the tail and ``complete=False`` for the head, where a ``**`` touching
        the split is two plain stars.
        """
        glob = self.glob
        out: list[str] = []
        i = 0
        at_segment_start = segment_start
        while i < len(glob):
            if at_segment_start and glob.startswith("**", i):
                end = i + 2  # exactly two stars: wcmatch reads `***` as a plain `*`
                if end == len(glob) and complete:
                    out.append("(?s:.*)")
                    i = end
                    continue
                if end < len(glob) and glob[end] == "/":
                    out.append("(?:[^/]+/)*")
                    i = end
                    while i < len(glob) and glob[i] == "/":
                        i += 1
                    continue
            if glob[i] == "/":
                out.append("/")
                while i < len(glob) and glob[i] == "/":
                    i += 1
                at_segment_start = True
                continue
            piece, i = self.atom(i)
            out.append(piece)
            at_segment_start = False
        return "".join(out)

    def atom(self, i: int) -> tuple[str, int]:
        """One token starting at ``i``: its regex and the index after it."""
        glob = self.glob
        c = glob[i]
        self.steps += 1
        if self.steps > self.budget:  # an unclosed `[` or `@(` rescans what follows: many of them would be quadratic
            raise InvalidGlob("glob too complex: too many unclosed [ or ( groups")
        if c == "\\":
            if i + 1 < len(glob):
                return re.escape(glob[i + 1]), i + 2
            return re.escape(c), i + 1
        if self.extglob and c in _EXTGLOB_OPENERS and glob.startswith("(", i + 1):
            self.depth += 1
            if self.depth > MAX_GROUP_DEPTH:
                raise InvalidGlob(f"extglob groups nested more than {MAX_GROUP_DEPTH} deep")
            try:
                group = self.group(i + 2)
            finally:
                self.depth -= 1
            if group is not None:
                if c == "!":
                    if self.depth:
                        raise InvalidGlob("a negated extglob !(...) inside another group is not supported")
                    raise _Negation(i, group[1])
                body, end = group
                return f"(?:{body}){_EXTGLOB_SUFFIX[c]}", end
        if c == "*":
            i += 1
            while i < len(glob) and glob[i] == "*" and not (self.extglob and glob.startswith("(", i + 1)):
                i += 1
            return "[^/]*", i
        if c == "?":
            return "[^/]", i + 1
        if c == "[":
            bracket, scanned_to = _bracket(glob, i)
            self.steps += scanned_to - i
            if bracket is not None:
                return bracket, scanned_to
        return re.escape(c), i + 1

    def group(self, start: int, *, closing: bool = True) -> tuple[str, int] | None:
        """An extglob body from ``start`` to its ``)``: ``(alternatives, index after ')')``, or None if unclosed.

        ``closing=False`` reads a body whose parentheses were already stripped, up to the end.
        """
        glob = self.glob
        alternatives: list[str] = []
        current: list[str] = []
        i = start
        while i < len(glob):
            c = glob[i]
            if c == ")":
                alternatives.append("".join(current))
                return "|".join(alternatives), i + 1
            if c == "|":
                alternatives.append("".join(current))
                current = []
                i += 1
                continue
            if c == "/":
                current.append("/")
                i += 1
                continue
            piece, i = self.atom(i)
            current.append(piece)
        if closing:
            return None
        alternatives.append("".join(current))
        return "|".join(alternatives), i


_POSIX_CLASS = re.compile(r"\[:(alnum|alpha|ascii|blank|cntrl|digit|graph|lower|print|punct|space|upper|word|xdigit):\]")


def _bracket(glob: str, start: int) -> tuple[str | None, int]:
    """A ``[...]`` class at ``start`` as an RE2 class that never matches ``/``, and the index after it.

    The class is None when unclosed (a literal ``[``); the index then says how far the scan went.
    """
    i = start + 1
    negated = i < len(glob) and glob[i] in "!^"
    if negated:
        i += 1
    items: list[str] = []
    first = True
    while i < len(glob):
        c = glob[i]
        if c == "]" and not first:
            body = "".join(items)
            return (f"[^/{body}]" if negated else f"(?:[{body}])"), i + 1
        first = False
        posix = _POSIX_CLASS.match(glob, i)
        if posix:
            items.append(_SLASH_FREE_POSIX.get(posix.group(1), posix.group(0)))
            i = posix.end()
            continue
        if c == "\\" and i + 1 < len(glob):
            c = glob[i + 1]
            i += 1
        if c == "/":
            return None, i  # picomatch treats a class holding a slash as literal text
        if i + 2 < len(glob) and glob[i + 1] == "-" and glob[i + 2] != "]":
            high = glob[i + 2]
            if high == "\\" and i + 3 < len(glob):
                high = glob[i + 3]
                i += 1
            items.append(_range(c, high))
            i += 3
            continue
        items.append(_class_char(c))
        i += 1
    return None, i


def _range(low: str, high: str) -> str:
    """``low-high`` in a class, split around ``/`` so a range like ``!-0`` cannot cross a directory boundary."""
    if low <= "/" <= high:
        parts = [(low, "."), ("0", high)]
        return "".join(f"{_class_char(a)}-{_class_char(b)}" for a, b in parts if a <= b)
    return f"{_class_char(low)}-{_class_char(high)}"


def _class_char(c: str) -> str:
    return "\\" + c if c in "\\]^-[" else c


_PUNCT = "".join(_class_char(c) for c in "!\"#$%&'()*+,-.:;<=>?@[\\]^_`{|}~")
_SLASH_FREE_POSIX = {
    "punct": _PUNCT,
    "graph": "[:alnum:]" + _PUNCT,
    "print": "[:alnum:] " + _PUNCT,
    "ascii": "\\x00-\\x2e\\x30-\\x7f",
}
"""POSIX classes that contain ``/``, spelled without it (a class never matches a directory separator)."""
