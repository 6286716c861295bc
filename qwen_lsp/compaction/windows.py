"""A model's context window, as Qwen Code 0.24.4 resolves it (``tokenLimits.ts``, ``resolveGenerationConfig``).

Order, first that applies:

1. ``model.generationConfig.contextWindowSize`` (the CLI's key) or our older
   ``model.contextWindow`` — whichever the higher settings layer set; in
   one file the CLI's key wins (``settings/aliases.py``);
2. the per-model table below, matched against the normalised model id
   (``qwen3-coder-plus`` → 1,000,000; any other ``qwen…`` → 262,144);
3. ``DEFAULT_TOKEN_LIMIT`` (200,000) for a model the table does not know.

The table and the normalisation are 0.24.4's ``PATTERNS`` and
``normalize`` (provider prefixes, ``:free``-style suffixes, date and
version suffixes, quantisation suffixes removed), so both tools give the
same window, and therefore the same compression thresholds, for the same
``settings.json``. The normalisation lives with the model ids (``llm/model_ids.py``),
which the output-token table (``llm/sampling.py``) shares.
"""

from __future__ import annotations

import re

from ..llm.model_ids import normalize

DEFAULT_TOKEN_LIMIT = 200_000
"""0.24.4's window for a model its table does not know."""

_1M = 1_000_000
_256K = 262_144
_200K = 200_000
_128K = 131_072
_GLM_200K = 202_752

_PATTERNS: tuple[tuple[re.Pattern[str], int], ...] = tuple(
    (re.compile(p, re.IGNORECASE if ci else 0), n)
    for p, n, ci in (
        (r"^gemini-3", _1M, False),
        (r"^gemini-", _1M, False),
        (r"^gpt-5", 272_000, False),
        (r"^gpt-", _128K, False),
        (r"^o\d", _200K, False),
        (r"^claude-opus-(?:4-(?:6|7|8)|5)", _1M, False),
        (r"^claude-", _200K, False),
        (r"^qwen3-coder-plus", _1M, False),
        (r"^qwen3-coder-flash", _1M, False),
        (r"^qwen3\.\d", _1M, False),
        (r"^qwen-plus-latest$", _1M, False),
        (r"^qwen-flash-latest$", _1M, False),
        (r"^coder-model$", _1M, False),
        (r"^qwen3-max", _256K, False),
        (r"^qwen3-coder-", _256K, False),
        (r"^qwen", _256K, False),
        (r"^deepseek-(?:v4|flash)", _1M, False),
        (r"^deepseek", _128K, False),
        (r"^glm-5(\.[01])?(-|$)", _GLM_200K, False),
        (r"^glm-(?:[5-9]|\d{2,})", _1M, False),
        (r"^glm-", _GLM_200K, False),
        (r"^minimax-m3", _1M, True),
        (r"^minimax-m2\.5", 196_608, True),
        (r"^minimax-", _200K, True),
        (r"^kimi-k3", _1M, False),
        (r"^kimi-", _256K, False),
        (r"^seed-oss", 524_288, False),
    )
)

def known_window(model: str | None) -> int | None:
    """The table's window for ``model``, or None when the table does not know it."""
    norm = normalize(model or "")
    for pattern, limit in _PATTERNS:
        if pattern.search(norm):
            return limit
    return None


def context_window(model: str | None, configured: int | None) -> int:
    """The window in effect: the configured size, else the table's, else ``DEFAULT_TOKEN_LIMIT``."""
    if configured is not None and configured > 0:
        return configured
    return known_window(model) or DEFAULT_TOKEN_LIMIT

