"""When compaction runs for a chat, and how its result is applied (docs/compaction.md).

The engine awaits :meth:`Compactor.before_request` before every model
request of a turn, between tool rounds too. It microcompacts first (idle or
size trigger: free, no model call), then compresses when the prompt is
still at or over the ``auto`` threshold, or when 50 or more images from
tool results have piled up (image overflow). At ``hard`` it compresses even
when the circuit breaker is open. :meth:`compress_now` is the manual path
(``qwen/compress``, ``qwen-lsp compress``): ``fast`` is microcompaction
with every trigger forced plus the thought parts dropped; ``full`` is a
forced compression.

The prompt size checked is the model's last reported prompt count plus a
local count of what was appended since (the new prompt, tool responses),
or a full local count when the model has not reported one for this history.
Before that full count, an upper bound from the prompt's bytes
(``bound_prompt``) is asked: a prompt whose bound is below ``auto`` cannot
be due, so a new chat's first request is not held up by the tokenizer.

A compression is applied only when it succeeded: the checkpoint is written
to the session file first, then the history is replaced in place (the
running turn holds the same list). Until then nothing is touched, so a
failed or cancelled compression leaves history and file as they were; once
the checkpoint is being written, a cancel waits for the history to follow,
so the two never disagree.

The gate compares with the context meter's ``auto``/``hard`` (the window
as configured), not seed-era Qwen Code's window minus the reserved output
tokens, so what the meter shows and what happens agree. Microcompaction is not recorded: the file keeps
the full results, and resume may microcompact them again.

Read cache: the agent's tools keep no file-read cache today, so nothing
serves stale placeholders. ``on_reads_evicted`` is the hook a cache plugs
into: it receives the paths whose read results were cleared, or None when
some path could not be recovered (forget every cached read).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..settings.config import Settings
from ..llm.content import Content
from ..llm.errors import LLMError
from ..llm.tokens import TokenCeiling
from ..sessions.registry import ChatSession, Slot
from ..skills.listing import SkillListingTracker
from .breaker import CircuitBreaker
from .compress import CompressionInfo, CompressionOutcome, CompressionRequest, CompressionStatus, SummaryModel, compress, trigger_for
from .media import count_tool_response_images
from .microcompact import MicrocompactMeta, MicrocompactSettings, microcompact_history, strip_thoughts
from .thresholds import Thresholds, compute_thresholds
from .windows import context_window

log = logging.getLogger(__name__)

_CEILING = TokenCeiling()

PROGRESS_TITLE = "Compressing conversation history…"

Status = Callable[[str], None]
Progress = Callable[[str], Callable[[str], None]]
"""``begin(title)`` → ``end(message)``: work-done progress in the editor."""


@dataclass(frozen=True)
class CompactResult:
    """What ``qwen/compress`` answers: ``status`` is ``compressed``, ``noop`` or ``failed_…``."""

    status: str
    tokens_before: int
    tokens_after: int


@dataclass
class _Base:
    """The model's last reported prompt size, and the history prefix it covered."""

    tokens: int
    length: int
    history: list[Content]


@dataclass
class _ChatState:
    breaker: CircuitBreaker = field(default_factory=CircuitBreaker)
    last_completion: float | None = None
    base: _Base | None = None
    sent: int = 0
    compressed: tuple[int, int] | None = None
    """The prompt size before and after the last compression, until :meth:`Compactor.take_compressed` takes it."""


CHAT_STATE = Slot("compaction", _ChatState)
"""Each chat's token base, idle clock and circuit breaker, kept on the chat."""


@dataclass
class CompactionSettings:
    """What the compactor reads from the settings in effect, each time (settings change between turns)."""

    thresholds: Thresholds
    microcompact: MicrocompactSettings
    plan_mode: bool = False


