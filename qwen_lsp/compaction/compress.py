"""Compression (``chatCompressionService.ts``): one side request turns the history into a summary; the cheap gates come first.

The request goes through the project's streaming client, as Qwen Code's
``runSideQuery`` does: streaming on (a non-streamed summary sends nothing
until it is complete, and gateways with short read timeouts cut it), one
attempt (a failure simply leaves the history as it is; the next request
tries again), no tools, at most 20,000 output tokens, thinking off (thought
deltas are ignored; DashScope, whose Qwen models think by default, is
also sent ``enable_thinking: false``).

Success is judged on the summary after its ``<analysis>`` draft is
stripped: a model that only drafted produced no summary, and accepting it
would leave the agent with "[Summary unavailable]". A summary that reached
the output cap is a failure of its own (``output_truncated``): it is
probably cut off, and telling capacity from prompt problems apart matters.

Nothing here touches the session: the caller applies ``new_history`` (and
records it) only on success, so a failed or cancelled compression leaves
the history and the session file exactly as they were.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path
from typing import Any, Literal, Protocol

from ..llm.client import FinishEvent, TextDelta, UsageEvent
from ..llm.content import Content, to_openai_messages
from .media import count_tool_response_images, parts_of, slim_compaction_input
from .post_compact import compose_post_compact_history, trailing_function_call
from .prompts import compression_prompt
from .summary import SNAPSHOT_REQUEST, strip_analysis_block

COMPACT_MAX_OUTPUT_TOKENS = 20_000
IMAGE_TRIGGER_THRESHOLD = 50
"""Tool-returned images that trigger compression under the token threshold (``screenshotTriggerThreshold``)."""
MAX_SUMMARY_CHARS = COMPACT_MAX_OUTPUT_TOKENS * 16
"""A server that streams past this many characters ignored the token cap: treated as a summary that hit it."""

TriggerReason = Literal["token_limit", "image_overflow", "manual"]


class CompressionStatus(IntEnum):
    """Qwen Code's ``CompressionStatus`` (turn.ts), same numbers, as recorded in ``chat_compression`` records."""

    COMPRESSED = 1
    FAILED_INFLATED_TOKEN_COUNT = 2
    FAILED_TOKEN_COUNT_ERROR = 3
    FAILED_EMPTY_SUMMARY = 4
    NOOP = 5
    FAILED_OUTPUT_TRUNCATED = 6

    @property
    def failed(self) -> bool:
        return self not in (CompressionStatus.COMPRESSED, CompressionStatus.NOOP)

    @property
    def wire(self) -> str:
        """The ``status`` of ``qwen/compress``: ``compressed``, ``noop``, ``failed_empty_summary``, …"""
        return self.name.lower()


@dataclass(frozen=True)
class CompressionInfo:
    original_tokens: int
    new_tokens: int
    status: CompressionStatus
    trigger: TriggerReason | None = None
    estimated: bool = False
    """``new_tokens`` is a local count (the endpoint reported no usage for the summary)."""
    original_estimated: bool = False
    """``original_tokens`` is a local count (no reported prompt size for this history)."""

    def record(self) -> dict[str, Any]:
        """``ChatCompressionInfo`` as Qwen Code 0.24.4 records it in the checkpoint (same keys, same order)."""
        out: dict[str, Any] = {
            "originalTokenCount": self.original_tokens,
            "newTokenCount": self.new_tokens,
            "newTokenCountIsEstimated": self.estimated,
            "compressionStatus": int(self.status),
        }
        if self.trigger is not None:
            out["triggerReason"] = self.trigger
        out["originalTokenCountIsEstimated"] = self.original_estimated
        return out


@dataclass(frozen=True)
class CompressionOutcome:
    info: CompressionInfo
    new_history: list[Content] | None = None
    """On success: the history that replaces the compressed one (ending with the pending message, if any)."""


class SummaryModel(Protocol):
    base_url: str

    def stream(
        self,
        messages: Sequence[Mapping[str, object]],
        *,
        tools: list[dict[str, Any]] | None = None,
        max_tokens: int | None = None,
        extra_body: dict[str, Any] | None = None,
        max_retries: int | None = None,
    ) -> AsyncIterator[Any]: ...


@dataclass(frozen=True)
class CompressionRequest:
    """One compression attempt; ``history`` is the whole chat history, its last user turn is ``pending`` when ``manual`` is false."""

    history: Sequence[Content]
    original_tokens: int
    original_estimated: bool
    auto_threshold: float
    force: bool
    manual: bool
    breaker_failures: int
    root: Path
    estimate: Callable[[Sequence[Content]], int]
    """Local token count of a history (the fallback when the endpoint reports no usage)."""
    plan_mode: bool = False


def trigger_for(req: CompressionRequest) -> TriggerReason | None:
    """The cheap gates (as ``ChatCompressionService.compress``): why this compression runs, or None for NOOP."""
    if req.breaker_failures >= 3 and not req.force:
        return None
    trigger: TriggerReason = "manual" if req.manual else "token_limit"
    if not req.force and req.original_tokens < req.auto_threshold:
        if count_tool_response_images(req.history) < IMAGE_TRIGGER_THRESHOLD:
            return None
        trigger = "image_overflow"
    if len(split_pending(req.history, manual=req.manual)[0]) < 2:
        return None
    return trigger


