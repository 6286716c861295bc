"""The turn: one user message through the model and the tools, with every feature's hooks.

The :class:`~qwen_lsp.workspace.Workspace` builds the cores and the features
of a folder and hands them to an :class:`Engine`; the engine knows no
feature by name. It runs "one chat turn" through them: each feature's
recall starts, the request is assembled (the features' prompt blocks last in
the system prompt), every model request passes the features'
``before_request`` hooks, every round their ``after_round``, and the
answered turn their ``after_turn`` (see :mod:`qwen_lsp.agent.hooks`).
Everything one chat owns lives on its
:class:`~qwen_lsp.sessions.registry.ChatSession`.

Blocking work (file reads, ``git``, a cold context build, session files) runs
on worker threads, so a cancel, another chat's events or document sync never
wait behind it. Failures are :class:`~qwen_lsp.errors.EngineError` with a
message a person can act on.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import dataclass
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

from .agent.approvals import Approve
from .agent.applier import Applier
from .agent.events import EventSink, RoundDone, TurnOutcome
from .agent.fork import ParentRequest
from .agent.hooks import Feature, Turn, TurnDone
from .agent.loop import TurnRequest, run_turn
from .agent.accounting import RequestAccounting
from .agent.tool import ManagedWrites, Tool, ToolContext
from .agent.tools.read_cache import READ_CACHE
from .context import ContextAssembler, ContextError, SessionContext
from .context.attachments import Attachment, attachment_parts
from .compaction.compactor import thresholds_for
from .context.text import Problem
from .errors import EngineError
from .llm.client import ChatClient
from .llm.content import Content, Part
from .llm.errors import LLMError
from .llm.tokens import TokenCounter
from .llm.sampling import output_ceiling, turn_budget
from .protocol import ChatResult, ContextStatus, Usage
from .sessions.draft import AnswerDraft
from .sessions.registry import ChatSession, SessionRegistry, Slot, turn_recorder
from .settings.config import Settings
from .skills import SkillManager

__all__ = ["Attachment", "Engine", "EngineError"]


OPENING_FRESH = 1.0
"""Seconds for which a new chat's preparation, made as the chat was opened, stands for its first turn."""


@dataclass
class _Opening:
    """What a new chat's opening prepared for its first turn (see :meth:`Engine.session_ready`)."""

    at: float
    """Loop time of the open."""
    failure: Exception | None
    managed: ManagedWrites | None


_OPENING: Slot[_Opening | None] = Slot("opening", lambda: None)


def _failure(exc: Exception) -> Exception:
    """A preparation's failure as the turn raises it: the context's in words a person can act on."""
    return EngineError(str(exc), kind="context") if isinstance(exc, ContextError) else exc


def tool_list(base_tools: Sequence[Tool], features: Sequence[Feature]) -> list[Tool]:
    """The built-in tools, then each feature's, in feature order (the array heads the prompt-cache prefix)."""
    return [*base_tools, *(t for f in features for t in f.tools())]


