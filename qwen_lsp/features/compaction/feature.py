"""Compaction as a feature: before each request it microcompacts and compresses the chat's history.

The mechanism is the core in ``compaction/``; this module plugs it into the
turn (``before_request``, ``after_round``), keeps each chat's state on the
chat (``compaction.compactor.CHAT_STATE``), tells the chat's read cache what
left the history, and runs ``qwen/compress`` between turns.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ...agent.hooks import Feature, Turn, TurnRunner
from ...agent.hooks import Caller, Handler
from ...agent.tools.read_cache import READ_CACHE
from ...compaction.compactor import Compactor, Progress, compaction_settings
from ...compaction.compress import SummaryModel
from ...errors import EngineError
from ...llm.content import Content
from ...llm.errors import LLMError
from ...protocol import COMPRESS, CompressParams, CompressResult, ContextChange
from ...sessions.registry import ChatSession, Slot
from ...settings.config import Settings


class CompactionFeature(Feature):
    name = "compaction"

    def __init__(
        self,
        root: Path,
        *,
        model: Callable[[], Awaitable[SummaryModel]],
        settings: Callable[[], Settings],
        count_content: Callable[[Content], int],
        count_prompt: Callable[[ChatSession], int],
        bound_prompt: Callable[[ChatSession], int] | None,
        on_compacted: Callable[[ChatSession], None],
        progress: Progress,
        runner: Callable[[], TurnRunner],
    ) -> None:
        self._on_compacted = on_compacted
        self._runner = runner
        self.compactor = Compactor(
            root,
            model=model,
            settings=lambda: compaction_settings(settings()),
            count_content=count_content,
            count_prompt=count_prompt,
            bound_prompt=bound_prompt,
            on_compacted=self._compacted,
            progress=progress,
            on_reads_evicted=lambda session, paths: session.slot(READ_CACHE).evict(paths),
        )

    async def before_request(self, turn: Turn) -> None:
        await self.compactor.before_request(turn.session, turn.status)
        if (sizes := self.compactor.take_compressed(turn.session)) is not None:
            turn.session.slot(COMPRESSED).pending = sizes

    def context_changes(self, turn: Turn) -> list[ContextChange]:
        """A compression since the previous turn's request (this turn's, or a ``qwen/compress`` between turns)."""
        told = turn.session.slot(COMPRESSED)
        if told.pending is None:
            return []
        (before, after), told.pending = told.pending, None
        return [ContextChange(kind="compression", label=f"history compressed {_k(before)} → {_k(after)}")]

    def after_round(self, session: ChatSession, prompt_tokens: int) -> None:
        self.compactor.observe_round(session, prompt_tokens)

    def _compacted(self, session: ChatSession) -> None:
        session.slot(READ_CACHE).forget(None)  # its reads left the history with it
        self._on_compacted(session)

    def handlers(self) -> Mapping[str, Handler]:
        return {COMPRESS.method: self._compress}

    async def _compress(self, p: CompressParams, _call: Caller) -> CompressResult:
        return await self.compress_chat(p.session_id, p.mode)

    async def compress_chat(self, session_id: str, mode: str = "full") -> CompressResult:
        """``qwen/compress``: compact a chat now, between turns, once its context is prepared."""
        runner = self._runner()
        session = await runner.open_session(session_id)
        async with session.lock:
            await runner.session_ready(session)
            return await self.compress(session, mode)

    async def compress(self, session: ChatSession, mode: str) -> CompressResult:
        """``qwen/compress``: compact a chat now, between turns (``fast``: no model call); the caller holds its lock."""
        try:
            done = await self.compactor.compress_now(session, fast=mode == "fast")
        except LLMError as exc:
            raise EngineError(f"Compression failed; the history is unchanged. {exc.message}", kind=exc.kind) from exc
        except (OSError, ValueError) as exc:  # the checkpoint could not be written, or was refused
            raise EngineError(f"Compression could not be saved; the history is unchanged. {exc}") from exc
        self.compactor.take_compressed(session)  # told below, with the sizes this request answers
        if done.status == "compressed":
            session.slot(COMPRESSED).pending = (done.tokens_before, done.tokens_after)
        return CompressResult(status=done.status, tokens_before=done.tokens_before, tokens_after=done.tokens_after)


@dataclass
class _Compressions:
    """The last compression of a chat that its next turn has not shown yet."""

    pending: tuple[int, int] | None = None
    """The prompt size before and after."""


COMPRESSED: Slot[_Compressions] = Slot("compaction.shown", _Compressions)


def _k(tokens: int) -> str:
    """41k, 4.1k, 950: a chip's short figure."""
    if tokens < 1000:
        return str(tokens)
    return f"{tokens / 1000:.1f}k" if tokens < 10_000 else f"{round(tokens / 1000)}k"

