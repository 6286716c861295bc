"""The composition root of one workspace folder: its settings, cores and features, and the engine over them.

The server and the CLI are two thin adapters over this class. It holds the
settings in effect and one of each per-folder core (context assembler,
skill manager, session registry, model endpoint), builds the features
(``qwen_lsp/features/``: memory, compaction, skill review, follow-ups,
edits, editor context) and hands them to the :class:`~qwen_lsp.engine.Engine`, which runs
the turn and knows none of them by name. Here live what happens between
turns: settings reloads, watching files, documents the editor opens, chats
listed, resumed and deleted.

Building one reads settings files and every skill (thousands, in a large
monorepo), so the server uses :meth:`Workspace.open`, which builds it on a
worker thread; settings reloads and starting the watches do their disk work
off the event loop too, so a chat streaming in another folder never waits.
Nothing here knows about LSP: listeners are plain callables, results the
typed models of :mod:`qwen_lsp.protocol`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from . import __version__
from .agent.applier import Applier, DiskApplier
from .agent.approvals import ApprovalMode, Asker
from .agent.events import EventSink
from .agent.fork import ParentRequest
from .agent.accounting import RequestAccounting
from .agent.hooks import Feature
from .agent.services import FeatureModule, Listeners
from .agent.tool import Tool
from .agent.tools import read_only_tools
from .agent.tools.skill import SkillTool
from .background import BackgroundTasks
from .features.catalog import FEATURES
from .features.editor_context.state import SelectionReader
from .context import ContextAssembler, ContextError, ContextSettings, SessionContext, git_snapshot
from .context.session_context import SetUpSnapshot
from .context.attachments import Attachment, attached_image
from .context.clipboard import PastedImages
from .context.file_index import FileIndex, match as match_files
from .context.mentions import mentioned_files
from .context.text import Problem
from .engine import Engine, tool_list
from .errors import EngineError
from .llm.client import ChatClient
from .llm.client_cache import ModelEndpoint
from .llm.modalities import accepts_images
from .llm.tokens import TokenCounter
from .sessions.recap import generate_recap
from .protocol import (
    ChatResult,
    ContextResult,
    FileCompletionItem,
    FileCompletionResult,
    MemoryChanged,
    ContextStatus,
    PasteResult,
    SessionDeleteResult,
    SessionListItem,
    SessionResumeResult,
    SessionsListResult,
    SkillsChanged,
    TranscriptMessage,
    TranscriptTool,
)
from .llm.content import Content
from .sessions.registry import ChatSession, SessionRegistry
from .sessions.shown import shown_transcript
from .settings.config import LoadedSettings, Settings, load_settings, overlay
from .skills import SkillListingTracker, SkillManager, SkillSetChange
from .warmup import HTTP, NO_WARMUP, WATCHING, Warmup

if TYPE_CHECKING:  # watchdog loads only when watching starts: a one-shot `qwen-lsp chat` never watches
    from .files.watching import DebouncedWatcher

log = logging.getLogger(__name__)

__all__ = ["Attachment", "Listeners", "Workspace"]

F = TypeVar("F", bound=Feature)


class Workspace:
    def __init__(
        self,
        root: Path,
        *,
        counter: TokenCounter,
        client_settings: Mapping[str, Any] | None = None,
        env: Mapping[str, str] | None = None,
        listeners: Listeners | None = None,
        interaction_mode: str = "editor",
        ask: Asker | None = None,
        applier: Applier | None = None,
        modules: Sequence[FeatureModule] = FEATURES,
        features: Sequence[Feature] = (),
        warmup: Warmup = NO_WARMUP,
        spare_chats: bool = False,
    ) -> None:
        """Blocking (settings files, every skill): the server calls :meth:`open` instead.

        ``modules`` are the feature list (``features/catalog.py``), each set up with this workspace as its
        :class:`~qwen_lsp.agent.services.Services`; ``features`` are instances added after them (a test's probe).
        ``warmup`` is the server's (``qwen_lsp/warmup.py``): what the loop would import or load
        the first time is awaited from it instead. ``spare_chats``: keep the next new chat made ahead
        (``agent/new_chats.py``; :meth:`open`, the server's way in, turns it on).
        """
        self.root = Path(root).resolve()
        self.interaction_mode = interaction_mode
        self.counter = counter
        self.listeners = self._own_listeners(listeners or Listeners())
        self.warmup = warmup
        self.open_documents: set[Path] = set()
        """Files open in the editor: they count for every chat, and re-activate skills after a refresh."""
        self.pasted = PastedImages()
        """Images pasted into the composer: the only files outside the workspace a chat may attach."""
        self.env = env
        self._client_settings: dict[str, Any] = dict(client_settings or {})
        self._mode_override: ApprovalMode | None = None
        """Set by an approved ``exit_plan_mode``; lies over the editor's mode until that changes."""
        self._model_override: str | None = None
        """Set by ``/model <id>`` (``commands/mode_cmds.py``): the model for the rest of the server's life."""
        self.loaded: LoadedSettings = load_settings(self.root, self._client_settings, env)
        self.endpoint = ModelEndpoint()
        self.skills = SkillManager(self.root, enabled=self.settings.skills.enabled)
        self.skills.refresh()
        self._skills_on_disk = self.skills.signature
        self._editor_rules: set[str] = set()
        """Paths of rules announced for files opened in the editor (each announced once per workspace)."""
        self._watcher: DebouncedWatcher | None = None
        self._starting: asyncio.Future[None] | None = None
        """Set while :meth:`start_watching` runs: :meth:`drain` waits for it, or a feature it starts and the watcher
        it makes would outlive the drain (the editor's ``shutdown`` can come while ``initialized`` still sets up)."""
        self._background = BackgroundTasks()
        self._reload_lock = asyncio.Lock()
        self._reloading: asyncio.Task[None] | None = None
        self.files = FileIndex(str(self.root))
        """``@`` completion's listing (``context/file_index.py``)."""
        self.applier = applier or DiskApplier()
        self.ask = ask
        self.selection_reader: SelectionReader | None = None
        """Set by the server: the text of a range of an open document (the editor's buffer, not the disk)."""
        self.sessions = SessionRegistry(self.root, version=__version__, new_context=self._new_session_context)
        self.features = [*(module.setup(self) for module in modules), *features]
        self.handlers = {method: handler for f in self.features for method, handler in f.handlers().items()}
        """Each feature's answers to the contract entries its module names (``qwen_lsp/server/features.py`` routes)."""
        base_tools = [*read_only_tools(), SkillTool(self.skills)]
        self.context = ContextAssembler(self.root, self._context_settings(tool_list(base_tools, self.features)), env=env)  # its prompt names the tools
        self.engine = self._engine(base_tools, spare_chats)

    def _engine(self, base_tools: list[Tool], spare_chats: bool) -> Engine:
        return Engine(
            self.root,
            context=self.context,
            skills=self.skills,
            sessions=self.sessions,
            base_tools=base_tools,
            features=self.features,
            settings=self.current_settings,
            model=self.model_client,
            counter=self.counter,
            applier=self.applier,
            open_documents=self.open_documents,
            touched=self._tool_touched,
            context_status=self._context_status,
            settings_problems=self._settings_problems,
            spare_chats=spare_chats,
        )

    @classmethod
    async def open(cls, root: Path, **kwargs: Any) -> Workspace:
        """Build a workspace on a worker thread: reading thousands of skills must not hold the event loop.

        The folder's git snapshot for its first chat starts here too (``SetUpSnapshot``): in a large
        repository ``git status`` was most of that chat's wait; so do the rest of its set-up (:meth:`_set_up`).
        """
        root = Path(root).resolve()
        kwargs.setdefault("spare_chats", True)
        snapshot = SetUpSnapshot(lambda: git_snapshot(str(root)))  # git runs while the workspace is built
        workspace = await asyncio.to_thread(lambda: cls(root, **kwargs))
        workspace.context.use_set_up_snapshot(snapshot)
        workspace._background.spawn(workspace._set_up())
        return workspace

    async def _set_up(self) -> None:
        """What the first chat would wait for, done as the folder is set up, off the loop: the model client
        (its CA bundle) and the workspace's context build. A failure is the first chat's to report."""
        try:
            await self.model_client()
        except EngineError:
            pass
        try:
            await asyncio.to_thread(self.context.prepare)
        except ContextError:
            pass

    def feature(self, kind: type[F]) -> F:
        """The folder's feature of this class (a test's or the CLI's way in; nothing else names one)."""
        found = next((f for f in self.features if isinstance(f, kind)), None)
        if found is None:
            raise LookupError(f"no {kind.__name__} in this workspace's features")
        return found

    # ----------------------------------------------------------------- services (agent/services.py)
    @property
    def accounting(self) -> RequestAccounting:
        return self.engine.accounting

    @property
    def runner(self) -> Engine:
        return self.engine

    def read_selection(self, path: Path, start: tuple[int, int], end: tuple[int, int]) -> str | None:
        return self.selection_reader(path, start, end) if self.selection_reader is not None else None

    def history_compacted(self, session: ChatSession) -> None:
        for feature in self.features:
            feature.history_compacted(session)
        self.listeners.context_status(self.engine.accounting.context_status(session))

    def _context_status(self, status: ContextStatus) -> None:
        self.listeners.context_status(status)

    def _new_session_context(self) -> SessionContext:
        return SessionContext(self.context)

    # ----------------------------------------------------------------- settings
    @property
    def settings(self) -> Settings:
        return self.loaded.settings

    def current_settings(self) -> Settings:
        """:attr:`settings`, as a callable for the engine: read at each use, so a reload applies from the next turn."""
        return self.loaded.settings

    def _context_settings(self, tools: Sequence[Tool]) -> ContextSettings:
        s = self.settings
        return ContextSettings(
            model=s.model.name or "",
            folder_trust=s.folder_trust,
            import_format=s.context.import_format,
            context_filenames=s.context.filenames(),
            interaction_mode=self.interaction_mode,
            output_language=s.general.output_language,
            rule_excludes=tuple(s.context.rule_excludes),
            tools=tuple(sorted(t.name for t in tools)),
        )

    def update_client_settings(self, client_settings: Mapping[str, Any] | None) -> asyncio.Task[None]:
        """New editor settings; they apply from the next turn, no restart.

        The reload reads files, so it runs off the loop; the returned task is
        also what the next turn waits for (:meth:`settled`).
        """
        if client_settings is not None:
            if _approval_mode_of(client_settings) != _approval_mode_of(self._client_settings):
                self._mode_override = None  # the user picked a mode: it wins over an earlier plan exit
            self._client_settings = dict(client_settings)
        self._reloading = self._background.spawn(self.reload_settings())
        return self._reloading

    def switch_approval_mode(self, mode: ApprovalMode) -> None:
        """An approved plan leaves plan mode for ``mode`` (``features/edits/plan_mode.py``); tools change from the next turn."""
        self._mode_override = mode
        self.update_client_settings(None)

    async def set_approval_mode(self, mode: ApprovalMode) -> None:
        """``/approval-mode``, ``/plan``: as an approved plan's switch, applied before this returns."""
        self.switch_approval_mode(mode)
        await self.settled()

    async def set_model(self, model: str) -> None:
        """``/model <id>``: the model for the following requests (not written to any settings file)."""
        self._model_override = model
        await self.update_client_settings(None)

    def apply_client_settings(self, client_settings: dict[str, Any]) -> None:
        """:meth:`update_client_settings` for a listener that does not wait (the editor's settings push)."""
        self.update_client_settings(client_settings)

    async def settled(self) -> None:
        """Wait for a settings reload in flight (a turn must run on the settings the editor last sent)."""
        if self._reloading is not None and not self._reloading.done():
            await asyncio.shield(self._reloading)

    async def reload_settings(self) -> None:
        """Re-read every layer (settings files may have changed too), on a worker thread; one reload at a time."""
        async with self._reload_lock:
            client = self._client_settings
            if self._mode_override is not None:
                client = overlay(client, {"tools": {"approvalMode": self._mode_override}})
            if self._model_override is not None:
                client = overlay(client, {"model": {"name": self._model_override}})
            self.loaded = await asyncio.to_thread(load_settings, self.root, client, self.env)
            self.engine.new_chats.drop()
            for feature in self.features:
                feature.settings_changed()
            self.context.update_settings(self._context_settings(self.engine.tools))
            if self.skills.enabled != self.settings.skills.enabled:
                self.skills.enabled = self.settings.skills.enabled
                await self.reload_skills()

    async def model_client(self) -> ChatClient:
        """The client for the settings in effect; the one it replaces is closed in the background.

        Built on a worker thread: a new HTTP client loads the CA bundle (tens of ms). The usual case,
        the same settings as last turn, is answered on the loop without that thread hop.
        """
        await self.warmup.ready(HTTP)  # the first request imports anyio's asyncio backend on the loop
        current = self.endpoint.unchanged(self.loaded)
        if current is not None:
            return current
        client, replaced = await asyncio.to_thread(self.endpoint.client, self.loaded)
        if replaced is not None:
            self._background.spawn(replaced.aclose())
        return client

    async def bare_parent(self) -> ParentRequest:
        """The next request's system prompt and tools, with no history (a new chat's view)."""
        context = SessionContext(self.context)
        await self.engine.prepare(context)
        return ParentRequest.capture(context.system_prompt(), [t.declaration() for t in self.engine.tools], [])

    # ----------------------------------------------------------------- lifecycle
    async def start_watching(self, loop: asyncio.AbstractEventLoop) -> None:
        """Follow skills, rules and context files on disk (changes apply next turn); start the features.

        Registering the watches walks the skill trees, so it runs on a worker thread. The context
        watcher is made after the reload: watchdog's import may still be under way on the warm-up
        thread, and waiting for it first moved the reload (which drops the loaded rules) later, among
        the editor's first requests. The watcher follows nothing until :meth:`_rewatch` points it.
        """
        self._starting = asyncio.get_running_loop().create_future()
        try:
            await self._start_watching(loop)
        finally:
            self._starting.set_result(None)

    async def _start_watching(self, loop: asyncio.AbstractEventLoop) -> None:
        await asyncio.to_thread(self.skills.start_watching, loop, self._apply_skill_change)
        # Whatever changed between construction and the watches going live is
        # caught by one more load now; anything later, the watches see.
        await self.reload_skills()
        self.context.invalidate(None)
        for feature in self.features:
            self._background.spawn(feature.start())
        await self.warmup.ready(WATCHING)
        from .files.watching import DebouncedWatcher  # here, not at the top: see the TYPE_CHECKING import

        self._watcher = DebouncedWatcher(self._on_context_files_changed, loop=loop, ignore=_ignored_path)
        await self._rewatch()

    async def _rewatch(self) -> None:
        """Point the watcher at the current inputs; finding them may mean a cold build, so off-loop."""
        targets = await asyncio.to_thread(self.context.watch_targets)
        if self._watcher is not None:
            await asyncio.to_thread(self._watcher.set_roots, *targets)

    def _on_context_files_changed(self, paths: frozenset[Path]) -> None:
        if self.context.invalidate(paths):
            log.info("context files changed; the next turn rebuilds the system prompt")
        self._background.spawn(self._rewatch())
        if any(p.name == "settings.json" and p.parent.name == ".qwen" for p in paths):
            self._background.spawn(self.reload_settings())

    async def reload_skills(self) -> None:
        self._apply_skill_change(await self.skills.reload())

    def _apply_skill_change(self, change: SkillSetChange) -> None:
        """A refresh rebuilt the registry (which drops activations): re-activate for open files, then tell the editor.

        A skill re-activated by an open file is announced with that file as its trigger, as a didOpen
        would have: a file opened while the start-up load was still running is what switched it on,
        and the editor's notice names it.
        """
        triggered: dict[str, Path] = {}
        for path in sorted(self.open_documents):
            for name in self.skills.activate_for_paths([path]):
                triggered.setdefault(name, path)
        # A skill active before the refresh and active again after it did not change for the editor:
        # announcing it again showed a second "activated" notice (a didOpen burst racing the start-up load).
        kept = set(triggered) & set(change.removed)
        removed = [n for n in change.removed if n not in kept]
        untriggered = sorted(set(change.added) - set(triggered))
        by_file: dict[Path, list[str]] = {}
        for name, path in triggered.items():
            if name not in kept:
                by_file.setdefault(path, []).append(name)
        signature = self.skills.signature
        if untriggered or removed or signature != self._skills_on_disk:
            # Also when only a conditional skill or an error changed: the editor's list is stale.
            self._skills_on_disk = signature
            self.listeners.skills_changed(SkillsChanged(activated=untriggered, deactivated=removed))
        for path, names in by_file.items():
            self.listeners.skills_changed(SkillsChanged(activated=sorted(names), deactivated=[], trigger=path.as_uri()))

    def _settings_problems(self) -> list[Problem]:
        """The settings warnings (ignored keys first among them) as the context inspector lists problems."""
        return [Problem(path="settings", message=problem) for problem in self.loaded.problems]

    async def drain(self) -> None:
        """Stop watching, stop the features, finish background work, close the HTTP client; a start under way
        finishes first (its features' start-up work is then drained like the rest)."""
        if self._starting is not None:
            await self._starting
        self.skills.stop_watching()
        if self._watcher is not None:
            self._watcher.stop()
            self._watcher = None
        await self.engine.new_chats.close()
        for feature in self.features:
            await feature.drain()
        await self._background.wait()
        await self.endpoint.aclose()

    # ----------------------------------------------------------------- documents
    async def document_opened(self, path: Path, uri: str) -> SkillsChanged | None:
        """A file opened in the editor counts for every chat: activate the skills and rules it matches."""
        self.open_documents.add(path)
        for feature in self.features:
            feature.document_opened(path)
        if self.context.loaded_conditional_rules() is None:
            try:
                await asyncio.to_thread(self.context.prepare)
            except ContextError as exc:
                raise EngineError(str(exc), kind="context") from exc
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

    def _own_listeners(self, adapter: Listeners) -> Listeners:
        """The adapter's listeners (shared by its folders), but a memory change here also drops this folder's spare chat."""
        return dataclasses.replace(adapter, memory_changed=functools.partial(self._memory_changed, adapter.memory_changed))

    def _memory_changed(self, tell: Callable[[MemoryChanged], None], change: MemoryChanged) -> None:
        """A chat made ahead holds the memory index it read: the next new chat reads it again."""
        self.engine.new_chats.drop()
        tell(change)

    def document_closed(self, path: Path) -> None:
        self.open_documents.discard(path)
        for feature in self.features:
            feature.document_closed(path)

    def document_saved(self, path: Path) -> None:
        """didSave: a context file edited in the editor is picked up without waiting for the watcher."""
        self.context.invalidate([path])
        self.document_changed(path)

    def document_changed(self, path: Path) -> None:
        self.context.drop_set_up_snapshot()
        self.engine.new_chats.drop()
        for feature in self.features:
            feature.file_changed(path)

    # ----------------------------------------------------------------- chats
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
        """One typed turn; ``leave_out`` names features whose part this message goes without (the editor's context).
        Files named ``@path`` in the prompt are read into it (``context/mentions.py``)."""
        await self.settled()
        if "@" in prompt:  # a file both mentioned and attached (the panel's @ chip) is read once
            attachments = [*attachments, *await asyncio.to_thread(mentioned_files, prompt, self.root, attachments)]
        if attachments:
            attachments = await asyncio.to_thread(self.pasted.claim, attachments)
        if attachments and not accepts_images(self.settings.model.name):
            images = await asyncio.to_thread(lambda: [a.path.name for a in attachments if a.pasted or attached_image(a.path, self.root)])
            if images:
                raise EngineError(
                    f"The model {self.settings.model.name or '(none)'} does not take images ({', '.join(images)}): "
                    "leave the image out, or switch to a model that takes images (/model <id>).",
                    kind="invalid_params",
                    param="attachments",
                )
        return await self.engine.chat(
            prompt, session_id=session_id, attachments=attachments, emit=emit, turn_id=turn_id, leave_out=leave_out
        )

    async def paste_image(self, data_b64: str) -> PasteResult:
        """An image pasted into the composer, written to Qwen Code's clipboard folder (never the project) for the next message."""
        saved = await asyncio.to_thread(self.pasted.save, data_b64)
        return PasteResult(path=str(saved.path), name=saved.path.name, bytes=saved.size)

    async def open_session(self, session_id: str | None) -> ChatSession:
        """The editor's chat: after a server restart one saved on disk is resumed by its id, one with nothing saved
        yet (its only turns failed before reaching the model) continues under its id, never "No session"."""
        return await self.engine.open_session(session_id, missing_ok=True)

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

    async def take_back_failed_turn(self, session: ChatSession) -> bool:
        """``qwen/chat`` with ``retry``: the failed last turn goes before the prompt is sent again (``ChatSession.take_back_failed_turn``)."""
        async with session.lock:
            return await asyncio.to_thread(session.take_back_failed_turn)

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
                error_kind=m.error_kind,
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
        """Forget the chat (its per-chat state goes with it) and delete its file."""
        for feature in self.features:
            await feature.chat_deleted(session_id)
        self.sessions.forget(session_id)
        return SessionDeleteResult(deleted=await asyncio.to_thread(self.sessions.delete, session_id))

    async def complete_files(self, query: str, limit: int) -> FileCompletionResult:
        """``@`` completion: the workspace's files and folders best matching ``query``."""
        def find() -> FileCompletionResult:
            listing = self.files.listing()
            return FileCompletionResult(
                items=[FileCompletionItem(path=p, kind="folder" if p.endswith("/") else "file") for p in match_files(listing, query, limit)],
                truncated=listing.truncated,
            )

        return await asyncio.to_thread(find)

    async def context_report(self, session_id: str | None = None, *, missing_ok: bool = False) -> ContextResult:
        """What the next request would hold; reading a chat from disk does not open it. ``missing_ok`` (the editor's
        Context view): a chat with nothing saved yet reads as empty, not "No session"."""
        session = self.sessions.get(session_id) if session_id else None
        editor = "\n".join(text for f in self.features for text in f.preview(session)) or None
        if session is not None:
            await self.engine.session_ready(session)
            report = self.engine.accounting.count(session.context, session.skills_tracker, session.history, editor)
            return report.model_copy(update={"requests": self.engine.pictures.of(session), "last_reported": session.prompt_tokens or None})
        history = await asyncio.to_thread(self.sessions.read_history, session_id, missing_ok=missing_ok) if session_id else []
        context = SessionContext(self.context)
        await self.engine.prepare(context)
        return self.engine.accounting.count(context, SkillListingTracker(), history, editor)


def _approval_mode_of(client_settings: Mapping[str, Any]) -> Any:
    tools = client_settings.get("tools")
    return tools.get("approvalMode") if isinstance(tools, Mapping) else None


def _ignored_path(path: Path) -> bool:
    return ".git" in path.parts or "node_modules" in path.parts
