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
import dataclasses
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

from .agent.approvals import Approve
from .agent.applier import Applier
from .agent.events import EventSink, RoundDone, TurnEvent
from .agent.fork import ParentRequest
from .agent.hooks import Feature, Turn, TurnDone
from .agent.loop import TurnRequest, run_turn
from .agent.accounting import RequestAccounting
from .agent.picture import RequestPictures
from .agent.new_chats import NewChats
from .agent.preparation import OPENING_FRESH, Preparation
from .agent.reminders import reminder_parts
from .agent.tool import Tool, ToolContext
from .agent.tools.read_cache import READ_CACHE
from .context import ContextAssembler, SessionContext
from .context.attachments import Attachment, attachment_parts
from .context.text import Problem
from .errors import EngineError
from .llm.client import ChatClient
from .llm.content import Content, Part
from .llm.errors import LLMError
from .llm.tokens import TokenCounter
from .protocol import ChatResult, ContextStatus, Usage
from .sessions.draft import AnswerDraft
from .sessions.registry import ChatSession, SessionRegistry, turn_recorder
from .settings.config import Settings
from .skills import SkillManager

__all__ = ["OPENING_FRESH", "Attachment", "Engine", "EngineError"]


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
        spare_chats: bool = False,
    ) -> None:
        """``spare_chats``: keep the next new chat made ahead (``agent/new_chats.py``), as a language server does."""
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
        self.preparation = Preparation(context, self.features)
        self.new_chats = NewChats(context, sessions, self.preparation, spare=spare_chats)
        self.accounting = RequestAccounting(counter, context, skills, lambda: self.tools, settings, settings_problems)
        self.pictures = RequestPictures(self.accounting.picture_parts, skills)

    @property
    def tools(self) -> list[Tool]:
        return tool_list(self._base_tools, self.features)

    # ----------------------------------------------------------------- chats
    async def open_session(self, session_id: str | None, *, missing_ok: bool = False) -> ChatSession:
        """The open chat, one resumed from disk, or (no id) a new one; ``missing_ok``: an id with no file yet is a chat
        with nothing recorded (an editor's chat across a server restart), not an error."""
        if session_id and (open_ := self.sessions.get(session_id)) is not None:
            return open_
        if session_id:
            return self.sessions.adopt(await asyncio.to_thread(self.sessions.load, session_id, missing_ok=missing_ok))
        session = await self.new_chats.open()
        # Files already open count for a new chat too.
        session.context.activate_rules(sorted(self._open_documents))
        return session

    async def session_ready(self, session: ChatSession) -> None:
        """Prepare the chat's context (a report, a compression between turns); a new chat's opening made it, if
        that was at most :data:`OPENING_FRESH` seconds ago (the usual open → chat sequence)."""
        await self.preparation.session_ready(session)

    async def prepare(self, context: SessionContext) -> None:
        await self.preparation.prepare(context)

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
        """One typed turn; ``leave_out`` names features whose part this message goes without."""
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
        await self.preparation.for_turn(session)
        system = session.context.system_prompt()
        if turn.so_far is None:
            await self._add_user_message(turn)
        model_name = self._settings().model.name
        req = self._request(turn, system)
        started = time.monotonic()
        try:
            outcome = await run_turn(
                client,
                req,
                emit=turn.emit,
                record=turn_recorder(session.recorder, model_name),
                on_round=lambda done: self._round_done(session, done),
                outcome=turn.so_far,
                draft=AnswerDraft(session.recorder, model_name),
            )
        except LLMError as exc:
            await self._turn_failed(turn, exc, model_name, time.monotonic() - started)
            raise EngineError(exc.message, kind=exc.kind) from exc
        if changes := self.pictures.changes(turn, self.features):
            turn.emit(TurnEvent("contextChanges", changes=changes))
        if outcome.finish_reason != "denied":  # 0.24.4 starts no after-turn work when the user said no (agent/loop.py)
            self.after_turn(TurnDone(session, outcome, lambda: ParentRequest.of_turn(req)))
        self.new_chats.refill()
        return ChatResult(
            session_id=session.id,
            turn_id=turn.turn_id,
            text=outcome.text,
            finish_reason="length" if outcome.finish_reason == "length" else "stop",
            usage=Usage(prompt_tokens=outcome.prompt_tokens, completion_tokens=outcome.completion_tokens),
        )

    async def _add_user_message(self, turn: Turn) -> None:
        """The typed message, recorded: reminders, the features' recalled texts (after the startup reminders, as
        Qwen Code 0.24.4 places them), their unrecorded reminders, attachments, their parts, then the prompt."""
        session = turn.session
        for att in turn.attachments:
            self._touched(session, att.path)
        attached = await asyncio.to_thread(attachment_parts, turn.attachments, self.root) if turn.attachments else []
        reminders = reminder_parts(session, self.skills)
        recalled: list[Part] = [{"text": text} for text in await turn.initial_recalled()]
        unrecorded: list[Part] = [{"text": text} for f in self.features for text in f.reminders(turn)]
        told: list[Part] = [{"text": text} for f in self.features for text in f.user_parts(turn)]
        user_content: Content = {"role": "user", "parts": [*reminders, *recalled, *unrecorded, *attached, *told, {"text": turn.prompt}]}
        session.history.append(user_content)
        session.recorder.record_user({**user_content, "parts": [p for p in user_content["parts"] if all(p is not q for q in unrecorded)]})

    def _request(self, turn: Turn, system: str) -> TurnRequest:
        session = turn.session
        tools = self.tools
        declarations = self.accounting.declarations(tools)

        async def before_request() -> None:
            for feature in self.features:
                await feature.before_request(turn)
            self.pictures.sending(session, turn.turn_id, declarations)

        async def with_managed_writes(context: ToolContext) -> ToolContext:
            managed = await self.preparation.managed_writes()
            return dataclasses.replace(context, read_roots=managed.roots if managed is not None else (), managed_writes=managed)

        return TurnRequest(
            system=system,
            history=session.history,
            tools=tools,
            declarations=declarations,  # read-only: shared with the size bound
            tool_context=ToolContext(
                workspace_root=self.root,
                cwd=self.root,
                chat_id=session.id,
                touched=lambda p: self._touched(session, p),
                approve=self._approver(turn),
                applier=self._applier,
                read_cache=session.slot(READ_CACHE),
            ),
            finish_tool_context=with_managed_writes,
            max_tokens=self._settings().model.max_output_tokens,
            budget=self.accounting.turn_budget(session),
            count_prompt=lambda _m: self.accounting.count(session.context, session.skills_tracker, session.history).total_tokens,
            before_request=before_request,
            late_reminders=turn.recalled,
        )

    def _round_done(self, session: ChatSession, done: RoundDone) -> None:
        if done.calls:  # its tools may change files a chat made ahead has seen (a commit shows in git's own files)
            self.new_chats.drop()
        session.prompt_tokens = done.prompt_tokens
        self.pictures.reported(session, done.prompt_tokens if done.reported else None)
        for feature in self.features:
            feature.after_round(session, done.prompt_tokens)
        self._context_status(self.accounting.context_status(session))

    async def _turn_failed(self, turn: Turn, exc: LLMError, model_name: str | None, seconds: float) -> None:
        """Every feature hears it; the failure is kept in the session file (off the loop: a file write), so a
        reopened chat shows this error."""
        session = turn.session
        for feature in self.features:
            feature.turn_failed(session)
        await asyncio.to_thread(
            session.recorder.record_failure,
            exc,
            model=model_name,
            duration_ms=round(seconds * 1000),
            prompt_id=f"{session.id}########{turn.turn_id}",
            secrets=[key] if (key := self._settings().api_key()) else [],
        )

    def _approver(self, turn: Turn) -> Approve | None:
        return next((a for f in self.features if (a := f.approver(turn)) is not None), None)

    def after_turn(self, done: TurnDone) -> None:
        """Every feature sees every answered turn, typed or an accepted speculation; ``done.capture``
        copies the request only if one of them starts a fork."""
        for feature in self.features:
            feature.after_turn(done)