def split_pending(history: Sequence[Content], *, manual: bool) -> tuple[list[Content], Content | None]:
    """The part to compress and the pending user turn that follows it (the new prompt or the tool responses).

    Manual compression runs between turns: nothing is pending, and a trailing
    model turn with a function call is an orphan (its responses will never
    come), so it is cut off. Automatic compression keeps it only when the
    pending turn carries responses; before a new prompt it is an orphan too
    (e.g. in a session another client left mid-call), and keeping it would
    put a call without responses before the prompt.
    """
    base = list(history)
    pending = base.pop() if not manual and base and base[-1].get("role") == "user" else None
    if trailing_function_call(base) is not None and not _has_function_response(pending):
        base.pop()
    return base, pending


def _has_function_response(content: Content | None) -> bool:
    return content is not None and any("functionResponse" in p for p in parts_of(content))


def _extra_body(base_url: str) -> dict[str, Any] | None:
    return {"enable_thinking": False} if "dashscope" in base_url.lower() else None


async def _ask(model: SummaryModel, system: str, contents: list[Content]) -> tuple[str, UsageEvent | None, str]:
    messages = to_openai_messages(system, contents)
    text: list[str] = []
    usage: UsageEvent | None = None
    finish = "stop"
    size = 0
    stream = model.stream(messages, max_tokens=COMPACT_MAX_OUTPUT_TOKENS, extra_body=_extra_body(model.base_url), max_retries=0)
    async with contextlib.aclosing(stream) as events:  # type: ignore[type-var]
        async for event in events:
            if isinstance(event, TextDelta):
                text.append(event.text)
                size += len(event.text)
                if size > MAX_SUMMARY_CHARS:
                    return "".join(text), usage, "length"
            elif isinstance(event, UsageEvent):
                usage = event
            elif isinstance(event, FinishEvent):
                finish = event.reason
    return "".join(text), usage, finish


def _merge_pending(composed: list[Content], pending: Content | None) -> list[Content]:
    """Append the pending user turn without two user messages in a row (merged into the attachments message)."""
    if pending is None:
        return composed
    if composed[-1]["role"] == "user":
        last = composed[-1]
        return [*composed[:-1], {"role": "user", "parts": [*last["parts"], *pending["parts"]]}]
    return [*composed, pending]


async def compress(model: SummaryModel, req: CompressionRequest) -> CompressionOutcome:
    """Run the gates, the side request and the composition; raises only the model client's errors (and cancellation)."""
    trigger = trigger_for(req)
    if trigger is None:
        return CompressionOutcome(CompressionInfo(req.original_tokens, req.original_tokens, CompressionStatus.NOOP))
    base, pending = split_pending(req.history, manual=req.manual)
    side_history = [*base, pending] if pending is not None and _has_function_response(pending) else base
    system = compression_prompt()
    request: Content = {"role": "user", "parts": [{"text": SNAPSHOT_REQUEST}]}
    contents = [*slim_compaction_input(side_history), request]
    raw, usage, finish = await _ask(model, system, contents)

    def failed(status: CompressionStatus) -> CompressionOutcome:
        return CompressionOutcome(CompressionInfo(req.original_tokens, req.original_tokens, status, trigger))

    stripped = strip_analysis_block(raw)
    if not stripped:
        return failed(CompressionStatus.FAILED_EMPTY_SUMMARY)
    output_tokens = usage.completion_tokens if usage and usage.completion_tokens else req.estimate([{"role": "model", "parts": [{"text": raw}]}])
    if output_tokens >= COMPACT_MAX_OUTPUT_TOKENS or finish == "length":
        return failed(CompressionStatus.FAILED_OUTPUT_TRUNCATED)
    restored = await asyncio.to_thread(compose_post_compact_history, base, raw, root=req.root, plan_mode=req.plan_mode)
    new_history = _merge_pending(restored.history, pending)
    estimated = usage is None or not usage.prompt_tokens
    if not estimated and usage is not None:
        # The pending tool responses were part of the compression input, but they stay in the new history.
        pending_tool_tokens = req.estimate([pending]) if pending is not None and side_history is not base else 0
        new_tokens = max(0, req.original_tokens + pending_tool_tokens - (usage.prompt_tokens - 1000) + usage.completion_tokens)
        new_tokens += math.ceil(restored.restoration_chars / 4)
    else:
        new_tokens = max(0, req.original_tokens - req.estimate(req.history) + req.estimate(new_history))
    if new_tokens > req.original_tokens:
        return failed(CompressionStatus.FAILED_INFLATED_TOKEN_COUNT)
    info = CompressionInfo(req.original_tokens, new_tokens, CompressionStatus.COMPRESSED, trigger, estimated, req.original_estimated)
    return CompressionOutcome(info, new_history)
