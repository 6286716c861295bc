"""Follow-up suggestions' mechanism: suggest after a turn, speculate, accept or abort.

After a turn that ended normally, one side query (``features/followups/prompt.py``)
proposes what the user may type next; it runs in the background, started
as the turn returns, so the chat's answer never waits for it, and it needs
a network round trip, so ``qwen/suggestion`` reaches the editor after the
answer. When speculation is on (``followup.speculate``, Qwen Code's
``ui.enableSpeculation``: off by default, as in 0.24.4), a fork of the finished turn
runs the suggestion into an overlay (``speculation.py``) and the
editor is told again, with ``ready``, when it is done.

Accepting a ready speculation applies its overlay through the engine's
applier (``workspace/applyEdit`` in the editor) — but only onto what the
speculation started from: the chat has had no turn since, every file
still reads as it did when the speculation first wrote it, and the
approval mode in effect *now* still lets edits run without asking;
otherwise the suggestion simply runs as a normal turn. Dismissing, a new turn in that
chat, or an edit of a file the overlay wrote aborts it and deletes the
overlay: nothing of it reaches the workspace or the session.

Accepting a speculation that did not finish — it stopped at a call needing
approval, failed, or was still running — continues the turn "from where it
stopped" (:meth:`Followups.resume`): its complete rounds (each model answer
with all its tool results) land exactly as a ready result does (same
checks, same records, their chat events replayed), and the engine then
goes on with the normal loop from the last tool results, so the model
re-issues the call it stopped at and that call now asks as usual. A
still-running speculation is cancelled and treated the same way rather
than waited for or re-run: what its complete rounds did is valid work (the
same calls, gated the same way, as a finished run's), the round in flight
is dropped whole (its writes undone in the overlay), and the user, who
asked for it now, neither waits for the rest of a background run nor pays
for the finished rounds twice. With no complete round there is nothing to
keep, and the suggestion runs as a normal turn.

Settings are read at each use, so a change applies from the next turn.
"""

from __future__ import annotations

import asyncio
import logging
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from ...agent.events import EventSink, TurnEvent, TurnOutcome
from ...agent.fork import ParentRequest
from ...agent.side_query import SideQuery, SideQueryError
from ...agent.tools.read_cache import READ_CACHE
from .speculation import SpeculationRun, run_speculation
from ...background import BackgroundTasks
from ...settings.config import Settings
from ...agent.applier import Applier, ApplyError
from ...errors import EngineError
from .gate import EDITS_WITHOUT_ASKING
from .overlay import Overlay
from .prompt import SCHEMA, SYSTEM, TIMEOUT_SECONDS, parse_suggestion, user_message
from .state import Suggestion, Suggestions, UnknownSuggestion
from ...llm.client import ChatClient
from ...llm.content import Content
from ...files.paths import project_state_dir
from ...protocol import SpeculationCost, SuggestionNotice
from ...sessions.registry import ChatSession, SessionRegistry, turn_recorder

log = logging.getLogger(__name__)

Notify = Callable[[SuggestionNotice], None]


def overlay_directory(root: Path, suggestion_id: str) -> Path:
    """``~/.qwen/projects/<project>/tmp/speculation/<id>``; the system temp dir if that lay inside the workspace."""
    base = project_state_dir(root) / "tmp" / "speculation"
    if base.resolve().is_relative_to(root.resolve()):
        base = Path(tempfile.gettempdir()) / "qwen-speculation"
    return base / suggestion_id


def speculation_on(settings: Settings) -> bool:
    """``followup.speculate`` (``ui.enableSpeculation``): Qwen Code 0.24.4 speculates only when it is set, in any mode."""
    return settings.followup.speculate


def cost_of(run: SpeculationRun | None) -> SpeculationCost | None:
    if run is None:
        return None
    u = run.usage
    return SpeculationCost(prompt_tokens=u.prompt_tokens, completion_tokens=u.completion_tokens, requests=u.requests)


def _calls(contents: list[Content]) -> int:
    return sum(1 for c in contents if c.get("role") == "model" for p in c.get("parts", []) if "functionCall" in p)


def _outcome(run: SpeculationRun, applied: list[Path]) -> TurnOutcome:
    """An accepted speculation as the turn it stands for: its calls count toward skill review and
    the files it wrote are the turn's writes, as if the user had typed the suggestion."""
    return TurnOutcome(
        text=run.text,
        finish_reason="stop",
        prompt_tokens=run.last_prompt_tokens,
        completion_tokens=run.usage.completion_tokens,
        rounds=run.usage.requests,
        tool_calls=_calls(run.produced),
        written=[str(p) for p in applied],
    )


