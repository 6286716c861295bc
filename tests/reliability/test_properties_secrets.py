"""Property tests of the team-memory secret scanner (``secret-scanner.ts``) on arbitrary text.

Properties: any ``str`` (lone surrogates included) is scanned without an
error; the answer names each rule at most once, in rule order, and never
carries matched text; joining two texts with a newline never hides what
either fires (each rule's match lies inside one of them).
"""

from __future__ import annotations

import dataclasses

from hypothesis import given, settings
from hypothesis import strategies as st

from qwen_lsp.memory.secrets import RULE_IDS, SecretMatch, rule_label, scan_for_secrets

_PIECES = st.sampled_from([
    "AKIA" + "Q" * 16, "sk-ant-" + "a" * 20, "ghp_" + "b" * 36, "xoxb-" + "1" * 10 + "-" + "2" * 10,
    "-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----", "M" * 64, "sk-", "T3BlbkFJ", "a" * 20,
    " ", "\n", "é", "\ud800", "\U0001f600", "_", "-",
])
_TEXT = st.one_of(st.text(max_size=80), st.lists(_PIECES, max_size=12).map("".join))


def ids(text: str) -> list[str]:
    return [m.rule_id for m in scan_for_secrets(text)]


@settings(max_examples=200)
@given(text=_TEXT)
def test_any_text_scans_to_distinct_rules_in_order_without_the_value(text: str) -> None:
    found = scan_for_secrets(text)
    rules = [m.rule_id for m in found]
    assert rules == [r for r in RULE_IDS if r in rules]
    assert all(isinstance(m, SecretMatch) and m.label == rule_label(m.rule_id) for m in found)
    assert [f.name for f in dataclasses.fields(SecretMatch)] == ["rule_id", "label"]


@settings(max_examples=150)
@given(a=_TEXT, b=_TEXT)
def test_joining_texts_with_a_newline_never_hides_a_secret(a: str, b: str) -> None:
    assert set(ids(a)) | set(ids(b)) <= set(ids(a + "\n" + b))


@given(text=_TEXT)
def test_scanning_is_deterministic_and_does_not_change_with_surrounding_spaces(text: str) -> None:
    assert ids(text) == ids(text)
    assert ids(" " + text + " ") == ids(text) or not text  # spaces are boundaries for every rule
