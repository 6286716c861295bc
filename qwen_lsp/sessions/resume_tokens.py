"""The token counts a resumed session starts from (Qwen Code's ``getResumeTokenCounts``).

Compaction decides on the prompt size the model last reported; a resumed
chat that started from zero would run past ``auto`` and ``hard`` before its
first answer. Qwen Code 0.24.4 (``session-resume-token-counts.ts``) walks
the session's records in order and keeps the last of:

* an ``assistant`` record whose ``usageMetadata`` has a truthy
  ``promptTokenCount`` (else ``totalTokenCount``): that count, measured;
* a ``system``/``chat_compression`` record with an ``info``: its
  ``newTokenCount`` and output 0, estimated unless
  ``info.newTokenCountIsEstimated`` says otherwise.

So a checkpoint written after the last answer wins (the history just
shrank), and the first answer after it replaces the estimate with the
endpoint's figure. One departure: a checkpoint whose ``newTokenCount`` is
not a non-negative integer is passed over here, where the CLI would take
``undefined``; the previous count is a better guess than none.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ResumeTokenCounts:
    prompt_tokens: int
    output_tokens: int
    """Tokens the last answer added (``total - prompt``), which the next prompt will carry."""
    estimated: bool


def resume_token_counts(records: Iterable[dict[str, Any]]) -> ResumeTokenCounts | None:
    """The counts to restore from the active branch's records, or None when none tells."""
    found: ResumeTokenCounts | None = None
    for record in records:
        kind = record.get("type")
        if kind == "assistant":
            found = _from_usage(record.get("usageMetadata")) or found
        elif kind == "system" and record.get("subtype") == "chat_compression":
            found = _from_checkpoint(record.get("systemPayload")) or found
    return found


def _from_usage(usage: Any) -> ResumeTokenCounts | None:
    if not isinstance(usage, dict):
        return None
    raw_prompt = usage.get("promptTokenCount")  # JS `prompt ?? total`: only an absent/null prompt falls through
    candidate = _count(raw_prompt if raw_prompt is not None else usage.get("totalTokenCount"))
    if not candidate:
        return None
    return ResumeTokenCounts(candidate, _output_tokens(usage), estimated=False)


def _output_tokens(usage: dict[str, Any]) -> int:
    """``getUsageOutputTokenCountForPromptEstimate``: total − prompt, else candidates (+ thoughts when larger)."""
    prompt, total = _count(usage.get("promptTokenCount")), _count(usage.get("totalTokenCount"))
    if prompt is None:
        return 0
    if total is not None:
        return max(0, total - prompt)
    candidates = max(0, _count(usage.get("candidatesTokenCount")) or 0)
    thoughts = max(0, _count(usage.get("thoughtsTokenCount")) or 0)
    return candidates if candidates > thoughts else candidates + thoughts


def _from_checkpoint(payload: Any) -> ResumeTokenCounts | None:
    info = payload.get("info") if isinstance(payload, dict) else None
    if not isinstance(info, dict):
        return None
    new_count = _count(info.get("newTokenCount"))
    if new_count is None or new_count < 0:
        return None
    estimated = info.get("newTokenCountIsEstimated")
    return ResumeTokenCounts(new_count, 0, estimated=estimated if isinstance(estimated, bool) else True)


def _count(value: Any) -> int | None:
    """A JSON integer as an int; None for anything else (a bool, a float, a string, absent)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None
