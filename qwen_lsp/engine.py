"""One Engine per workspace folder: wires the cores and runs a user turn.

The server and the CLI are two thin adapters over this class (design §2).
It holds the settings in effect and one of each per-workspace core (context
assembler, skill manager, session registry, model endpoint, tools), and runs
"one chat turn" of design §2 through them. Everything one chat owns lives on
its :class:`~qwen_lsp.sessions.registry.ChatSession`; later cores attach
through :class:`~qwen_lsp.agent.hooks.TurnHooks`, not new methods here.

Blocking work (file reads, ``git``, a cold context build, session files) runs
on worker threads, so a cancel, another chat's events or document sync never
wait behind it. Nothing here knows about LSP: listeners are plain callables,
results are the typed models of :mod:`qwen_lsp.protocol`, and failures are
:class:`~qwen_lsp.errors.EngineError` with a message a person can act on.
"""

from __future__ import annotations

import asyncio
import logging
import os
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import __version__
from .background import BackgroundTasks
from .agent.approvals import ApprovalMode, ApprovalPolicy, Asker, ToolPermission, offered_mode
from .agent.auto_mode import classify, fast_path
from .agent.side_query import SideQuery
from .agent.events import EventSink, RoundDone, TurnEvent, TurnOutcome
from .agent.fork import ParentRequest
from .agent.hooks import TurnHooks, TurnPrefetch
from .agent.loop import TurnRequest, run_turn
from .agent.plan_mode import ExitPlanModeTool, reminder
from .agent.skill_review_fork import SkillReviewForks
from .agent.tool import ManagedWrites, Tool, ToolContext
from .agent.tools import read_only_tools
from .agent.tools.save_memory import SaveMemoryTool
from .agent.tools.read_cache import ReadCaches
from .agent.tools.skill import SkillTool
from .compaction.compactor import Compactor, Progress, compaction_settings, thresholds_for
from .compaction.thresholds import Thresholds
from .config import LoadedSettings, Settings, load_settings, overlay, settings_problems
from .context import ContextAssembler, ContextError, ContextSettings, SessionContext
from .context.attachments import Attachment, attachment_parts
from .context.inspector import count_request
from .edits.applier import Applier, DiskApplier
from .editor_context.chat import EditorContextSlot
from .editor_context.state import EditorSnapshot, EditorState, SelectionReader
from .editor_context.visibility import EditorFileFilter
from .edits.offer import WRITE_TOOL_NAMES, write_tools
from .errors import EngineError
from .followups import Followups
from .llm.client import ChatClient
from .llm.content import Content, Part
from .llm.client_cache import ModelEndpoint
from .llm.errors import LLMError
from .llm.history_tokens import HistoryTokens
from .llm.tokens import TokenCeiling, TokenCounter
from .memory.manager import MemoryManager
from .memory_hooks import EngineModelAccess, memory_hooks
from .protocol import (
    ChatResult,
    CompressResult,
    ContextResult,
    ContextStatus,
    MemoryChanged,
    SessionDeleteResult,
    SessionListItem,
    SessionResumeResult,
    SessionsListResult,
    SkillProposalAcceptResult,
    SkillProposed,
    SkillsChanged,
    SuggestionAcceptResult,
    SuggestionNotice,
    ThresholdTokens,
    TranscriptMessage,
    TranscriptTool,
    Usage,
)
from .sessions.draft import AnswerDraft
from .sessions.recap import generate_recap
from .sessions.registry import ChatSession, SessionRegistry, turn_recorder
from .sessions.shown import shown_transcript
from .skills import SkillListingTracker, SkillManager, SkillSetChange
from .skills.proposals import ProposalStore
from .skills.report import listing_signature
from .skills.review import SkillReviewer
from .watching import DebouncedWatcher

log = logging.getLogger(__name__)

__all__ = ["Attachment", "Engine", "EngineError", "Listeners"]


