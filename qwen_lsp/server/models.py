"""Wire models for the ``qwen/*`` methods (docs/protocol.md), validated once at the boundary.

Custom params reach the server as raw JSON (see ``app.raw_params_converter``);
each handler parses them here. A bad field becomes JSON-RPC -32602 naming the
field, so an editor author sees exactly what to fix.
"""

from __future__ import annotations

from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pygls.exceptions import JsonRpcInvalidParams

T = TypeVar("T", bound=BaseModel)


class WireModel(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="ignore", frozen=True)


class Position(WireModel):
    line: int = Field(ge=0)
    character: int = Field(ge=0)


class Range(WireModel):
    start: Position
    end: Position


class AttachmentParam(WireModel):
    uri: str = Field(min_length=1)
    range: Range | None = None


MAX_PROMPT_CHARS = 4 * 1024 * 1024
"""About a million tokens of prose: the largest context window of any Qwen model, so no prompt over it can ever be sent.

Without a bound a 50 MB prompt was counted (seconds of CPU, ~3 GB at peak)
and sent whole to the model.
"""


class ChatParams(WireModel):
    prompt: str = Field(max_length=MAX_PROMPT_CHARS)
    session_id: str | None = Field(None, alias="sessionId")
    attachments: list[AttachmentParam] = []
    workspace_uri: str | None = Field(None, alias="workspaceUri")

    @field_validator("prompt")
    @classmethod
    def _not_blank(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("must not be empty")
        return v


class SessionParams(WireModel):
    session_id: str = Field(alias="sessionId", min_length=1)
    workspace_uri: str | None = Field(None, alias="workspaceUri")


class CompressParams(WireModel):
    session_id: str = Field(alias="sessionId", min_length=1)
    mode: Literal["full", "fast"] = "full"
    workspace_uri: str | None = Field(None, alias="workspaceUri")


class OptionalSessionParams(WireModel):
    session_id: str | None = Field(None, alias="sessionId")
    workspace_uri: str | None = Field(None, alias="workspaceUri")


class SuggestionParams(WireModel):
    suggestion_id: str = Field(alias="suggestionId", min_length=1)


class WorkspaceParams(WireModel):
    workspace_uri: str | None = Field(None, alias="workspaceUri")


MemoryScope = Literal["user", "project", "team"]
MemoryType = Literal["user", "feedback", "project", "reference"]


class MemoryListParams(WireModel):
    scope: MemoryScope | None = None
    workspace_uri: str | None = Field(None, alias="workspaceUri")


class RememberParams(WireModel):
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


class ForgetCandidatesParams(WireModel):
    query: str = Field(min_length=1, max_length=2_000)
    workspace_uri: str | None = Field(None, alias="workspaceUri")


class ForgetParams(WireModel):
    paths: list[str] = Field(min_length=1, max_length=1_000)
    workspace_uri: str | None = Field(None, alias="workspaceUri")


class SkillProposalParams(WireModel):
    proposal_id: str = Field(alias="proposalId", pattern=r"^[0-9a-f]{32}$")
    workspace_uri: str | None = Field(None, alias="workspaceUri")


class SelectionArgs(WireModel):
    """Arguments of ``qwen.addToProjectRules`` / ``qwen.rememberSelection``."""

    text: str = Field(min_length=1)
    uri: str | None = None
    scope: Literal["project", "user"] | None = None


def parse(raw: Any, model: type[T]) -> T:
    """Validate raw params; raise -32602 naming the first bad field."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise JsonRpcInvalidParams(f"params must be an object, got {type(raw).__name__}")
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            field = ".".join(str(p) for p in err["loc"]) or "params"
            problems.append(f"{field}: {err['msg']}")
        raise JsonRpcInvalidParams("Invalid params — " + "; ".join(problems)) from None
