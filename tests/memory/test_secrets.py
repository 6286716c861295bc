"""The team-memory secret scanner: each of Qwen Code's 19 rules and our DashScope rule, near misses, labels, the guard text."""

from __future__ import annotations

import dataclasses
import re
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qwen_lsp.memory.errors import SecretRefused
from qwen_lsp.memory.secrets import RULE_IDS, SecretMatch, rule_label, scan_for_secrets
from qwen_lsp.memory.team_guard import refuse_team_secrets
from qwen_lsp.text.ignorable import DEFAULT_IGNORABLE_RANGES, without_ignorables

PEM_BODY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7" + "x" * 12  # 64 characters

POSITIVES: dict[str, list[str]] = {
    "aws-access-token": ["key AKIAABCDEFGHIJKLMNOP end", "A3TXABCDEFGHIJKLMN09", "(ASIA0123456789ABCDEF)"],
    "alibaba-cloud-access-key": ["LTAI" + "a1B2" * 3, "id=LTAI" + "x" * 20 + "."],
    "gcp-api-key": ["AIza" + "A_b-" * 8 + "xyz", "prefixAIza" + "9" * 35 + "more"],
    "gcp-oauth-client-secret": ["GOCSPX-" + "a-_B" * 6],
    "digitalocean-pat": ["dop_v1_" + "0123456789abcdef" * 4],
    "anthropic-api-key": ["sk-ant-" + "api03_" + "Z" * 14],
    "openai-api-key": [
        "sk-proj-" + "a" * 20,
        "sk-svcacct-" + "b_-" * 7,
        "sk-" + "c" * 20 + "T3BlbkFJ" + "d" * 20,
        "sk-" + "e1" * 24,
    ],
    "huggingface-access-token": ["hf_" + "a" * 34],
    "github-pat": ["token: ghp_" + "A1b2" * 9],
    "github-fine-grained-pat": ["github_pat_" + "a_" * 41],
    "github-app-token": ["ghu_" + "x" * 36, "ghs_" + "Y" * 36],
    "github-oauth": ["gho_" + "7" * 36],
    "gitlab-pat": ["glpat-" + "ab-_" * 5],
    "slack-bot-token": ["xoxb-" + "1" * 10 + "-" + "2" * 13 + "abc-DEF"],
    "slack-app-token": ["xapp-1-A1B2-123-abc9", "XAPP-9-a-0-Z"],
    "sendgrid-api-token": ["SG." + "a" * 22 + "." + "b-_" * 14 + "c"],
    "npm-access-token": ["npm_" + "Q" * 36],
    "dashscope-api-key": ["DASHSCOPE_API_KEY=sk-" + "0123456789abcdef" * 2, "(sk-" + "a" * 32 + ")"],
    "stripe-access-token": ["sk_live_" + "a" * 10, "rk_test_" + "b" * 99, "sk_prod_" + "C" * 50],
    "private-key": [
        f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n-----END RSA PRIVATE KEY-----",
        f"-----begin private key-----{PEM_BODY}-----end private key-----",
        f"-----BEGIN PGP PRIVATE KEY BLOCK-----\n{PEM_BODY}\n-----END PGP PRIVATE KEY BLOCK-----",
        f"-----BEGIN OPENSSH PRIVATE KEY-----{'y' * 16384}-----END OPENSSH PRIVATE KEY-----",
    ],
}