class Followups:
    def __init__(
        self,
        root: Path,
        *,
        settings: Callable[[], Settings],
        model: Callable[[], Awaitable[ChatClient]],
        applier: Applier,
        sessions: SessionRegistry,
        notify: Callable[[], Notify | None],
    ) -> None:
        self._root = root
        self._settings = settings
        self._model = model
        self._applier = applier
        self._sessions = sessions
        self._notify = notify
        self.pending = Suggestions()
        self._tasks = BackgroundTasks()


    # ------------------------------------------------------------ after a turn
    def turn_done(self, session: ChatSession, outcome: TurnOutcome, capture: Callable[[], ParentRequest]) -> None:
        """The turn answered: suggest a follow-up in the background (nothing when off, or nobody listens)."""
        if self._notify() is None or not self._settings().followup.enabled or outcome.finish_reason != "stop":
            return
        parent = capture()  # now: the next turn would grow the history under us
        self._tasks.spawn(self._suggest(session.id, parent, len(session.history)))

    async def _suggest(self, session_id: str, parent: ParentRequest, length: int) -> None:
        try:
            client = await self._model()
            answer = await SideQuery(client, temperature=0.0)(
                system=SYSTEM, user=user_message(parent.history), json_schema=SCHEMA, timeout=TIMEOUT_SECONDS
            )
        except (EngineError, SideQueryError) as exc:
            log.info("no follow-up suggestion: %s", getattr(exc, "message", exc))
            return
        text = parse_suggestion(answer)
        session = self._sessions.get(session_id)
        notify = self._notify()
        if text is None or session is None or notify is None or session.lock.locked() or len(session.history) != length:
            return  # nothing worth showing, or the chat moved on (or is moving on) meanwhile
        made, replaced = self.pending.add(session_id, text, length)
        await self._abort(replaced)
        notify(SuggestionNotice(session_id=session_id, suggestion_id=made.id, text=text))
        if speculation_on(self._settings()):
            made.task = self._tasks.spawn(self._speculate(made, parent, client))

    async def _speculate(self, made: Suggestion, parent: ParentRequest, client: ChatClient) -> None:
        made.overlay = overlay = Overlay(self._root, overlay_directory(self._root, made.id))
        made.status = "running"
        try:
            run = await run_speculation(
                client,
                parent,
                made.text,
                overlay=overlay,
                applier=self._applier,
                approval_mode=lambda: self._settings().tools.approval_mode,
                cancel=made.cancel,
                max_tokens=self._settings().model.max_output_tokens,
            )
        except Exception as exc:  # a bug must cost the speculation, never the server; accept then runs a normal turn
            log.exception("speculation %s failed", made.id)
            run = SpeculationRun(status="failed", reason=f"error: {exc}")
        made.run = run
        cost = cost_of(run)
        log.info("speculation %s: %s %s (cost %s)", made.id, run.status, run.reason, cost.wire() if cost else {})
        if not self.pending.is_current(made) or run.status == "cancelled":
            return  # aborted meanwhile: whoever took it cleans up
        ready = run.status == "ready"
        made.status = "ready" if ready else "stopped" if run.status == "stopped" else "failed"
        if not ready:
            made.stopped_at = run.reason or run.status
            # Accept continues from the complete rounds: the overlay keeps just their writes; with none, it runs a normal turn.
            await asyncio.to_thread(overlay.rewind if run.complete else overlay.discard)
        notify = self._notify()
        if notify is not None and self.pending.is_current(made):
            stopped = None if ready else made.stopped_at
            notify(SuggestionNotice(session_id=made.session_id, suggestion_id=made.id, text=made.text, ready=ready, stopped_at=stopped, cost=cost))

    # ------------------------------------------------------------ aborting
    async def abort_session(self, session_id: str) -> None:
        """A new turn (or the chat's deletion): its pending suggestion is void."""
        await self._abort(self.pending.take_session(session_id))

    def file_changed(self, path: Path) -> None:
        """The user edited ``path``: speculations that wrote it are stale (taken now, cleaned up in the background)."""
        gone = self.pending.take_touching(path)
        if gone:
            self._tasks.spawn(self._abort(gone))

    async def dismiss(self, suggestion_id: str) -> None:
        await self._abort([self._take(suggestion_id)])

    async def drain(self) -> None:
        """Shutdown: side queries and speculations in flight are cancelled, every overlay deleted."""
        await self._tasks.wait(cancel=True)
        await self._abort(self.pending.take_all())

    async def _abort(self, gone: list[Suggestion]) -> None:
        """Stop each speculation, wait until it ended, then delete its overlay."""
        for s in gone:
            s.cancel.set()
        for s in gone:
            if s.task is not None and s.task is not asyncio.current_task():
                await asyncio.gather(s.task, return_exceptions=True)
            if s.overlay is not None:
                await asyncio.to_thread(s.overlay.discard)

    def _take(self, suggestion_id: str) -> Suggestion:
        try:
            return self.pending.take(suggestion_id)
        except UnknownSuggestion as exc:
            raise EngineError(str(exc), kind="invalid_params", param="suggestionId") from None

    # ------------------------------------------------------------ accepting
    def session_of(self, suggestion_id: str) -> str | None:
        """The chat a pending suggestion belongs to; None when this workspace has no such suggestion."""
        return self.pending.get(suggestion_id).session_id if self.pending.owns(suggestion_id) else None

    @staticmethod
    def cost(made: Suggestion) -> SpeculationCost | None:
        return cost_of(made.run) if isinstance(made.run, SpeculationRun) else None

    async def take_for_accept(self, suggestion_id: str) -> Suggestion:
        """The suggestion, no longer pending; a speculation still running is cancelled and waited for,
        its overlay kept: :meth:`apply` or :meth:`resume` uses what it completed, then deletes it."""
        made = self._take(suggestion_id)
        made.cancel.set()
        if made.task is not None and made.task is not asyncio.current_task():
            await asyncio.gather(made.task, return_exceptions=True)
        return made

    async def apply(self, made: Suggestion, session: ChatSession, emit: EventSink, model_name: str | None) -> TurnOutcome | None:
        """Apply a ready speculation as the chat's next turn and say what it did (for the after-turn
        hooks, as a typed turn would); None (and nothing changed) when it cannot be."""
        run = made.run
        overlay = made.overlay
        if not isinstance(run, SpeculationRun) or run.status != "ready" or overlay is None:
            return None
        try:
            async with session.lock:
                done = await self._land(made, session, overlay, run.records, run.events, emit, model_name)
                if done is not None and run.last_prompt_tokens:
                    session.prompt_tokens = run.last_prompt_tokens
            return None if done is None else _outcome(run, done)
        finally:
            await asyncio.to_thread(overlay.discard)

    async def resume(self, made: Suggestion, session: ChatSession, emit: EventSink, model_name: str | None) -> TurnOutcome | None:
        """Land the complete rounds of a speculation that did not finish (module doc), for the caller to
        continue the turn from; returns the turn so far (its calls and writes, for the after-turn hooks),
        or None (nothing changed) when there is nothing to continue. The caller holds ``session.lock``,
        so no other turn can slip in between these rounds and their continuation."""
        run = made.run
        overlay = made.overlay
        if overlay is None:
            return None
        try:
            if not isinstance(run, SpeculationRun) or run.status == "ready" or not run.complete:
                return None
            await asyncio.to_thread(overlay.rewind)  # a cancelled run's round in flight may have written
            kept = run.records[: run.complete]
            done = await self._land(made, session, overlay, kept, run.events[: run.complete_events], emit, model_name)
            if done is None:
                return None
            log.info("speculation %s: continuing after %d complete rounds", made.id, len(kept) // 2)
            return TurnOutcome(text="", finish_reason="stop", tool_calls=_calls([c for c, _ in kept]), written=[str(p) for p in done])
        finally:
            await asyncio.to_thread(overlay.discard)

    async def _land(
        self,
        made: Suggestion,
        session: ChatSession,
        overlay: Overlay,
        records: list[tuple[Content, dict[str, Any]]],
        events: list[TurnEvent],
        emit: EventSink,
        model_name: str | None,
    ) -> list[Path] | None:
        """Apply the overlay onto what the speculation started from, append the suggestion and ``records``
        to the session, replay ``events``; None (nothing changed) when the chat or a file moved on.
        The caller holds ``session.lock``."""
        if len(session.history) != made.history_length:
            return None
        changes = await asyncio.to_thread(overlay.changes)
        mode = self._settings().tools.approval_mode
        if changes and mode not in EDITS_WITHOUT_ASKING:
            # Its writes were let through under the mode it ran in; the mode now asks (or is plan), so the
            # suggestion runs as a typed turn, where each write asks, or is not offered, as the mode says.
            log.info("speculation %s: the approval mode is now %r; running the suggestion as a turn", made.id, mode)
            return None
        befores = [await self._applier.read(c.path) for c in changes]
        if any(before.text != c.base for before, c in zip(befores, changes, strict=True)):
            log.info("speculation %s: a file changed since it ran; running the suggestion as a turn", made.id)
            return None
        done: list[Path] = []
        for before, change in zip(befores, changes, strict=True):
            try:
                await self._applier.write(change.path, before, change.text)
            except ApplyError as exc:
                applied = f" ({', '.join(str(p) for p in done)} were applied)" if done else " (nothing was applied)"
                raise EngineError(f"The speculative result could not be applied: {exc}{applied}.") from None
            done.append(change.path)
        session.slot(READ_CACHE).forget(done)
        self._append_turn(session, made.text, records, model_name)
        for event in events:
            emit(event)
        return done

    @staticmethod
    def _append_turn(session: ChatSession, text: str, records: list[tuple[Content, dict[str, Any]]], model_name: str | None) -> None:
        """The speculative turn as if it had just run: the suggestion as the user's message, then the fork's Contents."""
        user: Content = {"role": "user", "parts": [{"text": text}]}
        session.history.append(user)
        session.recorder.record_user(user)
        record = turn_recorder(session.recorder, model_name)
        for content, meta in records:
            session.history.append(content)
            record(content, **meta)
