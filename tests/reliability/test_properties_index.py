"""Property tests of the MEMORY.md field sanitiser (``sanitizeIndexField``) against a character-by-character model.

Properties: the output is one line of at most 120 UTF-16 units with no
control, invisible or lone-surrogate character, no backtick and no ``](``,
no outer or doubled whitespace; sanitising twice changes nothing; below the
cap it equals a plain step-by-step reference; above it, the output is a
prefix of that reference cut hard at 119 units (as Qwen Code 0.24.4) plus ``…``.
"""

from __future__ import annotations

import re

from hypothesis import example, given, settings
from hypothesis import strategies as st

from qwen_lsp.text.jstext import JS_WHITESPACE, u16_len
from qwen_lsp.memory.index import MAX_INDEX_FIELD_CHARS, sanitize_field

_INVISIBLE = set("\u200b\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\ufeff")


def reference(value: str) -> str:
    """``sanitizeIndexField``'s steps 1–6, one character at a time."""
    out: list[str] = []
    for ch in value:
        code = ord(ch)
        if code <= 0x1F or 0x7F <= code <= 0x9F:
            ch = " "
        elif ch in _INVISIBLE or 0xD800 <= code <= 0xDFFF:
            continue
        elif ch == "`":
            ch = "'"
        out.append(ch)
    text = "".join(out).replace("](", "] (")
    words: list[str] = []
    word: list[str] = []
    for ch in text + " ":
        if ch in JS_WHITESPACE:
            if word:
                words.append("".join(word))
                word = []
        else:
            word.append(ch)
    return " ".join(words)


_TEXT = st.one_of(
    st.text(max_size=60),
    st.lists(
        st.sampled_from(["a", "word", " ", "\t", "\n", "\x00", "\x85", "\u200b", "\ufeff", "\ud83d", "`", "](", "]", "(",
                         "\u3000", "中文", "\U0001f600", "\u2028", "\xa0", "x" * 30]),
        max_size=40,
    ).map("".join),
)


@settings(max_examples=300)
@given(value=_TEXT)
def test_sanitised_field_is_clean_bounded_and_idempotent(value: str) -> None:
    out = sanitize_field(value)
    assert u16_len(out) <= MAX_INDEX_FIELD_CHARS
    assert not re.search("[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff\ud800-\udfff`]", out)
    assert "](" not in out
    assert out == out.strip(JS_WHITESPACE) and "  " not in out
    assert sanitize_field(out) == out


@settings(max_examples=300)
@given(value=_TEXT)
def test_sanitised_field_agrees_with_the_reference(value: str) -> None:
    expected = reference(value)
    out = sanitize_field(value)
    if u16_len(expected) <= MAX_INDEX_FIELD_CHARS:
        assert out == expected
    else:
        assert out.endswith("\u2026")
        kept = out[:-1]
        if kept.endswith("\ufffd"):  # the cut fell inside a surrogate pair: Node writes the lone half as U+FFFD
            kept = kept[:-1]
            assert u16_len(kept) == MAX_INDEX_FIELD_CHARS - 2
        assert expected.startswith(kept)
        # the hard cut at 119 units, less the one space trimEnd may drop
        assert u16_len(kept) >= MAX_INDEX_FIELD_CHARS - 2


@given(value=st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=())))
@example(value="a\ud800\U0001f600\udfff\u00e9")
def test_u16_len_counts_js_code_units(value: str) -> None:
    """Astral characters are two units, everything else (a lone surrogate too) one, as JS ``length``."""
    assert u16_len(value) == sum(2 if ord(ch) > 0xFFFF else 1 for ch in value)
