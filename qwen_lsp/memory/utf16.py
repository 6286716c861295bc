"""String lengths as JavaScript counts them: UTF-16 code units.

Qwen Code's limits (1,200-character bodies, 512-unit descriptions, the
25,000-character index) are ``.length``/``.slice`` on JS strings, so a
character outside the Basic Multilingual Plane (an emoji, a rare Han
ideograph) counts twice. Counting the same way keeps our cuts where theirs are.
"""

from __future__ import annotations


def utf16_len(text: str) -> int:
    """``text.length`` in JavaScript."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def utf16_prefix(text: str, units: int) -> str:
    """``text.slice(0, units)`` without a dangling half of a surrogate pair (that character is dropped whole)."""
    if units <= 0:
        return ""
    prefix = text[:units]
    excess = utf16_len(prefix) - units
    while excess > 0:  # each dropped character gives back one or two units
        prefix = prefix[: len(prefix) - (excess + 1) // 2]
        excess = utf16_len(prefix) - units
    return prefix
