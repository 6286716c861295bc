"""What a request costs: its tokens section by section, and how full the context window is.

Used by the turn (the loop's fallback count, the context status after each
round), by compaction (the prompt size before a request) and by the
inspector (``qwen/context``), so all three count the same way.
"""

from __future__ import annotations

from collections.abc import Callable

from ..compaction.thresholds import Thresholds, compute_thresholds
from ..context import ContextAssembler, SessionContext
from ..context.inspector import count_request
from ..llm.content import Content
from ..llm.history_tokens import HistoryTokens
from ..llm.tokens import TokenCounter
from ..protocol import ContextResult, ContextStatus
from ..sessions.registry import ChatSession
from ..settings.config import Settings
from ..skills import SkillListingTracker, SkillManager
from .tool import Tool


class RequestAccounting:
    def __init__(
        self,
        counter: TokenCounter,
        context: ContextAssembler,
        skills: SkillManager,
        tools: Callable[[], list[Tool]],
        settings: Callable[[], Settings],
    ) -> None:
        self._counter = counter
        self._context = context
        self._skills = skills
        self._tools = tools
        self._settings = settings
        self._history_tokens = HistoryTokens(counter.count_content)

    def thresholds(self) -> Thresholds:
        s = self._settings()
        return compute_thresholds(s.model.context_window, s.compression.threshold)

    def context_status(self, session: ChatSession) -> ContextStatus:
        th = self.thresholds()
        return ContextStatus(
            session_id=session.id,
            prompt_tokens=session.prompt_tokens,
            window=th.window,
            percent_left=th.percent_left(session.prompt_tokens),
            level=th.level(session.prompt_tokens),
        )

    def count(self, context: SessionContext, tracker: SkillListingTracker, history: list[Content]) -> ContextResult:
        """What a request with this chat view, listing tracker and history would hold, section by section."""
        return count_request(
            self._counter,
            system=context.system_prompt(),
            sections=context.sections(),
            skills_listing=tracker.peek(self._skills),
            startup_reminder=context.startup_reminder(),
            history=history,
            tool_declarations=[t.declaration() for t in self._tools()],
            thresholds=self.thresholds(),
            problems=self._context.problems,
            history_tokens=self._history_tokens.count(history),
        )