class Compactor:
    def __init__(
        self,
        root: Path,
        *,
        model: Callable[[], Awaitable[SummaryModel]],
        settings: Callable[[], CompactionSettings],
        count_content: Callable[[Content], int],
        count_prompt: Callable[[ChatSession], int],
        bound_prompt: Callable[[ChatSession], int] | None = None,
        on_compacted: Callable[[ChatSession], None] = lambda _s: None,
        progress: Progress = lambda _title: lambda _message: None,
        on_reads_evicted: Callable[[ChatSession, frozenset[str] | None], None] = lambda _s, _paths: None,
    ) -> None:
        self.root = root
        self._model = model
        self._settings = settings
        self._count_content = count_content
        self._count_prompt = count_prompt
        self._bound_prompt = bound_prompt
        self._on_compacted = on_compacted
        self._progress = progress
        self._on_reads_evicted = on_reads_evicted

    @staticmethod
    def _state(session: ChatSession) -> _ChatState:
        return session.slot(CHAT_STATE)

    def take_compressed(self, session: ChatSession) -> tuple[int, int] | None:
        """The prompt size before and after the chat's last compression, once (None: none since last asked)."""
        state = self._state(session)
        taken, state.compressed = state.compressed, None
        return taken

    def breaker(self, session: ChatSession) -> CircuitBreaker:
        return self._state(session).breaker

    # ----------------------------------------------------------------- token accounting
    def observe_round(self, session: ChatSession, prompt_tokens: int) -> None:
        """A model round finished: its prompt size covers the history as it was sent; idle time restarts."""
        state = self._state(session)
        state.last_completion = time.time()
        state.base = _Base(prompt_tokens, min(state.sent, len(session.history)), session.history)

    def prompt_tokens(self, session: ChatSession) -> int:
        """What the next request will cost: the last reported count plus what was appended since."""
        return self._measure(session)[0]

    def _measure(self, session: ChatSession, enough_below: float | None = None) -> tuple[int, bool]:
        """The prompt size, and whether it is a local count only (no reported count for this history).

        With ``enough_below``, a local count is first bounded from above; a
        bound under that figure is returned as it is (the caller only needs
        to know the prompt is below it).
        """
        base = self._state(session).base
        if base is None or base.history is not session.history or base.length > len(session.history):
            if enough_below is not None and self._bound_prompt is not None:
                ceiling = self._bound_prompt(session)
                if ceiling < enough_below:
                    return ceiling, True
            return self._count_prompt(session), True
        appended = session.history[base.length :]
        if enough_below is not None:
            ceiling = base.tokens + sum(_CEILING.count_content(c) for c in appended)
            if ceiling < enough_below:
                return ceiling, False
        return base.tokens + sum(self._count_content(c) for c in appended), False

    def _history_tokens(self, history: Sequence[Content]) -> int:
        return sum(self._count_content(c) for c in history)

    def _replace(self, session: ChatSession, history: list[Content], tokens: int) -> None:
        session.history[:] = history  # in place: a running turn holds this list
        session.prompt_tokens = tokens
        self._state(session).base = _Base(tokens, len(history), session.history)

    # ----------------------------------------------------------------- automatic
    async def before_request(self, session: ChatSession, status: Status) -> None:
        """Microcompact, then compress if still at ``auto`` (or image overflow); see the module docstring."""
        state = self._state(session)
        settings = self._settings()
        mc = microcompact_history(session.history, state.last_completion, settings.microcompact)
        if mc is not None:
            self._apply_microcompaction(session, mc[0], mc[1])
        image_overflow = count_tool_response_images(session.history) >= 50
        # A bound is enough to learn the prompt is below auto, unless images make it due anyway:
        # then the compression reports the size, which must be the real count.
        tokens, estimated = self._measure(session, enough_below=None if image_overflow else settings.thresholds.auto)
        level = settings.thresholds.level(tokens)
        force = level == "hard"
        due = level in ("auto", "hard") or image_overflow
        if due and state.breaker.allows(force=force):
            outcome = await self._compress(session, (tokens, estimated), settings, force=force, manual=False, status=status)
            if outcome is not None and outcome.info.status is not CompressionStatus.NOOP:
                status(_describe(outcome))
        state.sent = len(session.history)

    def _apply_microcompaction(self, session: ChatSession, history: list[Content], meta: MicrocompactMeta) -> int:
        """Swap in the cleared history; the token count drops by the estimated difference. Returns that difference."""
        saved = max(0, self._history_tokens(session.history) - self._history_tokens(history))
        state = self._state(session)
        base = state.base
        session.history[:] = history
        session.prompt_tokens = max(0, session.prompt_tokens - saved)
        if base is not None and base.history is session.history:
            base.tokens = max(0, base.tokens - saved)
            base.length = min(base.length, len(history))
        if meta.unresolved_evicted_reads:
            self._on_reads_evicted(session, None)
        elif meta.evicted_read_paths:
            self._on_reads_evicted(session, frozenset(meta.evicted_read_paths))
        log.info("microcompaction (%s): %d tool results and %d media cleared, ~%d tokens", meta.trigger, meta.tools_cleared, meta.media_cleared, saved)
        return saved

    # ----------------------------------------------------------------- manual
    async def compress_now(self, session: ChatSession, *, fast: bool) -> CompactResult:
        """``qwen/compress``: fast = forced microcompaction + thoughts dropped; full = forced compression.

        Raises :class:`~qwen_lsp.llm.errors.LLMError` when the compression request itself fails.
        """
        settings = self._settings()
        measured = self._measure(session)
        before = measured[0]
        if fast:
            mc = microcompact_history(session.history, None, settings.microcompact, force=True)
            history = strip_thoughts(mc[0] if mc else session.history)
            if mc is None and len(history) == len(session.history):
                return CompactResult("noop", before, before)
            meta = mc[1] if mc else MicrocompactMeta(trigger="force")
            saved = self._apply_microcompaction(session, history, meta)
            self._on_compacted(session)
            return CompactResult("compressed", before, max(0, before - saved))
        outcome = await self._compress(session, measured, settings, force=True, manual=True)
        assert outcome is not None
        info = outcome.info
        return CompactResult(info.status.wire, before, info.new_tokens if info.status is CompressionStatus.COMPRESSED else before)

    # ----------------------------------------------------------------- compression
    async def _compress(
        self, session: ChatSession, measured: tuple[int, bool], settings: CompactionSettings, *, force: bool, manual: bool, status: Status | None = None
    ) -> CompressionOutcome | None:
        """Compress and apply; None when the request or the checkpoint failed (raised again when ``manual``, else told to ``status``)."""
        state = self._state(session)
        tokens, original_estimated = measured
        req = CompressionRequest(
            history=list(session.history),
            original_tokens=tokens,
            original_estimated=original_estimated,
            auto_threshold=settings.thresholds.auto,
            force=force,
            manual=manual,
            breaker_failures=state.breaker.failures,
            root=self.root,
            estimate=self._history_tokens,
            plan_mode=settings.plan_mode,
        )
        if trigger_for(req) is None:
            return CompressionOutcome(CompressionInfo(tokens, tokens, CompressionStatus.NOOP))
        end = self._progress(PROGRESS_TITLE)
        try:
            model = await self._model()
            outcome = await compress(model, req)
        except asyncio.CancelledError:
            end("Compression cancelled; the history is unchanged.")
            raise
        except LLMError as exc:
            state.breaker.failed()
            end(f"Compression failed: {exc.message}")
            if manual:
                raise
            log.warning("compression failed; continuing with the full history: %s", exc.message)
            if status is not None:
                status(f"Compression failed; the history is unchanged. {exc.message}")
            return None
        except Exception:  # e.g. no model configured: the progress must still end
            end("Compression failed; the history is unchanged.")
            raise
        if outcome.new_history is None:
            if outcome.info.status.failed:
                state.breaker.failed()
            end(_describe(outcome))
            return outcome
        try:
            await _uncancellable(self._commit(session, outcome))
        except (OSError, ValueError) as exc:  # the checkpoint could not be written (or was refused): nothing was applied
            state.breaker.failed()
            end(f"Compression could not be saved: {exc}")
            if manual:
                raise
            log.warning("compression not applied: %s", exc)
            if status is not None:
                status(f"Compression could not be saved; the history is unchanged. {exc}")
            return None
        state.breaker.succeeded()
        state.compressed = (outcome.info.original_tokens, outcome.info.new_tokens)
        end(_describe(outcome))
        self._on_compacted(session)
        return outcome

    async def _commit(self, session: ChatSession, outcome: CompressionOutcome) -> None:
        """Checkpoint first, then the history: a write that fails leaves both as they were."""
        history = outcome.new_history
        assert history is not None
        await asyncio.to_thread(session.recorder.record_chat_compression, history, outcome.info.record())
        self._replace(session, history, outcome.info.new_tokens)
        # The skills listing travelled in the first user message, which the summary replaced: send it again.
        session.skills_tracker = SkillListingTracker()


