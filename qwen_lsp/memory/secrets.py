"""The secret scanner that guards team memory (Qwen Code 0.24.4's 19 rules, plus DashScope keys).

Team memory is committed and pushed, so a credential written there reaches
every collaborator. :func:`scan_for_secrets` says which rules fire — never
what matched: the value is not returned, stored or logged anywhere.

Two additions to Qwen Code's ``secret-scanner.ts``: a ``dashscope-api-key``
rule (``sk-`` and 32 hex digits, the key format of this product's own
users, which none of the 19 rules matches), and the text is scanned as
:func:`qwen_lsp.text.ignorable.without_ignorables` gives it: NFKC, with every
``Default_Ignorable_Code_Point`` (zero-width characters, bidi controls,
variation selectors, Hangul fillers, the combining grapheme joiner, tags…)
removed, so ``ghp_`` with a U+200B, U+034F or U+3164 inside, which renders
and pastes as the token, is caught.

Semantics are Qwen Code's JavaScript regexes: ``\\w``, ``\\d`` and ``\\b``
are ASCII, and the two case-insensitive rules fold ASCII letters only (JS
without the ``u`` flag never folds a non-ASCII character onto an ASCII
one). They are therefore written here with explicit ``[Xx]`` classes.

Why this cannot backtrack (the issue's "no super-linear regexes"):

* 18 rules run on RE2 (google-re2), which is linear in the text for every
  pattern. They are compiled as bytes patterns with Latin-1 encoding and run
  on the text's UTF-8 bytes, encoded once per scan rather than once per
  rule: every counted class in them is ASCII, so a non-ASCII character (its
  bytes are all ≥ 0x80) breaks a run and is a non-word character for
  ``\\b`` exactly as in JS. (:mod:`qwen_lsp.matching.linear_regex` compiles ``str``
  patterns only, hence RE2 is used directly.) The ``T3BlbkFJ`` alternative
  keeps Qwen Code's ``{20,512}`` caps, which is what fixed its O(n²) ReDoS.
* ``private-key`` has a lazy body of 64–16,384 characters, beyond RE2's
  1,000-repeat limit, and as a Python regex it would rescan up to 16 KB
  after every header. It is decided by :func:`_has_private_key` instead:
  one pass finds every ``PRIVATE KEY( BLOCK)?-----`` (the fixed tail of
  each header and footer), a bounded look of ≤ 110 characters before it
  classifies it, and a sorted sweep asks whether some header end and some
  footer start lie 64–16,384 UTF-16 units apart. Work is O(n log n) at
  worst, with no input-dependent backtracking.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from ..text.ignorable import without_ignorables

if TYPE_CHECKING:
    import re2

_BODY_MIN = 64
_BODY_MAX = 16384
_LABEL_WORDS = {
    "aws": "AWS",
    "gcp": "GCP",
    "api": "API",
    "pat": "PAT",
    "oauth": "OAuth",
    "npm": "NPM",
    "github": "GitHub",
    "gitlab": "GitLab",
    "openai": "OpenAI",
    "digitalocean": "DigitalOcean",
    "huggingface": "HuggingFace",
    "alibaba": "Alibaba",
    "sendgrid": "SendGrid",
    "dashscope": "DashScope",
}

_ALNUM = "[a-zA-Z0-9]"
_W = "[A-Za-z0-9_]"
_W_DASH = "[A-Za-z0-9_-]"

_RE2_RULES: tuple[tuple[str, str], ...] = (
    ("aws-access-token", r"\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b"),
    ("alibaba-cloud-access-key", rf"\bLTAI{_ALNUM}{{12,20}}\b"),
    ("gcp-api-key", rf"AIza{_W_DASH}{{35}}"),
    ("gcp-oauth-client-secret", rf"GOCSPX-{_W_DASH}{{24}}"),
    ("digitalocean-pat", r"dop_v1_[a-f0-9]{64}"),
    ("anthropic-api-key", rf"sk-ant-{_W_DASH}{{20,}}"),
    (
        "openai-api-key",
        rf"sk-(?:proj|svcacct|admin)-{_W_DASH}{{20,}}"
        rf"|sk-{_W_DASH}{{20,512}}T3BlbkFJ{_W_DASH}{{20,512}}"
        rf"|sk-{_ALNUM}{{48}}",
    ),
    ("huggingface-access-token", rf"hf_{_ALNUM}{{34,}}"),
    ("github-pat", rf"ghp_{_ALNUM}{{36}}"),
    ("github-fine-grained-pat", rf"github_pat_{_W}{{82}}"),
    ("github-app-token", rf"(?:ghu|ghs)_{_ALNUM}{{36}}"),
    ("github-oauth", rf"gho_{_ALNUM}{{36}}"),
    ("gitlab-pat", rf"glpat-{_W_DASH}{{20}}"),
    ("slack-bot-token", r"xoxb-[0-9]{10,13}-[0-9]{10,13}[a-zA-Z0-9-]*"),
    ("slack-app-token", r"[Xx][Aa][Pp][Pp]-[0-9]-[A-Za-z0-9]+-[0-9]+-[A-Za-z0-9]+"),
    ("sendgrid-api-token", rf"SG\.{_W_DASH}{{22}}\.{_W_DASH}{{43}}"),
    ("npm-access-token", rf"npm_{_ALNUM}{{36}}"),
    ("stripe-access-token", rf"(?:sk|rk)_(?:test|live|prod)_{_ALNUM}{{10,99}}"),
    ("dashscope-api-key", r"\bsk-[a-f0-9]{32}\b"),
)
PRIVATE_KEY_RULE = "private-key"
RULE_IDS: tuple[str, ...] = (*(rule_id for rule_id, _ in _RE2_RULES), PRIVATE_KEY_RULE)
"""Qwen Code's 19 rule ids in its order, ``dashscope-api-key`` (ours) before ``private-key``, which stays last."""