NEAR_MISSES: dict[str, list[str]] = {
    "aws-access-token": ["akiaabcdefghijklmnop", "AKIAABCDEFGHIJKLMNO", "AKIAABCDEFGHIJKLMNOPQ", "xAKIAABCDEFGHIJKLMNOP"],
    "alibaba-cloud-access-key": ["LTAI" + "a" * 11, "LTAI" + "a" * 21, "xLTAI" + "a" * 12],
    "gcp-api-key": ["AIza" + "A" * 34, "aiza" + "A" * 35],
    "gcp-oauth-client-secret": ["GOCSPX-" + "a" * 23, "GOCSPX_" + "a" * 24],
    "digitalocean-pat": ["dop_v1_" + "A" * 64, "dop_v1_" + "a" * 63, "dop_v2_" + "a" * 64],
    "anthropic-api-key": ["sk-ant-" + "a" * 19, "sk-ant-" + "a" * 10 + "." + "a" * 10],
    "openai-api-key": ["sk-proj-" + "a" * 19, "sk-" + "a" * 47, "sk-" + "a" * 19 + "T3BlbkFJ" + "b" * 19, "sk-" + "é" * 48],
    "huggingface-access-token": ["hf_" + "a" * 33, "hf-" + "a" * 34],
    "github-pat": ["ghp_" + "a" * 35, "ghp_" + "a" * 35 + "_"],
    "github-fine-grained-pat": ["github_pat_" + "a" * 81],
    "github-app-token": ["ghx_" + "a" * 36, "ghu_" + "a" * 35],
    "github-oauth": ["gho_" + "a" * 35, "gho-" + "a" * 36],
    "gitlab-pat": ["glpat-" + "a" * 19, "glpat_" + "a" * 20],
    "slack-bot-token": ["xoxb-" + "1" * 9 + "-" + "2" * 10, "xoxp-" + "1" * 10 + "-" + "2" * 10],
    "slack-app-token": ["xapp-a-A1-2-b", "xapp-1--2-b", "xapp-1-A-x-b"],
    "sendgrid-api-token": ["SG." + "a" * 22 + "." + "b" * 42, "SG." + "a" * 21 + "." + "b" * 43],
    "npm-access-token": ["npm_" + "a" * 35, "NPM_" + "a" * 36],
    "dashscope-api-key": ["sk-" + "a" * 31, "sk-" + "a" * 33, "sk-" + "A" * 32, "xsk-" + "a" * 32, "sk-" + "g" * 32],
    "stripe-access-token": ["sk_live_" + "a" * 9, "sk_dev_" + "a" * 20, "pk_live_" + "a" * 20],
    "private-key": [
        f"-----BEGIN RSA PRIVATE KEY-----{PEM_BODY[:63]}-----END RSA PRIVATE KEY-----",  # body 63
        f"-----BEGIN{' ' * 101}PRIVATE KEY-----{PEM_BODY}-----END PRIVATE KEY-----",  # label 101
        f"-----BEGIN PRIVATE KEY-----{'y' * 16385}-----END PRIVATE KEY-----",  # body too long
        f"-----BEGIN PUBLIC KEY-----{PEM_BODY}-----END PUBLIC KEY-----",
        f"-----BEGIN PRIVATE KEY-----{PEM_BODY}",  # no footer
        f"{PEM_BODY}-----END PRIVATE KEY-----",  # no header
        f"-----END PRIVATE KEY-----{PEM_BODY}-----BEGIN PRIVATE KEY-----",  # wrong order
    ],
}


def fired(text: str) -> list[str]:
    return [m.rule_id for m in scan_for_secrets(text)]


def test_there_are_qwen_codes_nineteen_rules_in_its_order_and_ours():
    assert len(RULE_IDS) == 20 and RULE_IDS[-2] == "dashscope-api-key" and set(POSITIVES) == set(RULE_IDS) == set(NEAR_MISSES)
    assert RULE_IDS[0] == "aws-access-token" and RULE_IDS[-1] == "private-key"


@pytest.mark.parametrize(("rule", "text"), [(r, t) for r, texts in POSITIVES.items() for t in texts])
def test_each_rule_fires_on_its_positive_alone(rule: str, text: str):
    assert fired(text) == [rule]


@pytest.mark.parametrize(("rule", "text"), [(r, t) for r, texts in NEAR_MISSES.items() for t in texts])
def test_near_misses_do_not_fire(rule: str, text: str):
    assert rule not in fired(text)


def test_ascii_semantics_non_ascii_letters_are_boundaries_not_word_characters():
    assert fired("éAKIAABCDEFGHIJKLMNOPé") == ["aws-access-token"]
    assert fired("AKIAABCDEFGHIJKLMNOP\u00e9x") == ["aws-access-token"]
    assert fired("ghp_" + "a" * 35 + "\u00e9") == []  # \u00e9 is not one of the 36 [0-9a-zA-Z]
    assert fired("XAPP-1-\u212a-2-b") == ["slack-app-token"]  # the scan runs on NFKC text, where the Kelvin sign is K
    assert fired("XAPP-1-\u0138-2-b") == []  # kra is no K: JS without /u folds ASCII only, and NFKC keeps it


