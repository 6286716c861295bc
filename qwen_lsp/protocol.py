"""The ``qwen/*`` wire contract: every params, result and notification model, and the method table.

One model per wire shape. Results and notifications are built by the engine
and serialised by whichever adapter carries them: the language server sends
``model.wire()``, the CLI's ``--json`` prints the same dict. Params are
validated once, at the boundary, by the server's request wrapper (a bad
field is -32602 naming it). So a field is named, typed and documented once.
Field names are camelCase on the wire (aliases); optional fields that are
unset are left out rather than sent as ``null`` (``docs/protocol.md`` writes
them ``source?``, ``trigger?``).

The VS Code extension's types are generated from these models
(``scripts/protocol_ts.py`` → ``vscode-extension/src/shared/protocol.generated.ts``
and ``src/rpc.generated.ts``); ``tests/test_protocol_ts.py`` fails when the
committed files no longer match, so the two sides cannot drift.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, field_validator

from .errors import ErrorKind as ErrorKind

Level = Literal["ok", "warn", "auto", "hard"]
FinishReason = Literal["stop", "length", "cancelled", "error"]
MemoryScope = Literal["user", "project", "team"]
MemoryType = Literal["user", "feedback", "project", "reference"]
CompressMode = Literal["full", "fast"]
ChatEventKind = Literal["text", "thought", "toolCall", "toolResult", "status", "error", "contextChanges"]
ContextChangeKind = Literal["skill", "memory", "compression", "editor"]
PermissionDecision = Literal["allow", "allowAlways", "deny"]
"""What the user answers to ``qwen/permission``."""
ToolDecision = Literal["auto", "allow", "allowAlways", "deny"]
"""Who let a write or command run: ``auto`` (the approval mode allowed it) or the user's answer."""
# ``ErrorKind`` (imported above from ``errors.py``, where each kind gets its code) is part of the
# contract too: the error answer's ``data.kind``, which the extension keys its actions on.


class WireParams(BaseModel):
    """Params a client sends: unknown fields are ignored (a newer client may send more).

    Each validator is built when its method is first called (``defer_build``), as results' are:
    a one-shot ``qwen-lsp chat`` validates none, and building them all cost its start ~5 ms.
    """

    model_config = ConfigDict(populate_by_name=True, extra="ignore", frozen=True, defer_build=True)


class WireResult(BaseModel):
    """A model the server sends (a result or a notification)."""

    model_config = ConfigDict(populate_by_name=True, frozen=True, defer_build=True)

    def wire(self) -> dict[str, Any]:
        """The JSON-ready dict: camelCase keys, unset optionals omitted."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


# ---------------------------------------------------------------- params (client → server)


class Position(WireParams):
    line: int = Field(ge=0)
    character: int = Field(ge=0)


class Range(WireParams):
    start: Position
    end: Position


class AttachmentParam(WireParams):
    uri: str = Field(min_length=1)
    range: Range | None = None


MAX_PROMPT_CHARS = 4 * 1024 * 1024
"""About a million tokens of prose: the largest context window of any Qwen model, so no prompt over it can ever be sent.