def _compile(source: str) -> re2._Regexp:
    import re2  # imported on the first scan, with the rules (see _compiled)

    options = re2.Options()
    options.encoding = re2.Options.Encoding.LATIN1
    options.never_capture = True
    options.log_errors = False
    return re2.compile(source.encode("ascii"), options)


@cache
def _compiled() -> tuple[tuple[str, re2._Regexp], ...]:
    """Compiled on the first scan (a team-memory write), not at import: every start would pay for it."""
    return tuple((rule_id, _compile(source)) for rule_id, source in _RE2_RULES)


@dataclass(frozen=True)
class SecretMatch:
    """Which rule fired; deliberately no field for the matched text."""

    rule_id: str
    label: str


def rule_label(rule_id: str) -> str:
    """``github-fine-grained-pat`` → ``GitHub Fine Grained PAT`` (``secret-scanner.ts``'s special cases)."""
    return " ".join(_LABEL_WORDS.get(part, part[:1].upper() + part[1:]) for part in rule_id.split("-"))


def scan_for_secrets(content: str) -> list[SecretMatch]:
    """At most one entry per rule that fires, in rule order; empty when the content is clean."""
    content = without_ignorables(content)
    data = content.encode("utf-8", "surrogatepass")
    matches = [SecretMatch(rule_id, rule_label(rule_id)) for rule_id, regex in _compiled() if regex.search(data)]
    if _has_private_key(content):
        matches.append(SecretMatch(PRIVATE_KEY_RULE, rule_label(PRIVATE_KEY_RULE)))
    return matches


# --- private-key -----------------------------------------------------------

_KEY_CORE = re.compile(r"PRIVATE KEY(?: BLOCK)?-----", re.IGNORECASE | re.ASCII)
"""The fixed tail of every header and footer; where it matches, the part before it decides which it is."""
_END_MARKER = re.compile("-----end")
_LABEL_RUN = re.compile(r"[ A-Za-z0-9_-]*", re.ASCII)
"""The header/footer label class ``[ A-Z0-9_-]`` under ASCII case folding."""
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")
_LABEL_MAX = 100


def _label_run_before(text: str, end: int, reach: int) -> int:
    """Start of the run of label characters ending at ``end``, looking back at most ``reach`` characters."""
    window = text[max(0, end - reach) : end]
    return end - _LABEL_RUN.match(window[::-1]).end()  # type: ignore[union-attr]  # `*` always matches


def _has_private_key(text: str) -> bool:
    """``-----BEGIN[label]{0,100}PRIVATE KEY( BLOCK)?-----`` body{64,16384} ``-----END[label]{0,100}PRIVATE KEY( BLOCK)?-----``.

    Every header and footer ends in ``PRIVATE KEY( BLOCK)?-----``; before
    that come ≤ 100 label characters and then ``-----BEGIN`` (header) or
    ``-----END`` (footer). The marker words are themselves label
    characters, so they sit inside the label run that ends at ``PRIVATE
    KEY``. The body may contain anything, so a match exists iff some header
    end and some footer start are 64–16,384 units apart.
    """
    header_ends: list[int] = []
    footer_starts: list[int] = []
    for core in _KEY_CORE.finditer(text):
        start, end = core.span()
        run_start = _label_run_before(text, start, _LABEL_MAX + len("-----BEGIN"))
        prefix = text[run_start:start].lower()
        begin = prefix.rfind("-----begin")
        if begin >= 0 and len(prefix) - (begin + 10) <= _LABEL_MAX:
            header_ends.append(end)
        for marker in _END_MARKER.finditer(prefix):
            if len(prefix) - marker.end() <= _LABEL_MAX:
                footer_starts.append(run_start + marker.start())
    if not header_ends or not footer_starts:
        return False
    astral = [m.start() for m in _ASTRAL.finditer(text)]

    def units(pos: int) -> int:
        """UTF-16 offset of code-point offset ``pos`` (JS counts an astral character twice)."""
        return pos + bisect.bisect_left(astral, pos)

    starts = sorted(units(s) for s in footer_starts)
    for end in header_ends:
        e = units(end)
        i = bisect.bisect_left(starts, e + _BODY_MIN)
        if i < len(starts) and starts[i] <= e + _BODY_MAX:
            return True
    return False