@pytest.mark.parametrize("invisible", ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u202e"])
def test_invisible_characters_cannot_split_a_token(invisible: str):
    assert fired("ghp_" + "A1b2" * 4 + invisible + "A1b2" * 5) == ["github-pat"]
    assert fired("sk-" + "0123456789abcdef" + invisible * 3 + "0123456789abcdef") == ["dashscope-api-key"]


@pytest.mark.parametrize("first,last", DEFAULT_IGNORABLE_RANGES, ids=[f"U+{a:04X}..U+{b:04X}" for a, b in DEFAULT_IGNORABLE_RANGES])
def test_every_default_ignorable_range_is_removed_before_scanning(first: int, last: int):
    """Each range of Default_Ignorable_Code_Point (both ends and the middle): none can split a token."""
    for code in sorted({first, (first + last) // 2, last}):
        invisible = chr(code)
        assert fired("ghp_" + "A1b2" * 4 + invisible + "A1b2" * 5) == ["github-pat"], f"U+{code:04X}"
        assert fired("sk-" + "0123456789abcdef" + invisible * 2 + "0123456789abcdef") == ["dashscope-api-key"], f"U+{code:04X}"


def test_the_ranges_are_the_unicode_property_and_nothing_else():
    """Checked against the characters' own Unicode data: every Cf listed is ignorable, and neighbours outside stay."""
    codes = {c for a, b in DEFAULT_IGNORABLE_RANGES for c in range(a, b + 1)}
    assert len(codes) == 4174  # the property's size in DerivedCoreProperties.txt (Unicode 15.1)
    assert {0x115F, 0x1160, 0x3164, 0xFFA0, 0x034F, 0x17B4, 0xFE0F} <= codes  # the campaign's and the Hangul fillers
    assert all(a <= b < c for (a, b), (c, _) in zip(DEFAULT_IGNORABLE_RANGES, DEFAULT_IGNORABLE_RANGES[1:]))
    visible_neighbours = "".join(chr(a - 1) + chr(b + 1) for a, b in DEFAULT_IGNORABLE_RANGES if unicodedata.category(chr(a - 1)) not in ("Cn", "Mn"))
    assert without_ignorables(visible_neighbours) == unicodedata.normalize("NFKC", visible_neighbours)


def test_the_team_guard_refuses_a_token_split_by_each_campaign_character(tmp_path):
    for invisible in ("\u034f", "\u17b4", "\u3164", "\ufe0f", "\u115f", "\u1160", "\uffa0"):
        with pytest.raises(SecretRefused):
            refuse_team_secrets(tmp_path / ".qwen" / "team-memory" / "x.md", "token ghp_" + "A1b2" * 4 + invisible + "A1b2" * 5)


@pytest.mark.parametrize(
    "spelling",
    [
        "ｇｈｐ＿" + "Ａ１ｂ２" * 9,  # full-width: NFKC folds it onto ASCII
        "ghp_" + "A1b2" * 4 + "\u3164\u034f\u17b4\ufe0f" + "A1b2" * 5,  # the campaign's four, together
        "ghp_" + "".join(c + "\ufe0f" for c in "A1b2" * 9),  # after every character
        "ghp_" + "A1b2" * 4 + "\U000e0041\U000e0100" + "A1b2" * 5,  # a tag and an astral variation selector
        "ghp_" + "A1b2" * 4 + "\uffa0" + "A1b2" * 5,  # NFKC turns the half-width filler into U+3164, also removed
    ],
)
def test_compatibility_forms_and_invisible_runs_are_caught(spelling: str):
    assert fired(spelling) == ["github-pat"]


def test_one_entry_per_rule_in_rule_order_and_no_matched_text():
    text = "ghp_" + "a" * 36 + " AKIAABCDEFGHIJKLMNOP ghp_" + "b" * 36
    found = scan_for_secrets(text)
    assert [m.rule_id for m in found] == ["aws-access-token", "github-pat"]
    assert [f.name for f in dataclasses.fields(SecretMatch)] == ["rule_id", "label"]
    assert "aaaa" not in repr(found)


@pytest.mark.parametrize(
    ("rule", "label"),
    [
        ("github-fine-grained-pat", "GitHub Fine Grained PAT"),
        ("aws-access-token", "AWS Access Token"),
        ("gcp-oauth-client-secret", "GCP OAuth Client Secret"),
        ("openai-api-key", "OpenAI API Key"),
        ("digitalocean-pat", "DigitalOcean PAT"),
        ("huggingface-access-token", "HuggingFace Access Token"),
        ("alibaba-cloud-access-key", "Alibaba Cloud Access Key"),
        ("sendgrid-api-token", "SendGrid API Token"),
        ("npm-access-token", "NPM Access Token"),
        ("gitlab-pat", "GitLab PAT"),
        ("private-key", "Private Key"),
        ("dashscope-api-key", "DashScope API Key"),
    ],
)
def test_labels(rule: str, label: str):
    assert rule_label(rule) == label


def test_guard_message_is_qwen_codes_text():
    err = SecretRefused(["GitHub PAT", "AWS Access Token"])
    assert err.kind == "secret" and err.labels == ("GitHub PAT", "AWS Access Token")
    assert err.message == (
        "Content contains potential secrets (GitHub PAT, AWS Access Token) and cannot be written to team memory. "
        "Team memory is shared with all repository collaborators. Remove the sensitive content and try again."
    )


# --- differential check against the JS regexes, run by Python's backtracking `re` on small inputs ---

_JS_RULES = {
    "aws-access-token": (r"\b((?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16})\b", 0),
    "alibaba-cloud-access-key": (r"\b(LTAI[a-zA-Z0-9]{12,20})\b", 0),
    "gcp-api-key": (r"AIza[\w-]{35}", 0),
    "gcp-oauth-client-secret": (r"GOCSPX-[\w-]{24}", 0),
    "digitalocean-pat": (r"dop_v1_[a-f0-9]{64}", 0),
    "anthropic-api-key": (r"sk-ant-[a-zA-Z0-9_-]{20,}", 0),
    "openai-api-key": (
        r"sk-(?:proj|svcacct|admin)-[a-zA-Z0-9_-]{20,}|sk-[a-zA-Z0-9_-]{20,512}T3BlbkFJ[a-zA-Z0-9_-]{20,512}"
        r"|sk-[a-zA-Z0-9]{48}",
        0,
    ),
    "huggingface-access-token": (r"hf_[a-zA-Z0-9]{34,}", 0),
    "github-pat": (r"ghp_[0-9a-zA-Z]{36}", 0),
    "github-fine-grained-pat": (r"github_pat_\w{82}", 0),
    "github-app-token": (r"(?:ghu|ghs)_[0-9a-zA-Z]{36}", 0),
    "github-oauth": (r"gho_[0-9a-zA-Z]{36}", 0),
    "gitlab-pat": (r"glpat-[\w-]{20}", 0),
    "slack-bot-token": (r"xoxb-[0-9]{10,13}-[0-9]{10,13}[a-zA-Z0-9-]*", 0),
    "slack-app-token": (r"xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+", re.IGNORECASE),
    "sendgrid-api-token": (r"SG\.[\w-]{22}\.[\w-]{43}", 0),
    "npm-access-token": (r"npm_[a-zA-Z0-9]{36}", 0),
    "stripe-access-token": (r"(?:sk|rk)_(?:test|live|prod)_[a-zA-Z0-9]{10,99}", 0),
    "dashscope-api-key": (r"\bsk-[a-f0-9]{32}\b", 0),  # ours, not Qwen Code's
    "private-key": (
        r"-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----[\s\S-]{64,16384}?"
        r"-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----",
        re.IGNORECASE,
    ),
}
_REFERENCE = {rule: re.compile(src, re.ASCII | flags) for rule, (src, flags) in _JS_RULES.items()}

_FRAGMENTS = [
    "AKIA", "A3TX", "LTAI", "AIza", "GOCSPX-", "dop_v1_", "sk-", "sk-ant-", "sk-proj-", "T3BlbkFJ", "hf_", "ghp_",
    "github_pat_", "ghu_", "gho_", "glpat-", "xoxb-", "xapp-", "XAPP-", "SG.", "npm_", "sk_live_", "rk_test_",
    "-----BEGIN", "-----begin", "-----END", "-----end", " RSA ", "PRIVATE KEY", "private key", " BLOCK", "-----",
    "a", "Z", "7", "_", "-", ".", " ", "\n", "é", "\u212a", "abcdef0123", "ABCDEFGHIJ", "0123456789",
    "x" * 10, "Q" * 30, "9" * 12, "z" * 64,
]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_FRAGMENTS), max_size=40))
def test_scanner_agrees_with_the_js_regexes(parts: list[str]):
    text = "".join(parts)
    expected = [rule for rule in RULE_IDS if _REFERENCE[rule].search(without_ignorables(text))]
    assert fired(text) == expected


_PEM_FRAGMENTS = [
    "-----BEGIN", "-----begin", "-----END", "-----End", " RSA", " ", "PRIVATE KEY", "Private Key", " BLOCK", "-----",
    "z" * 16, "z" * 40, "-" * 20, "\n", "é", "\U0001f600" * 8, "A" * 33,
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_PEM_FRAGMENTS), max_size=60))
def test_private_key_scan_agrees_with_the_js_regex(parts: list[str]):
    """Body lengths are UTF-16 units: the reference sees each astral character as the two units JS counts."""
    text = "".join(parts)
    reference_text = re.sub("[\U00010000-\U0010ffff]", "\ufffd\ufffd", text)  # UTF-16 length, as JS sees it
    assert ("private-key" in fired(text)) == bool(_REFERENCE["private-key"].search(reference_text))
