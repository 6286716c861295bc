"""Memory's plugs into a turn: the glue between the agent's seams and the memory core.

The memory core never imports ``agent/`` (design §2: arrows point one way), so
this module, beside the engine, turns a :class:`~.memory.manager.MemoryManager`
into :class:`~.agent.hooks.TurnHooks` and gives the manager its model access
(side queries and forked runs built from the engine's client).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import asyncio
import logging

from ...agent.fork import ParentRequest
from ...agent.hooks import Prefetch, TurnHooks
from .fork import MemoryForks
from ...agent.side_query import SideQuery
from ...errors import EngineError
from ...agent.events import TurnOutcome
from ...llm.content import Content
from ...context import SessionContext
from ...memory.manager import MemoryManager
from ...memory.store import MemoryStore

if TYPE_CHECKING:
    from ...engine import Engine
    from ...sessions.registry import ChatSession

log = logging.getLogger(__name__)

RECENT_TOOL_CONTENTS = 8
"""How far back "recently used tools" (the recall's active-tool filter, spec §7.4) looks."""


def recent_tools(history: Sequence[Content]) -> list[str]:
    names: list[str] = []
    for content in history[-RECENT_TOOL_CONTENTS:]:
        for part in content.get("parts") or []:
            call = part.get("functionCall")
            if call and call.get("name") and call["name"] not in names:
                names.append(call["name"])
    return names


def memory_hooks(memory: MemoryManager) -> TurnHooks:
    def recall(session: ChatSession, prompt: str) -> Prefetch:
        return Prefetch(memory.start_recall(session.id, prompt, recent_tools(session.history)))

    def after_turn(session: ChatSession, outcome: TurnOutcome, capture: Callable[[], ParentRequest]) -> None:
        memory.after_turn(session.id, capture)

    return TurnHooks(memory_block=memory.prompt_block, recall=recall, after_turn=after_turn)


class EngineModelAccess:
    """Side queries and forked runs on the engine's current model client (None when none is configured)."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    async def side_query(self) -> SideQuery | None:
        """Temperature 0, as the seed's selectors ask (spec §7.3, §11.4)."""
        try:
            client = await self._engine.model_client()
        except EngineError as exc:
            log.debug("no model for side queries (%s): heuristics only", exc.message)
            return None
        return SideQuery(client, temperature=0.0)

    def fork_runner(self, store: MemoryStore) -> MemoryForks:
        return MemoryForks(store, self._engine.model_client, workspace_root=self._engine.root)

    async def bare_parent(self) -> ParentRequest:
        """The next request's system prompt and tools, with no history (a new chat's view)."""
        context = SessionContext(self._engine.context)
        await asyncio.to_thread(context.prepare)
        self._engine.context.memory_block = await asyncio.to_thread(self._engine.hooks.memory_block)
        return ParentRequest.capture(context.system_prompt(), [t.declaration() for t in self._engine.tools], [])