@dataclass
class Listeners:
    """How the engine tells its adapter about things that happen between requests."""

    context_status: Callable[[ContextStatus], None] = lambda _s: None
    skills_changed: Callable[[SkillsChanged], None] = lambda _c: None
    memory_changed: Callable[[MemoryChanged], None] = lambda _c: None
    skill_proposed: Callable[[SkillProposed], None] = lambda _p: None
    progress: Progress = lambda _title: lambda _message: None
    """Work-done progress: ``begin(title)`` returns ``end(message)``."""
    warning: Callable[[str], None] = lambda _message: None
    """Something the user should know once (e.g. edits are off because nobody can approve them)."""
    suggestion: Callable[[SuggestionNotice], None] | None = None
    """Follow-up suggestions (``followups.py``); None: nobody shows them, so none are made."""


class Engine:
    def __init__(
        self,
        root: Path,
        *,
        counter: TokenCounter,
        client_settings: Mapping[str, Any] | None = None,
        env: Mapping[str, str] | None = None,
        listeners: Listeners | None = None,
        interaction_mode: str = "editor",
        hooks: TurnHooks | None = None,
        ask: Asker | None = None,
        applier: Applier | None = None,
    ) -> None:
        self.root = Path(root).resolve()
        self.interaction_mode = interaction_mode
        self.counter = counter
        self.listeners = listeners or Listeners()
        self.open_documents: set[Path] = set()
        """Files open in the editor: they count for every chat, and re-activate skills after a refresh."""
        self.editor = EditorState(EditorFileFilter(self.root))
        """What the editor shows (open files in order of use, focus, cursor, selection), told to the model each turn."""
        self.read_selection: SelectionReader | None = None
        """Set by the server: the text of a range of an open document (the editor's buffer, not the disk)."""
        self._env = env
        self._client_settings: dict[str, Any] = dict(client_settings or {})
        self.loaded: LoadedSettings = load_settings(self.root, self._client_settings, env)
        self.endpoint = ModelEndpoint()
        self.skills = SkillManager(self.root, enabled=self.settings.skills.enabled)
        self.skills.refresh()
        self._skills_on_disk = listing_signature(self.skills)
        self.memory = MemoryManager(
            self.root,
            settings=lambda: self.settings.memory,
            model=EngineModelAccess(self),
            on_change=self._memory_changed,
            progress=lambda title: self.listeners.progress(title),
            env={**os.environ, **env} if env is not None else None,
            trusted=lambda: self.settings.folder_trust,
        )
        self._save_memory = SaveMemoryTool(
            self.memory.store,
            saved=lambda scope, path: self.memory.changed(scope, [path]),
            enabled=lambda: self.memory.enabled,
            plan_mode=lambda: self.settings.tools.approval_mode == "plan",
        )
        # Edits and approvals (issue 13): who is asked, where writes land, each chat's read cache.
        self._ask = ask
        self._mode_override: ApprovalMode | None = None
        """Set by an approved ``exit_plan_mode``; lies over the editor's mode until that changes."""
        self._plan_exit = ExitPlanModeTool(lambda: self.settings.tools.approval_mode, self._switch_approval_mode)
        self._applier: Applier = applier or DiskApplier()
        self.approvals = ApprovalPolicy(lambda: self.settings.tools.approval_mode, classify=self._auto_mode_judge)
        self.read_caches = ReadCaches()
        self._plan_warned = False
        self.tools: list[Tool] = [*read_only_tools(), SkillTool(self.skills), self._save_memory, *self._write_tools()]
        self.context = ContextAssembler(self.root, self._context_settings(), env=env)  # its prompt names self.tools
        self.sessions = SessionRegistry(self.root, version=__version__, new_context=lambda: SessionContext(self.context))
        self.hooks = hooks or memory_hooks(self.memory)
        self.skill_review = SkillReviewer(
            ProposalStore(self.root),
            SkillReviewForks(self.model_client, workspace_root=self.root),
            enabled=lambda: self.settings.skills.enabled and self.settings.skills.review.enabled,
            existing_names=lambda: [s.name for s in self.skills.skills()],
            on_proposed=lambda proposal: self.listeners.skill_proposed(proposal),
            progress=lambda title: self.listeners.progress(title),
        )
        self._editor_rules: set[str] = set()
        """Paths of rules announced for files opened in the editor (each announced once per workspace)."""
        self._watcher: DebouncedWatcher | None = None
        self._background = BackgroundTasks()
        self.history_tokens = HistoryTokens(counter.count_content)
        self.followups = Followups(
            self.root,
            settings=lambda: self.settings,
            model=self.model_client,
            applier=self._applier,
            sessions=self.sessions,
            notify=lambda: self.listeners.suggestion,
            forget_reads=lambda session_id, paths: self.read_caches.for_session(session_id).forget(paths),
        )
        self.compactor = Compactor(
            self.root,
            model=self.model_client,
            settings=lambda: compaction_settings(self.settings),
            count_content=counter.count_content,
            count_prompt=lambda s: self._count(s.context, s.skills_tracker, s.history).total_tokens,
            bound_prompt=lambda s: self._count(s.context, s.skills_tracker, s.history, ceiling=True).total_tokens,
            on_compacted=self._on_compacted,
            progress=lambda title: self.listeners.progress(title),
            on_reads_evicted=self.read_caches.evict,
        )

    # ----------------------------------------------------------------- settings
    @property
    def settings(self) -> Settings:
        return self.loaded.settings

    def _context_settings(self) -> ContextSettings:
        s = self.settings
        return ContextSettings(
            model=s.model.name or "",
            folder_trust=s.folder_trust,
            import_format=s.context.import_format,
            context_filenames=s.context.filenames(),
            interaction_mode=self.interaction_mode,
            output_language=s.general.output_language,
            rule_excludes=tuple(s.context.rule_excludes),
            tools=tuple(sorted(t.name for t in self.tools)),
        )

    def update_client_settings(self, client_settings: Mapping[str, Any] | None) -> None:
        """New editor settings; they apply from the next turn, no restart."""
        if client_settings is not None:
            if _approval_mode_of(client_settings) != _approval_mode_of(self._client_settings):
                self._mode_override = None  # the user picked a mode: it wins over an earlier plan exit
            self._client_settings = dict(client_settings)
        self.reload_settings()

    def _switch_approval_mode(self, mode: ApprovalMode) -> None:
        """An approved plan leaves plan mode for ``mode`` (``agent/plan_mode.py``); tools change from the next turn."""
        self._mode_override = mode
        self.reload_settings()

    def reload_settings(self) -> None:
        """Re-read every layer (settings files may have changed too)."""
        client = self._client_settings
        if self._mode_override is not None:
            client = overlay(client, {"tools": {"approvalMode": self._mode_override}})
        self.loaded = load_settings(self.root, client, self._env)
        self.tools = [t for t in self.tools if t.name not in WRITE_TOOL_NAMES] + self._write_tools()
        self.context.update_settings(self._context_settings())
        if self.skills.enabled != self.settings.skills.enabled:
            self.skills.enabled = self.settings.skills.enabled
            self._apply_skill_change(self.skills.refresh())

    def _on_compacted(self, session: ChatSession) -> None:
        session.editor_context.resend_all()  # the summary does not carry what the editor showed
        self.read_caches.for_session(session.id).forget(None)  # its reads left the history with it
        self.listeners.context_status(self.context_status(session))

    def _write_tools(self) -> list[Tool]:
        """The write tools the approval mode offers (``edits/offer.py``); warns once when nobody could approve."""
        tools = self.settings.tools
        if offered_mode(tools.approval_mode, self._ask is not None) != tools.approval_mode and not self._plan_warned:
            self._plan_warned = True
            self.listeners.warning(
                "Qwen: this editor cannot ask for approval, so the chat is read-only (plan mode). "
                "Set tools.approvalMode to auto-edit or yolo to let it edit files without asking."
            )
        return write_tools(
            tools.approval_mode, can_ask=self._ask is not None, shell_enabled=tools.shell.enabled, secrets=(self.settings.api_key(),), plan_exit=self._plan_exit
        )

    async def _auto_mode_judge(self, session_id: str, call_id: str, request: ToolPermission) -> tuple[bool, str]:
        """``auto`` mode: the edit fast path, else the classifier side query on this chat (``agent/auto_mode.py``)."""
        if fast_path(request, self.root):
            return True, ""
        session = self.sessions.get(session_id)
        if session is None:
            return False, "the chat is not open"
        client = await self.model_client()
        verdict = await classify(lambda tokens: SideQuery(client, max_tokens=tokens, temperature=0.0), session.history, call_id, self.root)
        return verdict.runs, verdict.reason

    def thresholds(self) -> Thresholds:
        return thresholds_for(self.settings)

    async def model_client(self) -> ChatClient:
        """The client for the settings in effect; the one it replaces is closed in the background.

        Built on a worker thread: a new HTTP client loads the CA bundle (tens of ms). The usual case,
        the same settings as last turn, is answered on the loop without that thread hop.
        """
        current = self.endpoint.unchanged(self.loaded)
        if current is not None:
            return current
        client, replaced = await asyncio.to_thread(self.endpoint.client, self.loaded)
        if replaced is not None:
            self._background.spawn(replaced.aclose())
        return client

    # ----------------------------------------------------------------- lifecycle
    async def start_watching(self, loop: asyncio.AbstractEventLoop) -> None:
        """Follow skills, rules and context files on disk; changes apply next turn."""
        self._background.spawn(asyncio.to_thread(self.memory.rebuild_indexes))
        self.skills.start_watching(loop, self._apply_skill_change)
        self._watcher = DebouncedWatcher(self._on_context_files_changed, loop=loop, ignore=_ignored_path)
        # Whatever changed between construction and the watches going live is
        # caught by one more load now; anything later, the watches see.
        self._apply_skill_change(self.skills.refresh())
        self.context.invalidate(None)
        self._background.spawn(self._announce_pending_proposals())
        await self._rewatch()

    async def _rewatch(self) -> None:
        """Point the watcher at the current inputs; finding them may mean a cold build, so off-loop."""
        targets = await asyncio.to_thread(self.context.watch_targets)
        if self._watcher is not None:
            self._watcher.set_roots(*targets)

    def _on_context_files_changed(self, paths: frozenset[Path]) -> None:
        if self.context.invalidate(paths):
            log.info("context files changed; the next turn rebuilds the system prompt")
        self._background.spawn(self._rewatch())
        if any(p.name == "settings.json" and p.parent.name == ".qwen" for p in paths):
            self.reload_settings()

    def _apply_skill_change(self, change: SkillSetChange) -> None:
        """A refresh rebuilt the registry (which drops activations): re-activate for open files, then tell the editor."""
        reactivated = self.skills.activate_for_paths(sorted(self.open_documents)) if self.open_documents else []
        added = sorted(set(change.added) | set(reactivated))
        removed = [n for n in change.removed if n not in reactivated]
        signature = listing_signature(self.skills)
        if added or removed or signature != self._skills_on_disk:
            # Also when only a conditional skill or an error changed: the editor's list is stale.
            self._skills_on_disk = signature
            self.listeners.skills_changed(SkillsChanged(activated=added, deactivated=removed))

    async def _announce_pending_proposals(self) -> None:
        """Skill proposals drafted before a restart are offered to the editor again."""
        if self.settings.skills.enabled and self.settings.skills.review.enabled:
            for proposal in await asyncio.to_thread(self.skill_review.pending):
                self.listeners.skill_proposed(proposal)

    async def accept_skill_proposal(self, proposal_id: str) -> SkillProposalAcceptResult:
        """The proposal becomes a project skill, listed at once (not only when the watcher notices)."""
        result = await self.skill_review.accept(proposal_id)
        self._apply_skill_change(await self.skills.reload())
        return result

    def _memory_changed(self, change: MemoryChanged) -> None:
        self.listeners.memory_changed(change)

    async def drain(self) -> None:
        """Stop watching, finish background work, close the HTTP client."""
        self.skills.stop_watching()
        if self._watcher is not None:
            self._watcher.stop()
            self._watcher = None
        await self.memory.drain()
        await self.skill_review.drain()
        await self.followups.drain()
        await self._background.wait()
        await self.endpoint.aclose()

    # ----------------------------------------------------------------- documents
    async def document_opened(self, path: Path, uri: str) -> SkillsChanged | None:
        """A file opened in the editor counts for every chat: activate the skills and rules it matches."""
        self.open_documents.add(path)
        self.editor.opened(path)
        if self.context.loaded_conditional_rules() is None:
            await self._workspace_ready()
        loaded = self.context.loaded_conditional_rules()
        live = self.sessions.live()
        # A rule already announced to the editor that every open chat has would be matched only to be
        # dropped: skipping it keeps a burst of didOpen from running every rule glob for every file.
        settled = {p for p in self._editor_rules if all(s.context.has_rule(p) for s in live)}
        matched = [] if loaded is None else loaded.match([path], skip=settled)  # once, whatever the number of chats
        rules: list[str] = []
        for session in live:
            rules.extend(session.context.give(matched))
        # Announced even before any chat exists; every chat started later gets the rule too.
        first_time = [r for r in matched if r.path not in self._editor_rules]
        self._editor_rules.update(r.path for r in first_time)
        rules[:0] = [self.context.rule_name(r) for r in first_time]
        return self._announce(self.skills.activate_for_paths([path]), rules, uri)

    def _tool_touched(self, session: ChatSession, path: Path) -> None:
        """A tool of this chat read or listed ``path``: its rules go to this chat only."""
        rules = session.context.activate_rules([path]) or []
        self._announce(self.skills.activate_for_paths([path]), rules, path.as_uri())

    def _announce(self, skills: list[str], rules: list[str], trigger: str | None) -> SkillsChanged | None:
        names = list(dict.fromkeys([*skills, *rules]))
        if not names:
            return None
        change = SkillsChanged(activated=names, deactivated=[], trigger=trigger)
        self.listeners.skills_changed(change)
        return change

    def document_closed(self, path: Path) -> None:
        self.open_documents.discard(path)
        self.editor.closed(path)

    def editor_focused(
        self, path: Path | None, cursor: tuple[int, int] | None, selection: tuple[tuple[int, int], tuple[int, int]] | None
    ) -> None:
        """``qwen/editorContext``: the focused editor, its cursor and selection (0-based), or none."""
        self.editor.focused(path, cursor, selection)

    def editor_snapshot(self) -> EditorSnapshot:
        return self.editor.snapshot(self.read_selection) if self.settings.editor_context.enabled else EditorSnapshot()

    def document_saved(self, path: Path) -> None:
        """didSave: a context file edited in the editor is picked up without waiting for the watcher."""
        self.context.invalidate([path])
        self.followups.file_changed(path)

    def document_changed(self, path: Path) -> None:
        """didChange: a speculation that wrote this file is stale."""
        self.followups.file_changed(path)

    async def _workspace_ready(self) -> None:
        """Rebuild stale workspace context on a worker thread, so loop-side reads only hit caches."""
        try:
            await asyncio.to_thread(self.context.prepare)
        except ContextError as exc:
            raise EngineError(str(exc), kind="context") from exc

    async def _session_ready(self, session: ChatSession) -> None:
        await self._prepare(session.context)

    @staticmethod
    async def _prepare(context: SessionContext, then: Callable[[], str] | None = None) -> str:
        """A chat's blocking preparation (workspace build, git snapshot, prelude) on a worker thread.

        ``then`` (more blocking work of the turn) runs right after it on the same thread, and its
        result is returned: one thread hop per turn instead of one per step.
        """

        def work() -> str:
            context.prepare()
            return then() if then is not None else ""

        try:
            result = await asyncio.to_thread(work)
        except ContextError as exc:
            raise EngineError(str(exc), kind="context") from exc
        context.replay_deferred()
        return result

    # ----------------------------------------------------------------- sessions
    async def open_session(self, session_id: str | None) -> ChatSession:
        """The open chat, one resumed from disk, or (no id) a new one."""
        if session_id and (open_ := self.sessions.get(session_id)) is not None:
            return open_
        if session_id:
            return self.sessions.adopt(await asyncio.to_thread(self.sessions.load, session_id))
        session = self.sessions.adopt(await asyncio.to_thread(self.sessions.new))
        # Files already open in the editor count for a new chat too.
        session.context.activate_rules(sorted(self.open_documents))
        return session

    async def list_sessions(self) -> SessionsListResult:
        rows = await asyncio.to_thread(self.sessions.listing)
        return SessionsListResult(
            sessions=[
                SessionListItem(
                    session_id=s.session_id,
                    title=s.title,
                    updated_at=s.updated_at.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
                    message_count=s.message_count,
                )
                for s in rows
            ]
        )

    async def resume(self, session_id: str, *, recap: bool = True) -> SessionResumeResult:
        """Reload a chat from disk (dropping the open copy) and return what the user saw, with a recap
        of where it stood when ``recap`` (one model request; none for a chat with no history)."""
        session = self.sessions.adopt(await asyncio.to_thread(self.sessions.load, session_id), replace=True)
        recorded = session.conversation if session.conversation is not None else [(c, {}) for c in session.history]  # not the summary
        messages = [
            TranscriptMessage(
                role=m.role,
                text=m.text,
                tools=[
                    TranscriptTool(
                        id=t.id, name=t.name, at=t.at, args=t.args, result=t.result, display=t.display, is_error=t.is_error if t.result is not None else None
                    )
                    for t in m.tools
                ]
                or None,
                interrupted=m.interrupted or None,
                error=m.error,
            )
            for m in shown_transcript(recorded)
        ]
        summary = await self._recap(session.history) if recap and messages else None
        return SessionResumeResult(session_id=session.id, messages=messages, prompt_tokens=session.prompt_tokens, recap=summary)

    async def _recap(self, history: list[Content]) -> str | None:
        """Qwen Code 0.24.4's session recap of a resumed chat (``sessions/recap.py``); None without a model."""
        try:
            client = await self.model_client()
        except EngineError:
            return None
        return await generate_recap(list(history), client)

    async def delete_session(self, session_id: str) -> SessionDeleteResult:
        await self.followups.abort_session(session_id)
        self.sessions.forget(session_id)
        self.compactor.forget(session_id)
        self.approvals.forget(session_id)
        self.read_caches.forget(session_id)
        self.skill_review.forget(session_id)
        return SessionDeleteResult(deleted=await asyncio.to_thread(self.sessions.delete, session_id))

    # ----------------------------------------------------------------- the turn
    async def chat(
        self,
        prompt: str,
        *,
        session_id: str | None = None,
        attachments: Sequence[Attachment] = (),
        emit: EventSink,
        turn_id: str | None = None,
        editor_context: bool = True,
    ) -> ChatResult:
        """One typed turn; ``editor_context=False`` leaves the editor's context out of this message only."""
        session = await self.open_session(session_id)
        await self.followups.abort_session(session.id)  # typing anything else throws the suggestion away
        async with session.lock:
            session.editor_context.omit_next = not editor_context
            return await self._turn(session, prompt, attachments, emit, turn_id or str(uuid.uuid4()))

    async def accept_suggestion(self, suggestion_id: str, *, emit: EventSink, turn_id: str) -> SuggestionAcceptResult:
        """Apply the suggestion's speculative turn; continue one that did not finish from its last complete
        round (``Followups.resume``); else (nothing complete, stale) run the suggestion as a normal turn."""
        made = await self.followups.take_for_accept(suggestion_id)
        session = await self.open_session(made.session_id)
        cost = self.followups.cost(made)
        outcome = await self.followups.apply(made, session, emit, self.settings.model.name)
        if outcome is not None:
            history = session.history
            self._after_turn(session, outcome, lambda: ParentRequest.capture(session.context.system_prompt(), [t.declaration() for t in self.tools], history))
            return SuggestionAcceptResult(applied=True, turn_id=turn_id, cost=cost)
        async with session.lock:
            so_far = await self.followups.resume(made, session, emit, self.settings.model.name)
            if so_far is not None:
                result = await self._turn(session, made.text, (), emit, turn_id, so_far)
                return SuggestionAcceptResult(applied=False, turn_id=result.turn_id, cost=cost, continued=True)
        result = await self.chat(made.text, session_id=session.id, emit=emit, turn_id=turn_id)
        return SuggestionAcceptResult(applied=False, turn_id=result.turn_id, cost=cost)

    async def dismiss_suggestion(self, suggestion_id: str) -> None:
        await self.followups.dismiss(suggestion_id)

    def session_of_suggestion(self, suggestion_id: str) -> str | None:
        return self.followups.session_of(suggestion_id)

    async def _turn(
        self,
        session: ChatSession,
        prompt: str,
        attachments: Sequence[Attachment],
        emit: EventSink,
        turn_id: str,
        so_far: TurnOutcome | None = None,
    ) -> ChatResult:
        """Run a turn; ``so_far`` continues one whose rounds are already in the history (an accepted
        speculation that stopped): no new user message, the model is asked again from the last tool
        results, and ``so_far`` (those rounds' calls and writes) is the outcome the loop goes on filling."""
        recall = self.hooks.recall(session, prompt)  # runs while the request is assembled; waited for only within its own bound
        try:
            return await self._run_turn(session, prompt, attachments, emit, turn_id, recall, so_far)
        finally:
            recall.cancel()

    async def _run_turn(
        self,
        session: ChatSession,
        prompt: str,
        attachments: Sequence[Attachment],
        emit: EventSink,
        turn_id: str,
        recall: TurnPrefetch,
        so_far: TurnOutcome | None,
    ) -> ChatResult:
        client = await self.model_client()
        self.context.memory_block = await self._prepare(session.context, then=self.hooks.memory_block)
        system = session.context.system_prompt()
        if so_far is None:
            for att in attachments:
                self._tool_touched(session, att.path)
            attached = await asyncio.to_thread(attachment_parts, attachments, self.root) if attachments else []
            reminders = self._reminder_parts(session)
            recalled: list[Part] = [{"text": text} for text in await recall.initial()]
            editor = session.editor_context.reminder(self.editor_snapshot())
            told: list[Part] = [{"text": editor[0]}] if editor is not None else []
            plan = self._plan_reminder()
            user_content: Content = {
                "role": "user",
                "parts": [*reminders, *recalled, *plan, *attached, *told, {"text": prompt}],
            }
            session.history.append(user_content)
            # As Qwen Code 0.24.4, the plan-mode reminder is sent with the turn but not recorded.
            session.recorder.record_user({**user_content, "parts": [p for p in user_content["parts"] if all(p is not q for q in plan)]})

        def on_round(done: RoundDone) -> None:
            session.prompt_tokens = done.prompt_tokens
            self.compactor.observe_round(session, done.prompt_tokens)
            self.listeners.context_status(self.context_status(session))

        memory_roots = await asyncio.to_thread(self.memory.chat_write_roots)
        req = TurnRequest(
            system=system,
            history=session.history,
            tools=self.tools,
            tool_context=ToolContext(
                workspace_root=self.root,
                cwd=self.root,
                touched=lambda p: self._tool_touched(session, p),
                approve=self.approvals.for_turn(session.id, turn_id, self._ask),
                applier=self._applier,
                read_cache=self.read_caches.for_session(session.id),
                read_roots=memory_roots,
                managed_writes=ManagedWrites(memory_roots, self.memory.write_from_chat) if memory_roots else None,
            ),
            max_tokens=self.settings.model.max_output_tokens,
            count_prompt=lambda _m: self._count(session.context, session.skills_tracker, session.history).total_tokens,
            before_request=lambda: self._before_request(session, emit),
            late_reminders=recall.take,
        )
        try:
            outcome = await run_turn(
                client,
                req,
                emit=emit,
                record=turn_recorder(session.recorder, self.settings.model.name),
                on_round=on_round,
                outcome=so_far,
                draft=AnswerDraft(session.recorder, self.settings.model.name),
            )
        except LLMError as exc:
            session.editor_context.resend_all()
            raise EngineError(exc.message, kind=exc.kind) from exc
        if so_far is None and editor is not None:
            session.editor_context.sent(editor[1])
        self._after_turn(session, outcome, lambda: ParentRequest.of_turn(req))
        self.followups.turn_done(session, outcome, req)
        return ChatResult(
            session_id=session.id,
            turn_id=turn_id,
            text=outcome.text,
            finish_reason="length" if outcome.finish_reason == "length" else "stop",
            usage=Usage(prompt_tokens=outcome.prompt_tokens, completion_tokens=outcome.completion_tokens),
        )

    def _after_turn(self, session: ChatSession, outcome: TurnOutcome, capture: Callable[[], ParentRequest]) -> None:
        """Memory and skill review see every answered turn, typed or an accepted speculation;
        ``capture`` copies the request only if one of them starts a fork."""
        self.hooks.after_turn(session, outcome, capture)
        self.skill_review.after_turn(session.id, tool_calls=outcome.tool_calls, written=outcome.written, capture=capture)

    async def _before_request(self, session: ChatSession, emit: EventSink) -> None:
        """Compaction first (it may shrink the history), then whatever else hooked in."""
        await self.compactor.before_request(session, lambda note: emit(TurnEvent("status", text=note)))
        await self.hooks.before_request(session)

    async def compress(self, session_id: str, mode: str = "full") -> CompressResult:
        """``qwen/compress``: compact a chat now, between turns (``fast``: no model call)."""
        session = await self.open_session(session_id)
        async with session.lock:
            await self._session_ready(session)
            try:
                done = await self.compactor.compress_now(session, fast=mode == "fast")
            except LLMError as exc:
                raise EngineError(f"Compression failed; the history is unchanged. {exc.message}", kind=exc.kind) from exc
            except (OSError, ValueError) as exc:  # the checkpoint could not be written, or was refused
                raise EngineError(f"Compression could not be saved; the history is unchanged. {exc}") from exc
        return CompressResult(status=done.status, tokens_before=done.tokens_before, tokens_after=done.tokens_after)

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

    def _plan_reminder(self) -> list[Part]:
        """0.24.4's plan-mode reminder, every turn in ``plan`` mode (``agent/plan_mode.py``)."""
        if self.settings.tools.approval_mode != "plan":
            return []
        return [{"text": reminder(can_exit=self._ask is not None)}]

    def context_status(self, session: ChatSession) -> ContextStatus:
        th = self.thresholds()
        return ContextStatus(
            session_id=session.id,
            prompt_tokens=session.prompt_tokens,
            window=th.window,
            percent_left=th.percent_left(session.prompt_tokens),
            level=th.level(session.prompt_tokens),
            thresholds=ThresholdTokens.of(th.warn, th.auto, th.hard),
        )

    # ----------------------------------------------------------------- inspector
    async def context_report(self, session_id: str | None = None) -> ContextResult:
        """What the next request would hold; reading a chat from disk does not open it."""
        session = self.sessions.get(session_id) if session_id else None
        slot = session.editor_context if session is not None else EditorContextSlot()
        editor = slot.peek(self.editor_snapshot())
        if session is not None:
            await self._session_ready(session)
            return self._count(session.context, session.skills_tracker, session.history, editor)
        history = await asyncio.to_thread(self.sessions.read_history, session_id) if session_id else []
        context = SessionContext(self.context)
        await self._prepare(context)
        return self._count(context, SkillListingTracker(), history, editor)

    def _count(
        self, context: SessionContext, tracker: SkillListingTracker, history: list[Content], editor: str | None = None, *, ceiling: bool = False
    ) -> ContextResult:
        """What the next request holds, in tokens; with ``ceiling``, upper bounds from bytes (no vocabulary)."""
        return count_request(
            _CEILING if ceiling else self.counter,
            system=context.system_prompt(),
            sections=context.sections(),
            skills_listing=tracker.peek(self.skills),
            startup_reminder=context.startup_reminder(),
            history=history,
            tool_declarations=[t.declaration() for t in self.tools],
            thresholds=self.thresholds(),
            problems=[*settings_problems(self.loaded), *self.context.problems],
            history_tokens=None if ceiling else self.history_tokens.count(history),
            editor_context=editor,
        )


_CEILING = TokenCeiling()


def _approval_mode_of(client_settings: Mapping[str, Any]) -> Any:
    tools = client_settings.get("tools")
    return tools.get("approvalMode") if isinstance(tools, Mapping) else None


def _ignored_path(path: Path) -> bool:
    return ".git" in path.parts or "node_modules" in path.parts
