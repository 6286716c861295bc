"""Follow-up suggestions' glue beside the engine: suggest after a turn, speculate, accept or abort.

After a turn that ended normally, one side query (``followup/prompt.py``)
proposes what the user may type next; it runs in the background, started
as the turn returns, so the chat's answer never waits for it, and it needs
a network round trip, so ``qwen/suggestion`` reaches the editor after the
answer. When speculation is on (``followup.speculate``; by default when the
approval mode lets edits run without asking), a fork of the finished turn
runs the suggestion into an overlay (``agent/speculation.py``) and the
editor is told again, with ``ready``, when it is done.

Accepting a ready speculation applies its overlay through the engine's
applier (``workspace/applyEdit`` in the editor) — but only onto what the
speculation started from: the chat has had no turn since, and every file
still reads as it did when the speculation first wrote it; otherwise the
suggestion simply runs as a normal turn, as it does when the speculation
had not finished or stopped at a call needing approval. Dismissing, a new
turn in that chat, or an edit of a file the overlay wrote aborts it and
deletes the overlay: nothing of it reaches the workspace or the session.

Settings are read at each use, so a change applies from the next turn.
"""

from __future__ import annotations

import asyncio
import logging
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from .agent.events import EventSink, TurnOutcome
from .agent.fork import ParentRequest
from .agent.loop import TurnRequest
from .agent.side_query import SideQuery, SideQueryError
from .agent.speculation import SpeculationRun, run_speculation
from .config import Settings
from .edits.applier import Applier, ApplyError
from .errors import EngineError
from .followup.gate import EDITS_WITHOUT_ASKING
from .followup.overlay import Overlay
from .followup.prompt import SCHEMA, SYSTEM, TIMEOUT_SECONDS, parse_suggestion, user_message
from .followup.state import Suggestion, Suggestions, UnknownSuggestion
from .llm.client import ChatClient
from .llm.content import Content
from .paths import project_state_dir
from .protocol import SpeculationCost, SuggestionNotice
from .sessions.registry import ChatSession, SessionRegistry, turn_recorder

log = logging.getLogger(__name__)

Notify = Callable[[SuggestionNotice], None]


def overlay_directory(root: Path, suggestion_id: str) -> Path:
    """``~/.qwen/projects/<project>/tmp/speculation/<id>``; the system temp dir if that lay inside the workspace."""
    base = project_state_dir(root) / "tmp" / "speculation"
    if base.resolve().is_relative_to(root.resolve()):
        base = Path(tempfile.gettempdir()) / "qwen-speculation"
    return base / suggestion_id


def speculation_on(settings: Settings) -> bool:
    """``followup.speculate`` when set; else on exactly when the approval mode edits without asking (Qwen Code's gate)."""
    explicit = settings.followup.speculate
    return explicit if explicit is not None else settings.tools.approval_mode in EDITS_WITHOUT_ASKING


def cost_of(run: SpeculationRun | None) -> SpeculationCost | None:
    if run is None:
        return None
    u = run.usage
    return SpeculationCost(prompt_tokens=u.prompt_tokens, completion_tokens=u.completion_tokens, requests=u.requests)


def _outcome(run: SpeculationRun, applied: list[Path]) -> TurnOutcome:
    """An accepted speculation as the turn it stands for: its calls count toward skill review and
    the files it wrote are the turn's writes, as if the user had typed the suggestion."""
    calls = sum(1 for c in run.produced if c.get("role") == "model" for p in c.get("parts", []) if "functionCall" in p)
    return TurnOutcome(
        text=run.text,
        finish_reason="stop",
        prompt_tokens=run.last_prompt_tokens,
        completion_tokens=run.usage.completion_tokens,
        rounds=run.usage.requests,
        tool_calls=calls,
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
        forget_reads: Callable[[str, list[Path]], None],
    ) -> None:
        self._root = root
        self._settings = settings
        self._model = model
        self._applier = applier
        self._sessions = sessions
        self._notify = notify
        self._forget_reads = forget_reads
        self.pending = Suggestions()
        self._tasks: set[asyncio.Task[Any]] = set()


    # ------------------------------------------------------------ after a turn
    def turn_done(self, session: ChatSession, outcome: TurnOutcome, req: TurnRequest) -> None:
        """The turn answered: suggest a follow-up in the background (nothing when off, or nobody listens)."""
        if self._notify() is None or not self._settings().followup.enabled or outcome.finish_reason != "stop":
            return
        parent = ParentRequest.of_turn(req)  # now: the next turn would grow the history under us
        self._spawn(self._suggest(session.id, parent, len(session.history)))

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
            made.task = self._spawn(self._speculate(made, parent, client))

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
            await asyncio.to_thread(overlay.discard)  # accept will run the suggestion as a normal turn
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
            self._spawn(self._abort(gone))

    async def dismiss(self, suggestion_id: str) -> None:
        await self._abort([self._take(suggestion_id)])

    async def drain(self) -> None:
        """Shutdown: side queries and speculations in flight are cancelled, every overlay deleted."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
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
        """The suggestion, no longer pending; a speculation still running is stopped (its work is not used)."""
        made = self._take(suggestion_id)
        if made.status != "ready":
            await self._abort([made])
        return made

    async def apply(self, made: Suggestion, session: ChatSession, emit: EventSink, model_name: str | None) -> TurnOutcome | None:
        """Apply a ready speculation as the chat's next turn and say what it did (for the after-turn
        hooks, as a typed turn would); None (and nothing changed) when it cannot be."""
        run = made.run
        overlay = made.overlay
        if made.status != "ready" or not isinstance(run, SpeculationRun) or overlay is None:
            return None
        try:
            async with session.lock:
                if len(session.history) != made.history_length:
                    return None
                changes = await asyncio.to_thread(overlay.changes)
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
                self._forget_reads(session.id, done)
                self._append_turn(session, made.text, run, model_name)
            for event in run.events:
                emit(event)
            return _outcome(run, done)
        finally:
            await asyncio.to_thread(overlay.discard)

    @staticmethod
    def _append_turn(session: ChatSession, text: str, run: SpeculationRun, model_name: str | None) -> None:
        """The speculative turn as if it had just run: the suggestion as the user's message, then the fork's Contents."""
        user: Content = {"role": "user", "parts": [{"text": text}]}
        session.history.append(user)
        session.recorder.record_user(user)
        record = turn_recorder(session.recorder, model_name)
        for content, meta in run.records:
            session.history.append(content)
            record(content, **meta)
        if run.last_prompt_tokens:
            session.prompt_tokens = run.last_prompt_tokens

    def _spawn(self, coro: Any) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task
