"""What every model request carries besides the messages: the sampling parameters and ``max_tokens``.

Qwen Code 0.24.4 (``ContentGenerationPipeline.buildGenerateContentConfig``)
sends ``model.generationConfig.samplingParams`` with every request, main turn
and side query alike, a configured value winning over the caller's (a side
query's temperature 0 gives way to the user's temperature), and always a
``max_tokens``: the smaller of the configured ``max_tokens`` and the
caller's budget, else whichever is set. A main turn's budget is the output
ceiling clamped to what is left of the window (``GeminiChat.sendMessageStream``
with ``clampOutputTokensToWindow``), computed here by :func:`turn_budget`;
the ceiling is the configured ``max_tokens``, else ``QWEN_CODE_MAX_OUTPUT_TOKENS``,
else the model's output limit (the table below).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from .model_ids import normalize


# Output limits: 0.24.4's ``OUTPUT_PATTERNS``, ``defaultOutputCeiling`` and ``clampOutputTokensToWindow`` (``tokenLimits.ts``).

DEFAULT_OUTPUT_TOKEN_LIMIT = 32_000
"""0.24.4's output limit for a model its table does not know."""
OUTPUT_TOKEN_CEILING = 64_000
"""No default budget is larger (``ESCALATED_MAX_TOKENS``), except for the models the table lets go higher."""
MIN_CLAMPED_OUTPUT_TOKENS = 4_000
ESTIMATE_CLAMP_OVERHEAD_PAD = 20_000
"""Added to a prompt size that is our estimate rather than the endpoint's count, as 0.24.4 does."""

_CLAUDE_OPUS_EXTENDED = re.compile(r"^claude-opus-(?:4-(?:6|7|8)|5)")
_OUTPUT_PATTERNS: tuple[tuple[re.Pattern[str], int], ...] = tuple(
    (re.compile(p, re.IGNORECASE if ci else 0), n)
    for p, n, ci in (
        (r"^gemini-3", 65_536, False),
        (r"^gemini-", 8_192, False),
        (r"^gpt-5", 131_072, False),
        (r"^gpt-", 16_384, False),
        (r"^o\d", 131_072, False),
        (r"^claude-opus-(?:4-(?:6|7|8)|5)", 128_000, False),
        (r"^claude-sonnet-4-6", 65_536, False),
        (r"^claude-", 65_536, False),
        (r"^qwen3\.\d", 65_536, False),
        (r"^coder-model$", 65_536, False),
        (r"^qwen", 32_768, False),
        (r"^deepseek-(?:v4|flash)", 384_000, False),
        (r"^deepseek-reasoner", 65_536, False),
        (r"^deepseek-r1", 65_536, False),
        (r"^deepseek-chat", 8_192, False),
        (r"^glm-5(?:\.\d+)?(?:-|$)", 131_072, False),
        (r"^glm-4\.7", 16_384, False),
        (r"^minimax-m2\.5", 65_536, True),
        (r"^kimi-k3", 131_072, False),
        (r"^kimi-k2\.5", 32_768, False),
    )
)


def default_output_ceiling(model: str | None) -> int:
    """0.24.4's ``defaultOutputCeiling``: the table's output limit (32,000 when unknown), at most 64,000 but for Opus 4.6+."""
    norm = normalize(model or "")
    limit = next((n for pattern, n in _OUTPUT_PATTERNS if pattern.search(norm)), DEFAULT_OUTPUT_TOKEN_LIMIT)
    return limit if _CLAUDE_OPUS_EXTENDED.search(norm) else min(limit, OUTPUT_TOKEN_CEILING)


def clamp_output_tokens(ceiling: int, window: int, prompt_tokens: int) -> int:
    """0.24.4's ``clampOutputTokensToWindow``: the budget that still fits the window, a margin kept, never under 4,000."""
    margin = max(10_000, round(0.05 * window))
    return min(ceiling, max(MIN_CLAMPED_OUTPUT_TOKENS, window - prompt_tokens - margin))


@dataclass(frozen=True)
class Sampling:
    """The request fields settings decide; one per client (``client_cache.py`` rebuilds the client when they change)."""

    params: Mapping[str, float | int] = field(default_factory=dict)
    """``temperature``, ``top_p``, ...: sent as they are, over the caller's."""
    max_tokens: int | None = None
    """The configured ``samplingParams.max_tokens``."""
    ceiling: int = 32_000
    """The output budget of a request whose caller names none."""

    def max_tokens_for(self, requested: int | None) -> int:
        """0.24.4's ``reconcileMaxTokens``: both set → the smaller; else the one that is set; else the ceiling."""
        if requested is not None and self.max_tokens is not None:
            return min(requested, self.max_tokens)
        return requested if requested is not None else self.max_tokens if self.max_tokens is not None else self.ceiling


def env_max_output_tokens(env: Mapping[str, str] | None = None) -> int | None:
    """``QWEN_CODE_MAX_OUTPUT_TOKENS`` when it is a positive integer (0.24.4's ``parsePositiveIntegerEnvValue``)."""
    raw = (os.environ if env is None else env).get("QWEN_CODE_MAX_OUTPUT_TOKENS")
    if raw is None or not raw.strip().isascii() or not raw.strip().isdigit():
        return None
    value = int(raw.strip())
    return value if 0 < value <= 2**53 - 1 else None


def output_ceiling(model: str | None, explicit: int | None, sampling_max: int | None) -> int:
    """The turn's ceiling: our ``model.maxOutputTokens``, the sampling ``max_tokens``, the variable, or the model's limit."""
    for value in (explicit, sampling_max, env_max_output_tokens()):
        if value is not None:
            return value
    return default_output_ceiling(model)


def turn_budget(ceiling: int, window: int, prompt_tokens: int, *, estimated: bool) -> int:
    """A main turn's ``max_tokens``: the ceiling, clamped to the window left after the prompt (padded when estimated)."""
    return clamp_output_tokens(ceiling, window, prompt_tokens + (ESTIMATE_CLAMP_OVERHEAD_PAD if estimated else 0))
