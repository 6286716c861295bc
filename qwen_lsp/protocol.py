"""Typed results and notifications of the ``qwen/*`` protocol (docs/protocol.md).

One model per wire shape, built by the engine and serialised by whichever
adapter carries it: the language server sends ``model.wire()``, the CLI's
``--json`` prints the same dict. So the two cannot drift, and a field is
named, typed and documented once. Field names are camelCase on the wire
(aliases); optional fields that are unset are left out rather than sent as
``null`` (docs/protocol.md writes them ``source?``, ``trigger?``).
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Level = Literal["ok", "warn", "auto", "hard"]
FinishReason = Literal["stop", "length", "cancelled", "error"]


class WireResult(BaseModel):
    model_config = ConfigDict(populate_by_name=True, frozen=True)

    def wire(self) -> dict[str, Any]:
        """The JSON-ready dict: camelCase keys, unset optionals omitted."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


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


class ChatEvent(WireResult):
    """``qwen/chatEvent``: one streamed event of a running turn."""

    session_id: str = Field(alias="sessionId")
    turn_id: str = Field(alias="turnId")
    seq: int
    kind: Literal["text", "thought", "toolCall", "toolResult", "status", "error"]
    text: str | None = None
    tool: dict[str, Any] | None = None


# ---------------------------------------------------------------- qwen/context


class ContextSection(WireResult):
    name: str
    tokens: int
    source: str | None = None


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


class ContextStatus(WireResult):
    """``qwen/contextStatus``: how full the window was at the last model round."""

    session_id: str = Field(alias="sessionId")
    prompt_tokens: int = Field(alias="promptTokens")
    window: int
    percent_left: float = Field(alias="percentLeft")
    level: Level


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


class TranscriptMessage(WireResult):
    role: Literal["user", "assistant"]
    text: str


class SessionResumeResult(WireResult):
    session_id: str = Field(alias="sessionId")
    messages: list[TranscriptMessage]
    prompt_tokens: int = Field(alias="promptTokens")


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

MemoryScope = Literal["user", "project", "team"]
MemoryType = Literal["user", "feedback", "project", "reference"]


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
    """What a speculation cost (optional, beyond docs/protocol.md's shapes): tokens summed over its requests."""

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