async def _uncancellable(work: Coroutine[Any, Any, None]) -> None:
    """Run ``work`` to the end even when cancelled meanwhile, then pass the cancel on.

    The caller still holds the chat's lock, so no next turn can touch the
    history before the checkpoint and the history agree.
    """
    task = asyncio.ensure_future(work)
    try:
        await asyncio.shield(task)
    except asyncio.CancelledError:
        await task
        raise


def _describe(outcome: CompressionOutcome) -> str:
    info = outcome.info
    if info.status is CompressionStatus.COMPRESSED:
        why = " (too many images from tool results)" if info.trigger == "image_overflow" else ""
        return f"Compressed the conversation history{why}: {info.original_tokens:,} → {info.new_tokens:,} tokens."
    reasons: dict[CompressionStatus, str] = {
        CompressionStatus.FAILED_EMPTY_SUMMARY: "the model returned no summary",
        CompressionStatus.FAILED_OUTPUT_TRUNCATED: "the summary hit the output limit",
        CompressionStatus.FAILED_INFLATED_TOKEN_COUNT: "the summary would not have been smaller",
        CompressionStatus.FAILED_TOKEN_COUNT_ERROR: "its size could not be counted",
    }
    if info.status in reasons:
        return f"Compression failed ({reasons[info.status]}); the history is unchanged."
    return "Nothing to compress."



def thresholds_for(settings: Settings) -> Thresholds:
    """The thresholds for the model and settings in effect (window as ``windows.py``, formula as ``thresholds.py``)."""
    window = context_window(settings.model.name, settings.model.context_window)
    return compute_thresholds(window, settings.compression.threshold)


def compaction_settings(settings: Settings) -> CompactionSettings:
    """The compactor's view of the settings in effect."""
    idle = settings.context.clear_context_on_idle
    return CompactionSettings(
        thresholds=thresholds_for(settings),
        microcompact=MicrocompactSettings(idle.tool_results_threshold_minutes, idle.tool_results_num_to_keep, idle.tool_results_total_chars_threshold),
        plan_mode=settings.tools.approval_mode == "plan",
    )