Without a bound a 50 MB prompt was counted (seconds of CPU, ~3 GB at peak)
and sent whole to the model.
"""


class ChatParams(WireParams):
    prompt: str = Field(max_length=MAX_PROMPT_CHARS)
    session_id: str | None = Field(None, alias="sessionId")
    attachments: list[AttachmentParam] = []
    workspace_uri: str | None = Field(None, alias="workspaceUri")
    editor_context: bool = Field(True, alias="editorContext")
    """False: this message goes without the editor's context (the panel's "leave it out"; docs/editor-context.md)."""
    retry: bool = False
    """True: a Retry of the chat's last turn, which failed. That turn is taken back first (off the session file's
    active branch and out of the history), so the model and a reopened chat see the prompt once."""

    @field_validator("prompt")
    @classmethod
    def _not_blank(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("must not be empty")
        return v


MAX_PASTE_CHARS = 32 * 1024 * 1024
"""Bounds what the server decodes of a pasted image; the image limit itself (10 MB) is checked after, with its own message."""


class PasteParams(WireParams):
    """``qwen/attachments/paste``: an image pasted into the composer, base64. Its type is read from its bytes, never claimed."""

    data: str = Field(min_length=1, max_length=MAX_PASTE_CHARS)
    workspace_uri: str | None = Field(None, alias="workspaceUri")


class ActiveEditor(WireParams):
    uri: str = Field(min_length=1, max_length=8192)
    cursor: Position | None = None
    selection: Range | None = None


class EditorContextParams(WireParams):
    """``qwen/editorContext``: the focused editor, its cursor and selection (0-based); none when ``activeFile`` is absent."""

    active_file: ActiveEditor | None = Field(None, alias="activeFile")


class SessionParams(WireParams):
    session_id: str = Field(alias="sessionId", min_length=1)
    workspace_uri: str | None = Field(None, alias="workspaceUri")


class ResumeParams(SessionParams):
    recap: bool = True
    """Ask the model for a session recap (one request); a window restoring its last chat passes false."""


class CompressParams(WireParams):
    session_id: str = Field(alias="sessionId", min_length=1)
    mode: CompressMode = "full"
    workspace_uri: str | None = Field(None, alias="workspaceUri")


class OptionalSessionParams(WireParams):
    session_id: str | None = Field(None, alias="sessionId")
    workspace_uri: str | None = Field(None, alias="workspaceUri")


class SuggestionParams(WireParams):
    suggestion_id: str = Field(alias="suggestionId", min_length=1)


class WorkspaceParams(WireParams):
    workspace_uri: str | None = Field(None, alias="workspaceUri")


class MemoryListParams(WireParams):
    scope: MemoryScope | None = None
    workspace_uri: str | None = Field(None, alias="workspaceUri")


class RememberParams(WireParams):
    text: str = Field(min_length=1, max_length=20_000)
    type: MemoryType | None = None
    scope: MemoryScope | None = None
    name: str | None = Field(None, max_length=200)
    workspace_uri: str | None = Field(None, alias="workspaceUri")

    @field_validator("text")
    @classmethod
    def _not_blank(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("must not be empty")
        return v


class ForgetCandidatesParams(WireParams):
    query: str = Field(min_length=1, max_length=2_000)
    workspace_uri: str | None = Field(None, alias="workspaceUri")


class ForgetParams(WireParams):
    paths: list[str] = Field(min_length=1, max_length=1_000)
    workspace_uri: str | None = Field(None, alias="workspaceUri")


class CommandParams(WireParams):
    """``qwen/command``: a line the user typed that starts with ``/`` (docs/protocol.md, "Commands").

    The server decides whether it is a command as Qwen Code 0.24.4's ``isSlashCommand`` does: a
    line like ``/usr/lib is missing`` (a path) is not, and goes to the model as a chat message."""

    text: str = Field(min_length=1, max_length=MAX_PROMPT_CHARS)
    session_id: str | None = Field(None, alias="sessionId")
    workspace_uri: str | None = Field(None, alias="workspaceUri")
    confirm: str | None = Field(None, max_length=64)
    """The token of a ``confirm`` answer: the user said yes, so the command goes ahead."""

    @field_validator("text")
    @classmethod
    def _not_blank(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("must not be empty")
        return v


class FileCompletionParams(WireParams):
    """``qwen/files/complete``: workspace files and folders for an ``@`` mention, best first."""

    query: str = Field("", max_length=1_000)
    workspace_uri: str | None = Field(None, alias="workspaceUri")
    limit: int = Field(50, ge=1, le=500)


class SkillProposalParams(WireParams):
    proposal_id: str = Field(alias="proposalId", pattern=r"^[0-9a-f]{32}$")
    workspace_uri: str | None = Field(None, alias="workspaceUri")


class SelectionArgs(WireParams):
    """Arguments of ``qwen.addToProjectRules`` / ``qwen.rememberSelection``."""

    text: str = Field(min_length=1)
    """The selected text, as the editor has it."""
    uri: str | None = None
    scope: Literal["project", "user"] | None = None
    convention: str | None = Field(None, max_length=20_000)
    """``qwen.rememberSelection`` only: the convention in the user's words (VS Code asks for them,
    prefilled from the selection). A selected code line is no rule a later chat can follow; a client
    that sends no words (Neovim's code action) gets the selection remembered as before."""


# ---------------------------------------------------------------- qwen/chat


class Usage(WireResult):
    prompt_tokens: int = Field(alias="promptTokens")
    completion_tokens: int = Field(alias="completionTokens")


class ChatResult(WireResult):
    session_id: str = Field(alias="sessionId")
    turn_id: str = Field(alias="turnId")
    text: str
    finish_reason: FinishReason = Field(alias="finishReason")
    usage: Usage


class ToolInfo(WireResult):
    """The tool of a ``toolCall`` / ``toolResult`` chat event."""

    id: str
    name: str
    args: dict[str, Any] | None = None
    """On ``toolCall``: the arguments as the model sent them."""
    is_error: bool | None = Field(None, alias="isError")
    """On ``toolResult``."""
    decision: ToolDecision | None = None
    """On ``toolResult`` for writes and commands."""
    output: str | None = None
    """On ``toolResult``: the output as the model received it, cut at 8,000 characters (``text`` is its one-line summary)."""


class ContextChange(WireResult):
    """One thing the context of this turn's request has that the previous turn's had not (a chip under the answer)."""

    kind: ContextChangeKind
    label: str
    """In words, e.g. "skill api-conventions", "2 memories recalled", "history compressed 41k → 6k"."""
    sources: list[str] = []
    """The files it comes from (absolute), for an editor to open."""


class ChatEvent(WireResult):
    """``qwen/chatEvent``: one streamed event of a running turn; ``seq`` counts from 0 without gaps per turn."""

    session_id: str = Field(alias="sessionId")
    turn_id: str = Field(alias="turnId")
    seq: int
    kind: ChatEventKind
    text: str | None = None
    tool: ToolInfo | None = None
    changes: list[ContextChange] | None = None
    """On ``contextChanges`` (after an answered turn's text, only when something changed): what its request
    holds that the previous turn's did not."""


# ---------------------------------------------------------------- qwen/permission (server → client)


class PermissionParams(WireResult):
    """``qwen/permission``: a write or a command waiting for the user (sent to clients declaring ``permissionRequests``)."""

    session_id: str = Field(alias="sessionId")
    turn_id: str = Field(alias="turnId")
    tool_call_id: str = Field(alias="toolCallId")
    """Matches the ``toolCall`` chat event's ``tool.id``."""
    tool: str
    title: str
    """e.g. "Edit src/api/x.py"."""
    path: str | None = None
    """The absolute, resolved file."""
    diff: str | None = None
    """Unified diff of the proposed change (``--- /dev/null`` for a new file)."""
    command: str | None = None
    """The shell command, every hidden character written out (docs/security.md)."""
    directory: str | None = None
    """Where a shell command runs (absolute, resolved)."""
    always_covers: str | None = Field(None, alias="alwaysCovers")
    """In words, what "Allow always (this chat)" would let run without asking again (for a shell command,
    Qwen Code 0.24.4's command-prefix rules such as ``git commit *``); None when "Allow always" is not offered."""
    protected: str | None = None
    """For a write to configuration: why it always asks ("Allow always" then counts as "Allow" for this call)."""
    plan: str | None = None
    """For ``exit_plan_mode``: the plan the user approves before the chat leaves plan mode."""


class PermissionAnswer(WireParams):
    """The client's answer to ``qwen/permission``, parsed strictly: anything else is a denial."""

    model_config = ConfigDict(strict=True)

    decision: PermissionDecision
    reason: str | None = None
    """Only with ``deny``: passed to the model after the denial text."""


# ---------------------------------------------------------------- qwen/context


class ContextSection(WireResult):
    name: str
    tokens: int
    source: str | None = None
    """The file it comes from as a person reads it: relative to the workspace, ``~/…`` under the home folder."""
    path: str | None = None
    """That file, absolute (to open it)."""


class RequestPart(WireResult):
    """One row of a sent request's picture: ``system``, ``context files``, ``memory``, ``skills``,
    ``editor context``, ``history`` or ``tools``."""

    name: str
    tokens: int


class SentRequest(WireResult):
    """A request the chat sent to the model, part by part; the parts add up to ``totalTokens``, the server's count."""

    turn_id: str = Field(alias="turnId")
    round: int
    """1 for a turn's first request, then one more per tool round."""
    parts: list[RequestPart]
    total_tokens: int = Field(alias="totalTokens")
    reported_tokens: int | None = Field(None, alias="reportedTokens")
    """The prompt size the endpoint reported for it (None until its answer came, or when it reports none)."""


class ThresholdTokens(WireResult):
    """Token counts at which each level starts (the first whole token at or past Qwen Code's fractional threshold)."""

    warn: int
    auto: int
    hard: int

    @classmethod
    def of(cls, warn: float, auto: float, hard: float) -> ThresholdTokens:
        return cls(warn=math.ceil(warn), auto=math.ceil(auto), hard=math.ceil(hard))


class ContextProblem(WireResult):
    """A context input that could not be used as written (unreadable, not UTF-8, a failed import, …)."""

    path: str
    message: str


class ContextResult(WireResult):
    sections: list[ContextSection]
    total_tokens: int = Field(alias="totalTokens")
    window: int
    thresholds: ThresholdTokens
    problems: list[ContextProblem] = []
    model: str | None = None
    """The model the next request would go to; absent while no turn could run (no model name, or neither a base
    URL nor an API key), so an editor shows no "% left" of a window that belongs to no model."""
    last_reported: int | None = Field(None, alias="lastReported")
    """The prompt size the endpoint reported for the chat's last request (beside the total, which counts the next)."""
    requests: list[SentRequest] = []
    """The chat's last requests as sent (at most 20, oldest first), for a picture of what filled each."""


class ContextStatus(WireResult):
    """``qwen/contextStatus``: how full the window was at the last model round."""

    session_id: str = Field(alias="sessionId")
    prompt_tokens: int = Field(alias="promptTokens")
    window: int
    percent_left: float = Field(alias="percentLeft")
    level: Level
    thresholds: ThresholdTokens
    """Where warn, auto-compression and the hard limit start for this window (as Qwen Code 0.24.4)."""


class CompressResult(WireResult):
    """``qwen/compress``: ``status`` is ``compressed``, ``noop`` or ``failed_…`` (why the history was left as it was)."""

    status: str
    tokens_before: int = Field(alias="tokensBefore")
    tokens_after: int = Field(alias="tokensAfter")


# ---------------------------------------------------------------- qwen/sessions/*


class SessionListItem(WireResult):
    session_id: str = Field(alias="sessionId")
    title: str
    updated_at: str = Field(alias="updatedAt", description="ISO 8601, UTC, milliseconds, 'Z'.")
    message_count: int = Field(alias="messageCount")


class SessionsListResult(WireResult):
    sessions: list[SessionListItem]


class TranscriptTool(WireResult):
    """A tool call of a reopened answer, placed in its text as it was when streamed."""

    id: str
    name: str
    at: int
    """The answer's text before the call, in characters: the row sits there."""
    args: dict[str, Any] | None = None
    result: str | None = None
    """The tool's output as the model received it; absent when the call never finished."""
    display: str | None = None
    """The one-line summary the ``toolResult`` event showed, when the session recorded it."""
    is_error: bool | None = Field(None, alias="isError")


class TranscriptMessage(WireResult):
    role: Literal["user", "assistant"]
    text: str
    tools: list[TranscriptTool] | None = None
    """An answer's tool calls, in the order they ran (all rounds of the turn are one answer)."""
    interrupted: bool | None = None
    """The answer was stopped before it was complete."""
    error: str | None = None
    """Why the turn failed: the error shown live when the session recorded it (cut to 2,000 characters,
    credentials redacted), otherwise a line saying no answer was recorded."""
    error_kind: str | None = Field(None, alias="errorKind")
    """The recorded error's ``data.kind`` (``server``, ``auth``, ``connect``, …), as the live error carried it;
    absent when the session file does not say."""


class SessionResumeResult(WireResult):
    session_id: str = Field(alias="sessionId")
    messages: list[TranscriptMessage]
    prompt_tokens: int = Field(alias="promptTokens")
    recap: str | None = None
    """One or two sentences on where the chat stood (Qwen Code 0.24.4's session recap); None when
    the chat has no history, no model is configured, or the model gave none."""


class SessionDeleteResult(WireResult):
    deleted: bool


# ---------------------------------------------------------------- skills and rules


class SkillItem(WireResult):
    name: str
    description: str
    level: str
    path: str
    conditional: bool
    active: bool
    model_invocable: bool = Field(alias="modelInvocable")
    paths: list[str]


class SkillProblem(WireResult):
    path: str
    message: str


class SkillsListResult(WireResult):
    skills: list[SkillItem]
    errors: list[SkillProblem]


class SkillsChanged(WireResult):
    """``qwen/skillsChanged``: conditional skills or rules activated, or the skill set on disk moved."""

    activated: list[str]
    deactivated: list[str]
    trigger: str | None = None


class SkillProposed(WireResult):
    """``qwen/skillProposed``: skill review found a repeatable procedure; ``text`` is the whole proposed SKILL.md."""

    proposal_id: str = Field(alias="proposalId")
    name: str
    description: str
    text: str


class SkillProposalAcceptResult(WireResult):
    path: str
    """The SKILL.md the accepted proposal became."""


class SkillProposalDiscardResult(WireResult):
    """``qwen/skillProposal/discard`` answers ``{}``."""


class AddToProjectRulesResult(WireResult):
    """Result of the ``qwen.addToProjectRules`` command ("Add to QWEN.md")."""

    path: str


# ---------------------------------------------------------------- qwen/memory/*


class MemoryItem(WireResult):
    path: str
    scope: MemoryScope
    type: MemoryType
    name: str
    description: str
    age: str = Field(description="In words, as the model sees it: 'today', 'yesterday', '47 days ago'.")


class MemoryListResult(WireResult):
    memories: list[MemoryItem]


class MemoryRememberResult(WireResult):
    path: str
    scope: MemoryScope
    type: MemoryType
    name: str
    """The saved memory's name (its frontmatter ``name``), so the editor can say what it wrote."""
    description: str


class ForgetCandidate(WireResult):
    path: str
    name: str
    description: str
    reason: str


class ForgetCandidatesResult(WireResult):
    candidates: list[ForgetCandidate]


class MemoryForgetResult(WireResult):
    removed: list[str]


class MemoryChanged(WireResult):
    """``qwen/memoryChanged``: memory files of one scope were written or removed."""

    scope: MemoryScope
    paths: list[str]


class RecallItem(WireResult):
    path: str
    scope: MemoryScope
    type: MemoryType
    name: str


class RecallResultWire(WireResult):
    """``qwen-lsp memory recall --json``: what recall would inject for a query."""

    strategy: Literal["model", "heuristic", "none"]
    memories: list[RecallItem]
    text: str


class DreamResult(WireResult):
    status: str
    reason: str | None = None
    touched: list[str] = []


# ---------------------------------------------------------------- follow-up suggestions


class SpeculationCost(WireResult):
    """What a speculation cost (an optional extra of ``qwen/suggestion``): tokens summed over its requests."""

    prompt_tokens: int = Field(alias="promptTokens")
    completion_tokens: int = Field(alias="completionTokens")
    requests: int


class SuggestionNotice(WireResult):
    """``qwen/suggestion``: a follow-up suggestion; sent again when its speculation ends.

    ``ready: true`` — the speculative result is done (accept applies it);
    ``ready: false`` with ``stoppedAt`` — it stopped at a call needing approval or failed
    (accept runs the suggestion as a normal turn). ``cost`` and ``stoppedAt`` are optional extras.
    """

    session_id: str = Field(alias="sessionId")
    suggestion_id: str = Field(alias="suggestionId")
    text: str
    ready: bool | None = None
    stopped_at: str | None = Field(None, alias="stoppedAt")
    cost: SpeculationCost | None = None


class SuggestionAcceptResult(WireResult):
    """``qwen/suggestion/accept``: ``applied`` when the speculative result was applied, else the suggestion ran as a turn
    (``continued``: a turn that went on from the complete rounds of a speculation that stopped or was still running)."""

    applied: bool
    turn_id: str | None = Field(None, alias="turnId")
    cost: SpeculationCost | None = None
    continued: bool | None = None


class EmptyResult(WireResult):
    """``{}``: a request that only acknowledges (``qwen/suggestion/dismiss``)."""


# ---------------------------------------------------------------- qwen/commands/list, qwen/command


class CommandInfo(WireResult):
    name: str
    """Without the ``/``."""
    description: str
    argument_hint: str | None = Field(None, alias="argumentHint")
    alt_names: list[str] | None = Field(None, alias="altNames")


class CommandsListResult(WireResult):
    commands: list[CommandInfo]


CommandStatus = Literal["done", "error", "confirm"]


class CommandResult(WireResult):
    """What a command did. ``text`` is always shown; the optional fields say what else changed.

    ``confirm``: the command asks first (``text`` is the question); sending the same ``text`` again
    with this token goes ahead. ``sessionId``: the chat the client shows from now on (a new one
    after ``/clear``, the reopened one after ``/resume <id>``, the one a turn ran in)."""

    status: CommandStatus
    text: str
    command: str | None = None
    """The command that ran, without ``/``; absent when the line was a chat message (a path)."""
    session_id: str | None = Field(None, alias="sessionId")
    chat: ChatResult | None = None
    """When the command sent a prompt to the model (``/init``, ``/remember``, ``/plan <task>``…): the turn's result; its events streamed as ``qwen/chatEvent``."""
    confirm: str | None = None
    resumed: SessionResumeResult | None = None
    path: str | None = None
    """A file the command wrote (``/export``, ``/init``)."""
    commands: list[CommandInfo] | None = None
    """For an unknown command and ``/help``: the commands there are."""


class FileCompletionItem(WireResult):
    path: str
    """Relative to the workspace folder, ``/``-separated; a folder ends in ``/``."""
    kind: Literal["file", "folder"]


class FileCompletionResult(WireResult):
    items: list[FileCompletionItem]
    truncated: bool
    """The walk stopped at its bound before seeing every file (a very large tree): refine the query."""


class PasteResult(WireResult):
    path: str
    """Absolute, in ``~/.qwen/tmp/clipboard``: attach it to ``qwen/chat`` as a ``file:`` URI (the one kind of file outside the workspace a chat takes)."""
    name: str
    """The file's name, chosen by the server: ``clipboard-<ms>-<n>.<png|jpg|gif|webp>``."""
    bytes: int


# ---------------------------------------------------------------- the method table

ParamsT = TypeVar("ParamsT", bound=BaseModel)
ResultT = TypeVar("ResultT", bound=BaseModel)


@dataclass(frozen=True)
class Request(Generic[ParamsT, ResultT]):
    """A request method with its params and result models."""

    method: str
    params: type[ParamsT]
    result: type[ResultT]


@dataclass(frozen=True)
class Notification(Generic[ParamsT]):
    """A notification method with its params model."""

    method: str
    params: type[ParamsT]


CHAT = Request("qwen/chat", ChatParams, ChatResult)
COMPRESS = Request("qwen/compress", CompressParams, CompressResult)
CONTEXT = Request("qwen/context", OptionalSessionParams, ContextResult)
SESSIONS_LIST = Request("qwen/sessions/list", WorkspaceParams, SessionsListResult)
SESSIONS_RESUME = Request("qwen/sessions/resume", ResumeParams, SessionResumeResult)
SESSIONS_DELETE = Request("qwen/sessions/delete", SessionParams, SessionDeleteResult)
SKILLS_LIST = Request("qwen/skills/list", WorkspaceParams, SkillsListResult)
MEMORY_LIST = Request("qwen/memory/list", MemoryListParams, MemoryListResult)
MEMORY_REMEMBER = Request("qwen/memory/remember", RememberParams, MemoryRememberResult)
MEMORY_FORGET_CANDIDATES = Request("qwen/memory/forgetCandidates", ForgetCandidatesParams, ForgetCandidatesResult)
MEMORY_FORGET = Request("qwen/memory/forget", ForgetParams, MemoryForgetResult)
SKILL_PROPOSAL_ACCEPT = Request("qwen/skillProposal/accept", SkillProposalParams, SkillProposalAcceptResult)
SKILL_PROPOSAL_DISCARD = Request("qwen/skillProposal/discard", SkillProposalParams, SkillProposalDiscardResult)
SUGGESTION_ACCEPT = Request("qwen/suggestion/accept", SuggestionParams, SuggestionAcceptResult)
SUGGESTION_DISMISS = Request("qwen/suggestion/dismiss", SuggestionParams, EmptyResult)
COMMANDS_LIST = Request("qwen/commands/list", WorkspaceParams, CommandsListResult)
COMMAND = Request("qwen/command", CommandParams, CommandResult)
FILES_COMPLETE = Request("qwen/files/complete", FileCompletionParams, FileCompletionResult)
ATTACHMENTS_PASTE = Request("qwen/attachments/paste", PasteParams, PasteResult)

CLIENT_REQUESTS: tuple[Request[Any, Any], ...] = (
    CHAT,
    COMPRESS,
    CONTEXT,
    SESSIONS_LIST,
    SESSIONS_RESUME,
    SESSIONS_DELETE,
    SKILLS_LIST,
    MEMORY_LIST,
    MEMORY_REMEMBER,
    MEMORY_FORGET_CANDIDATES,
    MEMORY_FORGET,
    SKILL_PROPOSAL_ACCEPT,
    SKILL_PROPOSAL_DISCARD,
    SUGGESTION_ACCEPT,
    SUGGESTION_DISMISS,
    COMMANDS_LIST,
    COMMAND,
    FILES_COMPLETE,
    ATTACHMENTS_PASTE,
)
"""Every ``qwen/*`` request a client sends; the server registers exactly these."""

PERMISSION = Request("qwen/permission", PermissionParams, PermissionAnswer)
"""The one ``qwen/*`` request the server sends to the client."""

@dataclass(frozen=True)
class Command(Generic[ParamsT, ResultT]):
    """A ``workspace/executeCommand`` command of the server: its one argument's model and its result."""

    name: str
    argument: type[ParamsT]
    result: type[ResultT]


REMEMBER_SELECTION = Command("qwen.rememberSelection", SelectionArgs, MemoryRememberResult)
ADD_TO_PROJECT_RULES = Command("qwen.addToProjectRules", SelectionArgs, AddToProjectRulesResult)
COMMANDS: tuple[Command[Any, Any], ...] = (REMEMBER_SELECTION, ADD_TO_PROJECT_RULES)
"""The code actions' commands (``Remember this convention``, ``Add to QWEN.md``)."""

CHAT_EVENT = Notification("qwen/chatEvent", ChatEvent)
CONTEXT_STATUS = Notification("qwen/contextStatus", ContextStatus)
SKILLS_CHANGED = Notification("qwen/skillsChanged", SkillsChanged)
MEMORY_CHANGED = Notification("qwen/memoryChanged", MemoryChanged)
SKILL_PROPOSED = Notification("qwen/skillProposed", SkillProposed)
SUGGESTION = Notification("qwen/suggestion", SuggestionNotice)

SERVER_NOTIFICATIONS: tuple[Notification[Any], ...] = (CHAT_EVENT, CONTEXT_STATUS, SKILLS_CHANGED, MEMORY_CHANGED, SKILL_PROPOSED, SUGGESTION)
"""Every ``qwen/*`` notification the server sends."""

EDITOR_CONTEXT = Notification("qwen/editorContext", EditorContextParams)
CLIENT_NOTIFICATIONS: tuple[Notification[Any], ...] = (EDITOR_CONTEXT,)
"""Every ``qwen/*`` notification a client sends; the server registers exactly these."""
