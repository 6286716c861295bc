"""JavaScript's notion of whitespace and string length, for the formats Qwen Code defines in JS.

One module for every core that must cut or trim as Qwen Code does (context
files, the skills listing, memory indexes, recall).

Index lines are capped in UTF-16 code units (JS ``.length``) and fields are
trimmed with JS ``trim()``/``\\s``, whose whitespace set differs from
Python's (``\\ufeff`` is JS whitespace; ``\\x1c``–``\\x1f`` and ``\\x85`` are
not). Using Python's built-ins would make our ``MEMORY.md`` differ from
Qwen Code's on the same files, and the byte-identical "no rewrite" rule
would then ping-pong between the two tools.
"""

from __future__ import annotations

import re

JS_WHITESPACE = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
"""The characters JS ``trim()`` removes."""
JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
"""The members of JS ``\\s`` (WhiteSpace ∪ LineTerminator), as a character-class body."""
JS_SPACE_RE = re.compile(f"[{JS_SPACE}]+")
_TRIM_CHARS = JS_WHITESPACE


def js_trim(value: str) -> str:
    return value.strip(_TRIM_CHARS)


def js_trim_end(value: str) -> str:
    return value.rstrip(_TRIM_CHARS)


def is_js_space(ch: str) -> bool:
    return ch in _TRIM_CHARS


def u16_len(value: str) -> int:
    """``value.length`` in JS: astral characters count as two code units.

    Counted by the UTF-16 codec in C, not per character in Python: a skill listing or memory
    index is measured on every request. ``surrogatepass`` counts a lone surrogate as one unit, as JS does.
    """
    return len(value) if value.isascii() else len(value.encode("utf-16-le", "surrogatepass")) // 2


def u16_head(value: str, units: int) -> str:
    """The longest prefix of at most ``units`` UTF-16 code units.

    A cut through a surrogate pair drops that character, which is what
    Qwen Code's latest ``truncateIndexField`` does when it backs off a lone
    high surrogate.
    """
    if units <= 0:
        return ""
    used = 0
    for i, ch in enumerate(value):
        used += 2 if ord(ch) > 0xFFFF else 1
        if used > units:
            return value[:i]
    return value