class Engine:
    def __init__(
        self,
        root: Path,
        *,
        context: ContextAssembler,
        skills: SkillManager,
        sessions: SessionRegistry,
        base_tools: Sequence[Tool],
        features: Sequence[Feature],
        settings: Callable[[], Settings],
        model: Callable[[], Awaitable[ChatClient]],
        counter: TokenCounter,
        applier: Applier | None,
        open_documents: set[Path],
        touched: Callable[[ChatSession, Path], None],
        context_status: Callable[[ContextStatus], None],
        settings_problems: Callable[[], list[Problem]] = lambda: [],
    ) -> None:
        self.root = root
        self.context = context
        self.skills = skills
        self.sessions = sessions
        self.features = list(features)
        self._base_tools = list(base_tools)
        self._settings = settings
        self.model_client = model
        self.counter = counter
        self._applier = applier
        self._open_documents = open_documents
        self._touched = touched
        self._context_status = context_status
        self.accounting = RequestAccounting(counter, context, skills, lambda: self.tools, settings, settings_problems)

    @property
    def tools(self) -> list[Tool]:
        return tool_list(self._base_tools, self.features)

    # ----------------------------------------------------------------- chats
    async def open_session(self, session_id: str | None) -> ChatSession:
        """The open chat, one resumed from disk, or (no id) a new one."""
        if session_id and (open_ := self.sessions.get(session_id)) is not None:
            return open_
        if session_id:
            return self.sessions.adopt(await asyncio.to_thread(self.sessions.load, session_id))
        context = SessionContext(self.context)
        context.start_git_snapshot()  # its processes run while the rest of the chat is set up
        started = asyncio.get_running_loop().time()

        def create() -> tuple[ChatSession, tuple[str, ManagedWrites | None] | Exception]:
            # The chat's preparation for its first turn rides the same hop as the session's creation: on a new
            # chat's way to its first request these were two, then three thread hops (side by side they cost
            # more still: the work holds the GIL either way). A failure is the first turn's to report.
            created = self.sessions.new(context)
            try:
                return created, self._prepare_blocking(context, turn=True)
            except Exception as exc:
                return created, exc

        created, prepared = await asyncio.to_thread(create)
        session = self.sessions.adopt(created)
        if session.context is context:  # not a chat another caller registered first
            if isinstance(prepared, Exception):
                session.slots[_OPENING] = _Opening(started, prepared, None)
            else:
                self._prepared(context, prepared[0])
                session.slots[_OPENING] = _Opening(started, None, prepared[1])
        # Files already open in the editor count for a new chat too.
        session.context.activate_rules(sorted(self._open_documents))
        return session

    async def session_ready(self, session: ChatSession) -> None:
        """Prepare the chat's context (a report, a compression between turns); a new chat's opening made it, if
        that was at most :data:`OPENING_FRESH` seconds ago (the usual open → chat sequence), so a chat opened
        long before it is asked prepares anew. A turn prepares with :meth:`_ready_for_turn`."""
        opening = self._take_opening(session)
        if opening is None:
            await self.prepare(session.context)
        elif opening.failure is not None:
            raise _failure(opening.failure)

    async def _ready_for_turn(self, session: ChatSession) -> ManagedWrites | None:
        """The context prepared and the features' managed write roots, in one worker hop (or from a fresh opening)."""
        opening = self._take_opening(session)
        if opening is not None:
            if opening.failure is not None:
                raise _failure(opening.failure)
            return opening.managed
        try:
            blocks, managed = await asyncio.to_thread(self._prepare_blocking, session.context, turn=True)
        except ContextError as exc:
            raise _failure(exc) from exc
        self._prepared(session.context, blocks)
        return managed

    def _take_opening(self, session: ChatSession) -> _Opening | None:
        """The chat's opening, once, if it is at most :data:`OPENING_FRESH` seconds old."""
        opening = session.slots.pop(_OPENING, None)
        if opening is not None and asyncio.get_running_loop().time() - opening.at > OPENING_FRESH:
            return None
        return opening

    async def prepare(self, context: SessionContext) -> None:
        """A chat's blocking preparation (workspace build, git snapshot, prelude) and the features'
        prompt blocks, in one hop to a worker thread."""
        try:
            blocks, _ = await asyncio.to_thread(self._prepare_blocking, context, turn=False)
        except ContextError as exc:
            raise _failure(exc) from exc
        self._prepared(context, blocks)

    def _prepare_blocking(self, context: SessionContext, *, turn: bool) -> tuple[str, ManagedWrites | None]:
        """Blocking: the context, the features' prompt blocks and, for a turn, where the chat may write."""
        context.prepare()
        blocks = self._prompt_blocks()
        return blocks, self._managed_writes() if turn else None

    def _prepared(self, context: SessionContext, blocks: str) -> None:
        context.replay_deferred()
        self.context.memory_block = blocks

    def _prompt_blocks(self) -> str:
        return "\n\n".join(block for f in self.features if (block := f.prompt_block()))

    def capture(self, session: ChatSession) -> ParentRequest:
        """The chat's next request as it stands (system prompt, tools, history), for a fork to reuse."""
        return ParentRequest.capture(session.context.system_prompt(), self.accounting.declarations(self.tools), session.history)

    # ----------------------------------------------------------------- the turn
    async def chat(
        self,
        prompt: str,
        *,
        session_id: str | None = None,
        attachments: Sequence[Attachment] = (),
        emit: EventSink,
        turn_id: str | None = None,
        leave_out: frozenset[str] = frozenset(),
    ) -> ChatResult:
        """One typed turn; ``leave_out`` names features whose part this message goes without (the editor's context)."""
        session = await self.open_session(session_id)
        for feature in self.features:
            await feature.turn_starting(session)
        async with session.lock:
            turn = Turn(session, prompt, emit, turn_id or str(uuid.uuid4()), attachments, leave_out=leave_out)
            return await self.run(turn)

    async def run(self, turn: Turn) -> ChatResult:
        """Run ``turn`` (the caller holds its chat's lock). Recall starts now, runs while the request is
        assembled, and is waited for only within its own bound; whatever has not settled when the turn
        ends is dropped."""
        turn.recalls = [p for f in self.features if (p := f.recall(turn.session, turn.prompt)) is not None]
        try:
            return await self._run(turn)
        finally:
            for prefetch in turn.recalls:
                prefetch.cancel()

    async def _run(self, turn: Turn) -> ChatResult:
        session = turn.session
        client = await self.model_client()
        managed = await self._ready_for_turn(session)
        system = session.context.system_prompt()
        if turn.so_far is None:
            for att in turn.attachments:
                self._touched(session, att.path)
            attached = await asyncio.to_thread(attachment_parts, turn.attachments, self.root) if turn.attachments else []
            reminders = self._reminder_parts(session)
            # As Qwen Code 0.24.4, recalled memory goes after the startup reminders.
            recalled: list[Part] = [{"text": text} for text in await turn.initial_recalled()]
            unrecorded: list[Part] = [{"text": text} for f in self.features for text in f.reminders(turn)]
            told: list[Part] = [{"text": text} for f in self.features for text in f.user_parts(turn)]
            user_content: Content = {
                "role": "user",
                "parts": [*reminders, *recalled, *unrecorded, *attached, *told, {"text": turn.prompt}],
            }
            session.history.append(user_content)
            session.recorder.record_user({**user_content, "parts": [p for p in user_content["parts"] if all(p is not q for q in unrecorded)]})

        def on_round(done: RoundDone) -> None:
            session.prompt_tokens = done.prompt_tokens
            for feature in self.features:
                feature.after_round(session, done.prompt_tokens)
            self._context_status(self.accounting.context_status(session))

        async def before_request() -> None:
            for feature in self.features:
                await feature.before_request(turn)

        model_name = self._settings().model.name
        tools = self.tools
        req = TurnRequest(
            system=system,
            history=session.history,
            tools=tools,
            declarations=self.accounting.declarations(tools),  # read-only: shared with the size bound
            tool_context=ToolContext(
                workspace_root=self.root,
                cwd=self.root,
                chat_id=session.id,
                touched=lambda p: self._touched(session, p),
                approve=self._approver(turn),
                applier=self._applier,
                read_cache=session.slot(READ_CACHE),
                read_roots=managed.roots if managed is not None else (),
                managed_writes=managed,
            ),
            max_tokens=self._settings().model.max_output_tokens,
            budget=self._turn_budget(session),
            count_prompt=lambda _m: self.accounting.count(session.context, session.skills_tracker, session.history).total_tokens,
            before_request=before_request,
            late_reminders=turn.recalled,
        )
        started = time.monotonic()
        try:
            outcome = await run_turn(
                client,
                req,
                emit=turn.emit,
                record=turn_recorder(session.recorder, model_name),
                on_round=on_round,
                outcome=turn.so_far,
                draft=AnswerDraft(session.recorder, model_name),
            )
        except LLMError as exc:
            for feature in self.features:
                feature.turn_failed(session)
            # Kept in the session file (off the loop: a file write) so a reopened chat shows this error.
            await asyncio.to_thread(
                session.recorder.record_failure,
                exc,
                model=model_name,
                duration_ms=round((time.monotonic() - started) * 1000),
                prompt_id=f"{session.id}########{turn.turn_id}",
                secrets=[key] if (key := self._settings().api_key()) else [],
            )
            raise EngineError(exc.message, kind=exc.kind) from exc
        if outcome.finish_reason != "denied":  # 0.24.4 starts no after-turn work when the user said no (agent/loop.py)
            self.after_turn(TurnDone(session, outcome, lambda: ParentRequest.of_turn(req)))
        return ChatResult(
            session_id=session.id,
            turn_id=turn.turn_id,
            text=outcome.text,
            finish_reason="length" if outcome.finish_reason == "length" else "stop",
            usage=Usage(prompt_tokens=outcome.prompt_tokens, completion_tokens=outcome.completion_tokens),
        )

    def _turn_budget(self, session: ChatSession) -> Callable[[], int]:
        """Each round's ``max_tokens``, as 0.24.4 computes a main turn's (``llm/sampling.py``): the ceiling
        clamped to the window the last known prompt leaves (an upper bound, padded, before the endpoint reported one)."""
        s = self._settings()
        ceiling = output_ceiling(s.model.name, s.model.max_output_tokens, s.model.generation_config.sampling_params.max_tokens)
        window = thresholds_for(s).window

        def budget() -> int:
            if session.prompt_tokens > 0:
                return turn_budget(ceiling, window, session.prompt_tokens, estimated=False)
            # Before the endpoint has counted a prompt: the byte-based upper bound, cheap enough for the event loop.
            bound = self.accounting.ceiling(session.context, session.skills_tracker, session.history)
            return turn_budget(ceiling, window, bound, estimated=True)

        return budget

    def _managed_writes(self) -> ManagedWrites | None:
        for feature in self.features:
            if (managed := feature.managed_writes()) is not None:
                return managed
        return None

    def _approver(self, turn: Turn) -> Approve | None:
        return next((a for f in self.features if (a := f.approver(turn)) is not None), None)

    def after_turn(self, done: TurnDone) -> None:
        """Every feature sees every answered turn, typed or an accepted speculation; ``done.capture``
        copies the request only if one of them starts a fork."""
        for feature in self.features:
            feature.after_turn(done)

    def _reminder_parts(self, session: ChatSession) -> list[Part]:
        """``<system-reminder>`` parts placed before the user's text, in Qwen Code 0.24's order.

        The first message of a session carries the skills listing, then the
        environment prelude; later ones carry only skill deltas. Newly active
        conditional rules follow either way.
        """
        parts: list[Part] = []
        skills = session.skills_tracker.reminder(self.skills)
        if skills:
            parts.append({"text": skills})
        if not session.history:
            parts.append({"text": session.context.startup_reminder()})
        rules = session.context.pending_rule_reminder()
        if rules:
            parts.append({"text": rules})
        return parts
