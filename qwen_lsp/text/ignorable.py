"""Text as a scanner should see it: NFKC, with every character that renders as nothing removed.

A token split by an invisible character still pastes, and often still
works, as the token: ``ghp_`` with a U+034F (combining grapheme joiner),
U+17B4 (Khmer inherent vowel), U+3164 (Hangul filler) or U+FE0F (variation
selector) inside looks the same when rendered. Listing such characters one
by one always misses some, so the set removed here is the Unicode property
``Default_Ignorable_Code_Point`` itself, written as the fixed list of ranges
the Unicode Character Database gives for it (``DerivedCoreProperties.txt``,
Unicode 15.1; unchanged in 16.0). The Hangul fillers U+115F, U+1160, U+3164
and U+FFA0 are in it. NFKC first folds compatibility forms (full-width
``ｇｈｐ＿``, ligatures, the Kelvin sign) onto the letters they stand for.
"""

from __future__ import annotations

import re
import unicodedata

DEFAULT_IGNORABLE_RANGES: tuple[tuple[int, int], ...] = (
    (0x00AD, 0x00AD),  # SOFT HYPHEN
    (0x034F, 0x034F),  # COMBINING GRAPHEME JOINER
    (0x061C, 0x061C),  # ARABIC LETTER MARK
    (0x115F, 0x1160),  # HANGUL CHOSEONG FILLER..HANGUL JUNGSEONG FILLER
    (0x17B4, 0x17B5),  # KHMER VOWEL INHERENT AQ..AA
    (0x180B, 0x180F),  # MONGOLIAN FREE VARIATION SELECTORS, VOWEL SEPARATOR
    (0x200B, 0x200F),  # ZERO WIDTH SPACE..RIGHT-TO-LEFT MARK
    (0x202A, 0x202E),  # LEFT-TO-RIGHT EMBEDDING..RIGHT-TO-LEFT OVERRIDE
    (0x2060, 0x206F),  # WORD JOINER..NOMINAL DIGIT SHAPES (U+2065 reserved)
    (0x3164, 0x3164),  # HANGUL FILLER
    (0xFE00, 0xFE0F),  # VARIATION SELECTOR-1..16
    (0xFEFF, 0xFEFF),  # ZERO WIDTH NO-BREAK SPACE (BOM)
    (0xFFA0, 0xFFA0),  # HALFWIDTH HANGUL FILLER
    (0xFFF0, 0xFFF8),  # reserved
    (0x1BCA0, 0x1BCA3),  # SHORTHAND FORMAT LETTER OVERLAP..UP STEP
    (0x1D173, 0x1D17A),  # MUSICAL SYMBOL BEGIN BEAM..END PHRASE
    (0xE0000, 0xE0FFF),  # LANGUAGE TAG, TAG characters, VARIATION SELECTOR-17..256, reserved
)
"""``Default_Ignorable_Code_Point`` from Unicode's ``DerivedCoreProperties.txt`` (adjacent lines merged)."""

_IGNORABLE = re.compile("[" + "".join(f"{chr(a)}-{chr(b)}" if a != b else re.escape(chr(a)) for a, b in DEFAULT_IGNORABLE_RANGES) + "]")


def is_ignorable(ch: str) -> bool:
    """Whether ``ch`` is a ``Default_Ignorable_Code_Point`` (renders as nothing)."""
    return _IGNORABLE.match(ch) is not None


def without_ignorables(text: str) -> str:
    """``text`` in NFKC with every default-ignorable code point removed (see the module doc)."""
    return _IGNORABLE.sub("", unicodedata.normalize("NFKC", _IGNORABLE.sub("", text)))
