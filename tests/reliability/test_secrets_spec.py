"""The team-memory secret scanner at its bounds (``secret-scanner.ts``), from surviving mutants of ``memory/secrets.py``.

The private-key rule allows a label of at most 100 characters between
``-----BEGIN`` / ``-----END`` and ``PRIVATE KEY``: exactly 100 fires, 101
does not. Text holding a lone surrogate (JS strings can) is scanned, not
refused. Rules run on RE2 over Latin-1 bytes so a non-ASCII character's
bytes are non-word characters, as in JS.
"""

from __future__ import annotations

import pytest

from qwen_lsp.memory.secrets import _compile, scan_for_secrets

AWS = "AKIA" + "Z" * 16


def fired(text: str) -> list[str]:
    return [m.rule_id for m in scan_for_secrets(text)]


def pem(header_label: str, footer_label: str, body: str = "M" * 64) -> str:
    return f"-----BEGIN{header_label}PRIVATE KEY-----{body}-----END{footer_label}PRIVATE KEY-----"


@pytest.mark.parametrize(
    ("header", "footer", "fires"),
    [
        (" " + "A" * 99, " ", True),  # 100 label characters: the most the rule allows
        (" " + "A" * 100, " ", False),
        (" ", " " + "A" * 99, True),
        (" ", " " + "A" * 100, False),
        (" " + "A" * 99, " " + "A" * 99, True),
        ("", "", True),
    ],
)
def test_private_key_label_is_at_most_100_characters(header: str, footer: str, fires: bool) -> None:
    assert ("private-key" in fired(pem(header, footer))) is fires


@pytest.mark.parametrize(("body", "fires"), [("M" * 63, False), ("M" * 64, True), ("M" * 16384, True), ("M" * 16385, False)])
def test_private_key_body_is_64_to_16384_units(body: str, fires: bool) -> None:
    assert ("private-key" in fired(pem(" RSA ", " RSA ", body))) is fires


def test_a_second_header_inside_the_label_window_still_counts() -> None:
    text = "-----BEGIN" + "X" * 60 + "-----BEGIN RSA PRIVATE KEY-----" + "M" * 64 + "-----END RSA PRIVATE KEY-----"
    assert fired(text) == ["private-key"]


def test_a_lone_surrogate_does_not_stop_the_scan() -> None:
    assert fired("\ud800 " + AWS + " \udfff") == ["aws-access-token"]


def test_rules_see_non_ascii_as_bytes_that_are_not_word_characters() -> None:
    # Latin-1 over UTF-8 bytes: `é` is two characters to RE2, neither a word character (JS `\b`).
    assert _compile("^..$").search("é".encode()) is not None
    assert fired("é" + AWS + "é") == ["aws-access-token"]


def test_rules_are_compiled_without_capture_groups() -> None:
    """Nothing is ever extracted from a match, so RE2 is told not to track groups."""
    assert _compile("(a)(b)").groups == 0
    assert _compile("(a)(b)").search(b"xab") is not None
