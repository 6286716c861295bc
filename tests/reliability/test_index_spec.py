"""The MEMORY.md field sanitiser at its edges (latest-observed ``truncateIndexField``, ``memory/indexer.ts``).

From surviving mutants of ``sanitize_field`` / ``truncate_field`` in
``qwen_lsp/memory/index.py``: every boundary of the control and invisible
ranges, the order of the steps, and the 120-unit cap with its 60 % word
boundary rule, counted in UTF-16 units.
"""

from __future__ import annotations

import pytest

from qwen_lsp.memory.index import MAX_INDEX_FIELD_CHARS, sanitize_field, truncate_field


@pytest.mark.parametrize("control", ["\x00", "\x01", "\x1f", "\x7f", "\x80", "\x9f"])
def test_controls_become_spaces(control: str) -> None:
    assert sanitize_field(f"a{control}b") == "a b"


@pytest.mark.parametrize("kept", ["\x20", "\x7e", "\xa1", "\u2060", "\u2065", "\u206a", "\u200a", "\u2030"])
def test_characters_next_to_the_ranges_are_not_controls_or_invisible(kept: str) -> None:
    out = sanitize_field(f"a{kept}b")
    assert out in (f"a{kept}b", "a b")  # \u200a and \x20 are whitespace: collapsed, never deleted
    assert len(out) == 3


@pytest.mark.parametrize(
    "invisible", ["\u200b", "\u200c", "\u200f", "\u202a", "\u202e", "\u2066", "\u2069", "\ufeff", "\ud800", "\udfff"]
)
def test_invisible_characters_and_lone_surrogates_are_deleted(invisible: str) -> None:
    assert sanitize_field(f"a{invisible}b") == "ab"


def test_code_and_link_markdown_is_defanged() -> None:
    assert sanitize_field("run `rm -rf` [x](http://e.x)") == "run 'rm -rf' [x] (http://e.x)"


def test_whitespace_collapses_and_trims_with_javascript_whitespace() -> None:
    assert sanitize_field("\u3000 a \u2028\u00a0 b\t\n") == "a b"
    assert sanitize_field("a\x1cb") == "a b"  # a control (\x1c is not JS whitespace, but it is a C0 control)


def test_controls_become_spaces_before_invisible_characters_vanish() -> None:
    # a BOM between two controls: both controls turn to spaces, the BOM goes, then the spaces collapse
    assert sanitize_field("a\x00\ufeff\x00b") == "a b"
    assert sanitize_field("a\u200b\u200bb") == "ab"


def test_a_field_of_exactly_the_cap_is_kept_whole() -> None:
    assert sanitize_field("a" * MAX_INDEX_FIELD_CHARS) == "a" * MAX_INDEX_FIELD_CHARS


def test_a_field_one_over_the_cap_is_hard_cut_to_119_and_an_ellipsis() -> None:
    assert sanitize_field("a" * (MAX_INDEX_FIELD_CHARS + 1)) == "a" * 119 + "\u2026"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("a" * 100 + " " + "b" * 50, "a" * 100 + "\u2026"),  # the word boundary keeps ≥ 60 %
        ("a" * 72 + " " + "b" * 60, "a" * 72 + "\u2026"),  # exactly 60 % (72 of 120) still counts
        ("a" * 71 + " " + "b" * 60, "a" * 71 + " " + "b" * 47 + "\u2026"),  # below: hard cut at 119
        ("a" * 50 + "  \t" + "b" * 80, "a" * 50 + " " + "b" * 68 + "\u2026"),
        ("w " * 80, ("w " * 59).rstrip() + "\u2026"),
        ("中" * 121, "中" * 119 + "\u2026"),  # CJK has no spaces: the hard cut keeps the run
    ],
)
def test_truncation_rule(value: str, expected: str) -> None:
    assert sanitize_field(value) == expected


def test_truncation_counts_utf16_units_and_never_splits_a_pair() -> None:
    out = sanitize_field("\U0001f600" * 61)  # 122 units
    assert out == "\U0001f600" * 59 + "\u2026"  # 118 units + 1: a pair at 119 would be split


def test_truncate_field_with_another_limit() -> None:
    assert truncate_field("abc def", 7) == "abc def"
    assert truncate_field("abc defgh", 8) == "abc def\u2026"  # the boundary keeps 3 < 4.8 units: hard cut at 7
    assert truncate_field("abcdef ghij", 10) == "abcdef\u2026"
