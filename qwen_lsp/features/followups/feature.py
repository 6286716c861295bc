"""Follow-ups as a feature: after a typed turn, suggest what comes next; accept, dismiss, abort.

The mechanism is ``glue.py`` (suggest, speculate, land) over the
``features/followups/`` core; this module plugs it into the turn (``after_turn``,
``turn_starting``, ``chat_deleted``, ``file_changed``) and runs an accepted
suggestion through the engine it is handed (a :class:`TurnRunner`), which it
never imports.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path

from ...agent.applier import Applier
from ...agent.events import EventSink
from ...agent.hooks import Feature, Turn, TurnDone, TurnRunner
from ...agent.hooks import Caller, Handler, NotHere
from .state import UnknownSuggestion
from ...llm.client import ChatClient
from ...protocol import SUGGESTION_ACCEPT, SUGGESTION_DISMISS, EmptyResult, SuggestionAcceptResult, SuggestionNotice, SuggestionParams
from ...sessions.registry import ChatSession, SessionRegistry
from ...settings.config import Settings
from .glue import Followups


class FollowupsFeature(Feature):
    name = "followups"

    def __init__(
        self,
        root: Path,
        *,
        settings: Callable[[], Settings],
        model: Callable[[], Awaitable[ChatClient]],
        applier: Applier,
        sessions: SessionRegistry,
        notify: Callable[[], Callable[[SuggestionNotice], None] | None],
        runner: Callable[[], TurnRunner],
    ) -> None:
        self._settings = settings
        self._runner = runner
        self.followups = Followups(root, settings=settings, model=model, applier=applier, sessions=sessions, notify=notify)

    def after_turn(self, done: TurnDone) -> None:
        if done.typed:
            self.followups.turn_done(done.session, done.outcome, done.capture)

    async def turn_starting(self, session: ChatSession) -> None:
        await self.followups.abort_session(session.id)  # typing anything else throws the suggestion away

    async def chat_deleted(self, session_id: str) -> None:
        await self.followups.abort_session(session_id)

    def file_changed(self, path: Path) -> None:
        self.followups.file_changed(path)  # a speculation that wrote this file is stale

    async def drain(self) -> None:
        await self.followups.drain()

    def handlers(self) -> Mapping[str, Handler]:
        return {SUGGESTION_ACCEPT.method: self._accept, SUGGESTION_DISMISS.method: self._dismiss}

    def _owned(self, suggestion_id: str) -> str:
        """The chat of a suggestion this folder holds; a request names no folder, so another may hold it."""
        session_id = self.session_of(suggestion_id)
        if session_id is None:
            raise NotHere(str(UnknownSuggestion(suggestion_id)), kind="invalid_params", param="suggestionId")
        return session_id

    async def _accept(self, p: SuggestionParams, call: Caller) -> SuggestionAcceptResult:
        session_id = self._owned(p.suggestion_id)
        turn_id = str(uuid.uuid4())
        with call.events(session_id, turn_id) as emit:
            return await self.accept(p.suggestion_id, emit=emit, turn_id=turn_id)

    async def _dismiss(self, p: SuggestionParams, _call: Caller) -> EmptyResult:
        self._owned(p.suggestion_id)
        await self.dismiss(p.suggestion_id)
        return EmptyResult()

    def session_of(self, suggestion_id: str) -> str | None:
        return self.followups.session_of(suggestion_id)

    async def dismiss(self, suggestion_id: str) -> None:
        await self.followups.dismiss(suggestion_id)

    async def accept(self, suggestion_id: str, *, emit: EventSink, turn_id: str) -> SuggestionAcceptResult:
        """Apply the suggestion's speculative turn; continue one that did not finish from its last complete
        round (``Followups.resume``); else (nothing complete, stale) run the suggestion as a normal turn."""
        engine = self._runner()
        followups = self.followups
        model_name = self._settings().model.name
        made = await followups.take_for_accept(suggestion_id)
        session = await engine.open_session(made.session_id)
        cost = followups.cost(made)
        outcome = await followups.apply(made, session, emit, model_name)
        if outcome is not None:
            engine.after_turn(TurnDone(session, outcome, lambda: engine.capture(session), typed=False))
            return SuggestionAcceptResult(applied=True, turn_id=turn_id, cost=cost)
        async with session.lock:
            so_far = await followups.resume(made, session, emit, model_name)
            if so_far is not None:
                result = await engine.run(Turn(session, made.text, emit, turn_id, so_far=so_far))
                return SuggestionAcceptResult(applied=False, turn_id=result.turn_id, cost=cost, continued=True)
        result = await engine.chat(made.text, session_id=session.id, emit=emit, turn_id=turn_id)
        return SuggestionAcceptResult(applied=False, turn_id=result.turn_id, cost=cost)
