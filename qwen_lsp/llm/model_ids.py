"""A model id as Qwen Code 0.24.4's token tables read it (``tokenLimits.ts``, ``normalize``).

Both tables key on the bare model family: the context windows
(``compaction/windows.py``) and the output limits (``llm/sampling.py``).
Provider prefixes, ``:free``-style suffixes, date and version suffixes and
quantisation suffixes are removed, so ``Qwen/qwen3-coder-plus-20250722``
reads as ``qwen3-coder-plus``. The id comes from settings or the
environment, so it is cut at 512 characters before any pattern sees it.
"""

from __future__ import annotations

import re

_VARIANT_SUFFIX = re.compile(r":(?:free|beta|extended|thinking|online|nitro|floor|latest|\d+(?:\.\d+)?(?:x\d+)?b(?:-[\w.]+)*)$")
_CLAUDE_DOTTED = re.compile(r"^(claude-[a-z]+-\d+(?:-\d+)?)\.(\d+)(?:\.\d+)*")
_VERSION_TAIL = re.compile(r"\d{4,}|\d+x\d+b|v\d+(?:\.\d+)*|latest|exp")
_DOTTED_TAIL = re.compile(r"\d+(?:\.\d+)+")
_QUANT_SUFFIX = re.compile(r"-(?:\d?bit|int[48]|bf16|fp16|q[45]|quantized)$")
_MAX_MODEL_CHARS = 512


def normalize(model: str) -> str:
    """0.24.4's ``normalize``: the bare model family, e.g. ``Qwen/qwen3-coder-plus-20250722`` → ``qwen3-coder-plus``."""
    s = model[:_MAX_MODEL_CHARS].lower().strip()
    s = re.sub(r"^.*/", "", s)
    s = s.split("|")[-1]
    s = _VARIANT_SUFFIX.sub("", s)
    s = s.split(":")[-1]
    s = re.sub(r"\s+", "-", s)
    s = _CLAUDE_DOTTED.sub(r"\1-\2", s, count=1)
    s = s.replace("-preview", "")
    if not (re.match(r"^qwen-(?:plus|flash|vl-max)-latest$", s) or re.match(r"^kimi-k2-\d{4}$", s) or s.startswith("deepseek-v4")):
        s = _without_version_suffix(s)
    return _QUANT_SUFFIX.sub("", s, count=1)


def _without_version_suffix(s: str) -> str:
    """0.24.4's ``-(?:\\d{4,}|…|(?<=-[^-]+-)\\d+(?:\\.\\d+)+|latest|exp)$`` removal.

    Every alternative starts at the last ``-``, so the tail after it decides;
    a dotted number (``-2.5``) goes only when a ``-word-`` precedes it (the
    lookbehind, which Python's ``re`` cannot write with a variable width).
    """
    head, dash, tail = s.rpartition("-")
    if not dash:
        return s
    if _VERSION_TAIL.fullmatch(tail) or (_DOTTED_TAIL.fullmatch(tail) and re.search(r"-[^-]+$", head)):
        return head
    return s
