"""The example feature of docs/architecture.md ("Adding a feature"): the whole of a feature, in one package.

It counts each chat's answered turns (per-chat state on the chat, a ``Slot``),
offers the model a ``count_turns`` tool that reads the count, and answers
``qwen/example/turns`` for the editor. It names its own contract entry here,
since it is not part of the product; a real feature's entries go in
``qwen_lsp/protocol.py`` so the extension's types are generated from them.

The tests load it by adding ``FEATURE`` to the feature list, the one line a
real feature adds to ``qwen_lsp/features/catalog.py``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import Field

from qwen_lsp.agent.hooks import Caller, Feature, Handler, TurnDone
from qwen_lsp.agent.services import FeatureModule, Services
from qwen_lsp.agent.tool import Tool, ToolContext, ToolResult
from qwen_lsp.protocol import Request, WireParams, WireResult
from qwen_lsp.sessions.registry import Slot


class TurnsParams(WireParams):
    session_id: str = Field(alias="sessionId", min_length=1)
    workspace_uri: str | None = Field(None, alias="workspaceUri")


class TurnsResult(WireResult):
    turns: int


TURNS = Request("qwen/example/turns", TurnsParams, TurnsResult)


class Count:
    """One chat's answered turns."""

    def __init__(self) -> None:
        self.turns = 0


COUNT: Slot[Count] = Slot("example.count", Count)


class CountTurnsTool:
    name = "count_turns"

    def declaration(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": "How many turns of this chat have been answered so far.",
                "parameters": {"type": "object", "properties": {}},
            },
        }

    def __init__(self, services: Services) -> None:
        self._services = services

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        session = self._services.sessions.get(ctx.chat_id)
        turns = session.slot(COUNT).turns if session is not None else 0
        return ToolResult(output=f"{turns} turns answered so far.")


class TurnCounter(Feature):
    name = "example"

    def __init__(self, services: Services) -> None:
        self._services = services
        self._tool = CountTurnsTool(services)

    def tools(self) -> Sequence[Tool]:
        return (self._tool,)

    def after_turn(self, done: TurnDone) -> None:
        done.session.slot(COUNT).turns += 1

    def handlers(self) -> Mapping[str, Handler]:
        return {TURNS.method: self._turns}

    async def _turns(self, p: TurnsParams, _call: Caller) -> TurnsResult:
        session = self._services.sessions.get(p.session_id)
        return TurnsResult(turns=session.slot(COUNT).turns if session is not None else 0)


FEATURE = FeatureModule("example", TurnCounter, requests=(TURNS,), doc="counts a chat's answered turns")
