"""One Engine per workspace folder: wires the cores and runs a user turn.

The server and the CLI are two thin adapters over this class (design §2).
It owns the settings in effect, the model client, the context assembler,
the skill manager, the tools and the open chat sessions; a turn follows
"one chat turn" of design §2. Nothing here knows about LSP: listeners are
plain callables, errors are :class:`EngineError` with a message a person
can act on.
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import __version__
from .agent.events import EventSink, RoundDone, TurnOutcome
from .agent.loop import TurnRequest, run_turn
from .agent.tool import Tool, ToolContext
from .agent.tools import read_only_tools
from .agent.tools.skill import SkillTool
from .compaction.thresholds import Thresholds, compute_thresholds
from .config import LoadedSettings, Settings, load_settings
from .context import ContextAssembler, ContextError, ContextSettings
from .endpoint import resolve_endpoint
from .files import read_bytes
from .llm.client import ChatClient, Timeouts
from .llm.content import Content, visible_text
from .llm.errors import LLMError
from .llm.tokens import TokenCounter
from .paths import git_branch
from .sessions import reader as session_reader
from .sessions.files import is_valid_session_id
from .sessions.recording import SessionRecorder
from .skills import SkillListingTracker, SkillManager, SkillSetChange
from .watching import DebouncedWatcher

log = logging.getLogger(__name__)


class EngineError(Exception):
    """A failure the user can act on; ``message`` is shown as is."""

    def __init__(self, message: str, *, kind: str = "engine", param: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind
        self.param = param
        """For ``invalid_params``: the request field at fault; each adapter names it in its own words."""


@dataclass
class ContextStatus:
    session_id: str
    prompt_tokens: int
    window: int
    percent_left: float
    level: str


@dataclass
class SkillsChanged:
    activated: list[str]
    deactivated: list[str]
    trigger: str | None = None


@dataclass
class Attachment:
    path: Path
    start_line: int | None = None
    """0-based first line of a selection (LSP range), or None for the whole file."""
    end_line: int | None = None


@dataclass
class TurnResult:
    session_id: str
    turn_id: str
    text: str
    finish_reason: str
    prompt_tokens: int
    completion_tokens: int


@dataclass
class Section:
    name: str
    tokens: int
    source: str | None = None


@dataclass
class ContextReport:
    sections: list[Section]
    total_tokens: int
    window: int
    thresholds: Thresholds


@dataclass
class ChatSession:
    id: str
    recorder: SessionRecorder
    history: list[Content] = field(default_factory=list)
    skills_tracker: SkillListingTracker = field(default_factory=SkillListingTracker)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    prompt_tokens: int = 0


@dataclass
class Listeners:
    """How the engine tells its adapter about things that happen between requests."""

    context_status: Callable[[ContextStatus], None] = lambda _s: None
    skills_changed: Callable[[SkillsChanged], None] = lambda _c: None


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
    ) -> None:
        self.root = Path(root).resolve()
        self.interaction_mode = interaction_mode
        self.open_documents: set[Path] = set()
        """Files open in the editor: conditional skills are re-activated for them after a refresh."""
        self.counter = counter
        self.listeners = listeners or Listeners()
        self._env = env
        self._client_settings: dict[str, Any] = dict(client_settings or {})
        self.loaded: LoadedSettings = load_settings(self.root, self._client_settings, env)
        self._client: ChatClient | None = None
        self._client_key: tuple[Any, ...] | None = None
        self.skills = SkillManager(self.root, enabled=self.settings.skills.enabled)
        self.skills.refresh()
        self._skills_on_disk = self._skills_signature()
        self.tools: list[Tool] = [*read_only_tools(), SkillTool(self.skills)]
        self.context = ContextAssembler(self.root, self._context_settings(), env=env)  # its prompt names self.tools
        self.sessions: dict[str, ChatSession] = {}
        self._watcher: DebouncedWatcher | None = None
        self._background: set[asyncio.Task[Any]] = set()

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
            self._client_settings = dict(client_settings)
        self.reload_settings()

    def reload_settings(self) -> None:
        """Re-read every layer (settings files may have changed too)."""
        self.loaded = load_settings(self.root, self._client_settings, self._env)
        self.context.update_settings(self._context_settings())
        if self.skills.enabled != self.settings.skills.enabled:
            self.skills.enabled = self.settings.skills.enabled
            self._apply_skill_change(self.skills.refresh())

    def thresholds(self) -> Thresholds:
        return compute_thresholds(self.settings.model.context_window, self.settings.compression.threshold)

    def model_client(self) -> ChatClient:
        """The client for the settings in effect; rebuilt when they change."""
        m = self.settings.model
        endpoint = resolve_endpoint(self.loaded)
        missing = endpoint.missing()
        if missing or not endpoint.base_url or not endpoint.model:
            raise EngineError(missing or "No model is configured.", kind="config")
        key = (endpoint.base_url, endpoint.api_key, endpoint.model, m.timeouts)
        if self._client is None or key != self._client_key:
            try:
                client = ChatClient(
                    endpoint.base_url,
                    endpoint.api_key,
                    endpoint.model,
                    timeouts=Timeouts(connect=m.timeouts.connect, first_byte=m.timeouts.first_byte, stall=m.timeouts.stall),
                )
            except LLMError as exc:
                raise EngineError(exc.message, kind=exc.kind) from exc
            if endpoint.uses_default_base_url:
                log.warning(
                    "no base URL is set (OPENAI_BASE_URL or model.baseUrl): using the public default %s", endpoint.base_url
                )
            old, self._client, self._client_key = self._client, client, key
            if old is not None:
                self._spawn(old.aclose())
        return self._client

    # ----------------------------------------------------------------- lifecycle
    def start_watching(self, loop: asyncio.AbstractEventLoop) -> None:
        """Follow skills, rules and context files on disk; changes apply next turn."""
        self.skills.start_watching(loop, self._apply_skill_change)
        self._watcher = DebouncedWatcher(self._on_context_files_changed, loop=loop, ignore=_ignored_path)
        self._watcher.set_roots(*self.context.watch_targets())
        # Whatever changed between construction and the watches going live is
        # caught by one more load now; anything later, the watches see.
        self._apply_skill_change(self.skills.refresh())
        self.context.invalidate(None)

    def _on_context_files_changed(self, paths: frozenset[Path]) -> None:
        if self.context.invalidate(paths):
            log.info("context files changed; the next turn rebuilds the system prompt")
        if self._watcher is not None:
            self._watcher.set_roots(*self.context.watch_targets())
        if any(p.name == "settings.json" and p.parent.name == ".qwen" for p in paths):
            self.reload_settings()

    def _apply_skill_change(self, change: SkillSetChange) -> None:
        """A refresh rebuilt the registry (which drops activations): re-activate for open files, then tell the editor."""
        reactivated = self.skills.activate_for_paths(sorted(self.open_documents)) if self.open_documents else []
        added = sorted(set(change.added) | set(reactivated))
        removed = [n for n in change.removed if n not in reactivated]
        signature = self._skills_signature()
        if added or removed or signature != self._skills_on_disk:
            # Also when only a conditional skill or an error changed: the editor's list is stale.
            self._skills_on_disk = signature
            self.listeners.skills_changed(SkillsChanged(added, removed))

    def _skills_signature(self) -> tuple[Any, ...]:
        """What ``qwen/skills/list`` would show, to tell whether the set on disk moved."""
        return (
            tuple((s.name, s.level, s.path, s.description, s.conditional, s.paths) for s in self.skills.skills()),
            tuple((e.path, e.message) for e in self.skills.errors()),
        )

    def _spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def drain(self) -> None:
        """Stop watching, finish background work, close the HTTP client."""
        self.skills.stop_watching()
        if self._watcher is not None:
            self._watcher.stop()
            self._watcher = None
        if self._background:
            await asyncio.gather(*self._background, return_exceptions=True)
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    # ----------------------------------------------------------------- documents
    def document_touched(self, path: Path, trigger: str | None = None) -> SkillsChanged | None:
        """A file was opened in the editor or read by a tool: activate what matches it."""
        names = self.skills.activate_for_paths([path]) + self.context.activate_rules_for([path])
        if not names:
            return None
        change = SkillsChanged(activated=names, deactivated=[], trigger=trigger)
        self.listeners.skills_changed(change)
        return change

    def document_opened(self, path: Path, uri: str) -> SkillsChanged | None:
        self.open_documents.add(path)
        return self.document_touched(path, trigger=uri)

    def document_closed(self, path: Path) -> None:
        self.open_documents.discard(path)

    def document_saved(self, path: Path) -> None:
        """didSave: a context file edited in the editor is picked up without waiting for the watcher."""
        self.context.invalidate([path])

    # ----------------------------------------------------------------- sessions
    def session(self, session_id: str | None) -> ChatSession:
        """The open session, a resumed one from disk, or (no id) a new one."""
        if session_id and session_id in self.sessions:
            return self.sessions[session_id]
        if session_id:
            history = self._load_history(session_id)
            session = ChatSession(
                id=session_id,
                recorder=SessionRecorder(self.root, session_id, version=__version__, git_branch=git_branch(self.root)),
                history=history,
            )
        else:
            sid = str(uuid.uuid4())
            recorder = SessionRecorder(self.root, sid, version=__version__, git_branch=git_branch(self.root))
            session = ChatSession(id=sid, recorder=recorder)
            self.context.new_session()
            # A new session starts with no rules injected: files already open still count.
            self.context.activate_rules_for(sorted(self.open_documents))
        self.sessions[session.id] = session
        return session

    def _load_history(self, session_id: str) -> list[Content]:
        path = session_reader.session_path(self.root, _checked_id(session_id))
        if not path.exists():
            raise EngineError(f"No session '{session_id}' in {path.parent}.", kind="not_found")
        result = session_reader.read_records(path)
        return session_reader.build_history(result.records)

    def list_sessions(self) -> list[session_reader.SessionSummary]:
        return session_reader.list_sessions(self.root)

    def resume(self, session_id: str) -> ChatSession:
        self.sessions.pop(session_id, None)
        return self.session(session_id)

    def transcript(self, session: ChatSession) -> list[dict[str, str]]:
        """What the user saw: prompts and answers, without reminders, attachments or tool traffic."""
        out: list[dict[str, str]] = []
        for content in session.history:
            text = visible_text(content)
            if text.strip():
                out.append({"role": "user" if content["role"] == "user" else "assistant", "text": text})
        return out

    def delete_session(self, session_id: str) -> bool:
        self.sessions.pop(session_id, None)
        return session_reader.delete_session(self.root, _checked_id(session_id))

    # ----------------------------------------------------------------- the turn
    async def chat(
        self,
        prompt: str,
        *,
        session_id: str | None = None,
        attachments: Sequence[Attachment] = (),
        emit: EventSink,
        turn_id: str | None = None,
    ) -> TurnResult:
        session = self.session(session_id)
        async with session.lock:
            return await self._turn(session, prompt, attachments, emit, turn_id or str(uuid.uuid4()))

    async def _turn(
        self, session: ChatSession, prompt: str, attachments: Sequence[Attachment], emit: EventSink, turn_id: str
    ) -> TurnResult:
        client = self.model_client()
        try:
            self.context.refresh_if_stale()
            system = self.context.system_prompt()
        except ContextError as exc:
            raise EngineError(str(exc), kind="context") from exc
        touched: list[Path] = []
        for att in attachments:
            touched.append(att.path)
        for path in touched:
            self.document_touched(path, trigger=path.as_uri())
        user_content: Content = {
            "role": "user",
            "parts": [*self._reminder_parts(session), *_attachment_parts(attachments, self.root), {"text": prompt}],
        }
        session.history.append(user_content)
        session.recorder.record_user(user_content)
        ctx = ToolContext(workspace_root=self.root, cwd=self.root, touched=lambda p: self.document_touched(p, trigger=p.as_uri()))

        def record(content: Content, **meta: Any) -> None:
            if content["role"] == "model":
                usage = meta.get("usage")
                session.recorder.record_model(
                    content,
                    usage=None if usage is None else {"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens, "total_tokens": usage.total_tokens},
                    model=self.settings.model.name,
                    interrupted=bool(meta.get("interrupted")),
                )
            else:
                session.recorder.record_tool_result(content, None)

        def on_round(done: RoundDone) -> None:
            session.prompt_tokens = done.prompt_tokens
            self.listeners.context_status(self.context_status(session))

        req = TurnRequest(
            system=system,
            history=session.history,
            tools=self.tools,
            tool_context=ctx,
            max_tokens=self.settings.model.max_output_tokens,
            count_prompt=lambda _m: self._count_request(system, session).total_tokens,
        )
        try:
            outcome: TurnOutcome = await run_turn(client, req, emit=emit, record=record, on_round=on_round)
        except LLMError as exc:
            raise EngineError(exc.message, kind=exc.kind) from exc
        return TurnResult(
            session_id=session.id,
            turn_id=turn_id,
            text=outcome.text,
            finish_reason=outcome.finish_reason,
            prompt_tokens=outcome.prompt_tokens,
            completion_tokens=outcome.completion_tokens,
        )

    def _reminder_parts(self, session: ChatSession) -> list[dict[str, str]]:
        """``<system-reminder>`` parts placed before the user's text, in Qwen Code 0.24's order.

        The first message of a session carries the skills listing, then the
        environment prelude; later ones carry only skill deltas. Newly active
        conditional rules follow either way.
        """
        parts: list[dict[str, str]] = []
        first = not session.history
        skills = session.skills_tracker.reminder(self.skills)
        if skills:
            parts.append({"text": skills})
        if first:
            parts.append({"text": self.context.startup_reminder()})
        rules = self.context.pending_rule_reminder()
        if rules:
            parts.append({"text": rules})
        return parts

    def context_status(self, session: ChatSession) -> ContextStatus:
        th = self.thresholds()
        return ContextStatus(
            session_id=session.id,
            prompt_tokens=session.prompt_tokens,
            window=th.window,
            percent_left=th.percent_left(session.prompt_tokens),
            level=th.level(session.prompt_tokens),
        )

    # ----------------------------------------------------------------- inspector
    def context_report(self, session_id: str | None = None) -> ContextReport:
        session = self.sessions.get(session_id) if session_id else None
        if session_id and session is None:
            session = self.session(session_id)
        try:
            self.context.refresh_if_stale()
            system = self.context.system_prompt()
        except ContextError as exc:
            raise EngineError(str(exc), kind="context") from exc
        return self._count_request(system, session)

    def _count_request(self, system: str, session: ChatSession | None) -> ContextReport:
        """Per-section tokens of the request the next turn would send.

        The system prompt is split into the sections the assembler reports
        and whatever joins them; the total is the sum of the parts, which is
        exactly how the prompt size is counted when the endpoint reports no
        usage, so the inspector and the status meter never disagree.
        """
        count = self.counter.count
        sections: list[Section] = []
        covered = 0
        for sec in self.context.sections():
            tokens = count(sec.text)
            covered += len(sec.text)
            sections.append(Section(name=sec.name, tokens=tokens, source=sec.source))
        joined = sum(s.tokens for s in sections)
        whole = count(system)
        sections.append(Section(name="separators", tokens=max(0, whole - joined)))
        history = session.history if session else []
        tracker = session.skills_tracker if session else SkillListingTracker()
        listing = tracker.peek(self.skills)
        if listing:
            sections.append(Section(name="skills", tokens=count(listing)))
        if not history:
            sections.append(Section(name="environment", tokens=count(self.context.startup_reminder())))
        if history:
            sections.append(Section(name="history", tokens=sum(self.counter.count_content(c) for c in history)))
        tools = json.dumps([t.declaration() for t in self.tools], separators=(",", ":"))
        sections.append(Section(name="tools", tokens=count(tools)))
        th = self.thresholds()
        return ContextReport(sections=sections, total_tokens=sum(s.tokens for s in sections), window=th.window, thresholds=th)


def _checked_id(session_id: str) -> str:
    """Session ids become file names: refuse anything but Qwen Code's id alphabet."""
    if not is_valid_session_id(session_id):
        raise EngineError(
            f"{session_id[:200]!r} is not a session id (letters, digits, '-' and '_' only; Qwen Code uses UUIDs).",
            kind="invalid_params",
            param="sessionId",
        )
    return session_id


def _ignored_path(path: Path) -> bool:
    return ".git" in path.parts or "node_modules" in path.parts


def _attachment_parts(attachments: Sequence[Attachment], root: Path) -> list[dict[str, str]]:
    """Attached files as Qwen Code sends ``@file`` references: one block of contents."""
    if not attachments:
        return []
    blocks: list[str] = []
    for att in attachments:
        try:
            text = read_bytes(att.path).decode("utf-8", errors="replace")
        except OSError as exc:
            blocks.append(f"Content from @{_rel(att.path, root)}:\n[unreadable: {exc.strerror or exc}]")
            continue
        if att.start_line is not None:
            lines = text.splitlines()
            end = att.end_line if att.end_line is not None else att.start_line
            text = "\n".join(lines[att.start_line : end + 1])
        blocks.append(f"Content from @{_rel(att.path, root)}:\n{text}")
    return [{"text": "--- Content from referenced files ---\n" + "\n".join(blocks) + "\n--- End of content ---"}]


def _rel(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root).as_posix()
    except ValueError:
        return str(path)
