"""What a request costs: its tokens section by section, and how full the context window is.

Used by the turn (the loop's fallback count, the context status after each
round), by compaction (the prompt size before a request) and by the
inspector (``qwen/context``), so all three count the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..compaction.compactor import thresholds_for
from ..compaction.thresholds import Thresholds
from ..context import ContextAssembler, Section, SessionContext
from ..context.inspector import count_request, section_tokens
from ..context.text import Problem
from ..llm.content import Content
from ..llm.history_tokens import HistoryTokens
from ..llm.sampling import output_ceiling, turn_budget
from ..llm.tokens import TokenCeiling, TokenCounter
from ..protocol import ContextResult, ContextStatus, RequestPart, ThresholdTokens
from ..sessions.registry import ChatSession
from ..settings.config import Settings
from ..settings.endpoint import configured_model
from ..skills import SkillListingTracker, SkillManager
from .picture import request_parts
from .tool import DeclarationCache, Tool


class RequestAccounting:
    def __init__(
        self,
        counter: TokenCounter,
        context: ContextAssembler,
        skills: SkillManager,
        tools: Callable[[], list[Tool]],
        settings: Callable[[], Settings],
        settings_problems: Callable[[], list[Problem]] = lambda: [],
    ) -> None:
        self._counter = counter
        self._context = context
        self._skills = skills
        self._tools = tools
        self._settings = settings
        self._settings_problems = settings_problems
        self._history_tokens = HistoryTokens(counter.count_content)
        self.declarations = DeclarationCache()
        self._fixed_ceiling: tuple[tuple[str, str | None, str | None, list[dict[str, Any]]], int] | None = None
        """The last request's bound for all but its history, and what it was taken of."""

    def thresholds(self) -> Thresholds:
        return thresholds_for(self._settings())

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

    def count(self, context: SessionContext, tracker: SkillListingTracker, history: list[Content], editor: str | None = None) -> ContextResult:
        """What a request with this chat view, listing tracker, history (and editor reminder) would hold, section by
        section, and the model it would go to."""
        result = count_request(
            self._counter,
            thresholds=self.thresholds(),
            problems=[*self._settings_problems(), *self._context.problems],
            history_tokens=self._history_tokens.count(history),
            editor_context=editor,
            **self._request(context, tracker, history),
        )
        return result.model_copy(update={"model": configured_model(self._settings())})

    def picture_parts(
        self, system: str, sections: Sequence[Section], history: Sequence[Content], declarations: Sequence[Mapping[str, Any]], rows: Mapping[str, str]
    ) -> list[RequestPart]:
        """The parts of a request as sent (``picture.request_parts``), counted as :meth:`count` counts a request,
        so they add up to its total."""
        return request_parts(
            self._counter.count,
            system=system,
            sections=sections,
            history=history,
            history_tokens=self._history_tokens.count(history),
            declarations=declarations,
            rows=rows,
        )

    def ceiling(self, context: SessionContext, tracker: SkillListingTracker, history: list[Content]) -> int:
        """An upper bound of :meth:`count`'s total from bytes: no vocabulary to load, and no result models to
        build. A new chat's every request asks this twice before it leaves (compaction's check, then the
        output budget), so the bound of what is not history is kept while the system prompt, the skill
        listing, the environment reminder and the tools are the same."""
        system = context.system_prompt()
        listing = tracker.peek(self._skills)
        startup = None if history else context.startup_reminder()  # it goes in the first message only
        declarations = self.declarations(self._tools())
        known = self._fixed_ceiling
        if known is None or known[0][3] is not declarations or known[0][:3] != (system, listing, startup):
            rows = section_tokens(
                _CEILING, system=system, sections=context.sections(), skills_listing=listing, startup_reminder=startup, history=[], tool_declarations=declarations
            )
            known = self._fixed_ceiling = ((system, listing, startup, declarations), sum(tokens for _, tokens, _ in rows))
        return known[1] + sum(_CEILING.count_content(c) for c in history)

    def turn_budget(self, session: ChatSession) -> Callable[[], int]:
        """Each round's ``max_tokens``, as Qwen Code 0.24.4 computes a main turn's (``llm/sampling.py``): the
        ceiling clamped to the window the last known prompt leaves (an upper bound, padded, before the
        endpoint reported one)."""
        s = self._settings()
        ceiling = output_ceiling(s.model.name, s.model.max_output_tokens, s.model.generation_config.sampling_params.max_tokens)
        window = self.thresholds().window

        def budget() -> int:
            if session.prompt_tokens > 0:
                return turn_budget(ceiling, window, session.prompt_tokens, estimated=False)
            # Before the endpoint has counted a prompt: the byte-based upper bound, cheap enough for the event loop.
            return turn_budget(ceiling, window, self.ceiling(session.context, session.skills_tracker, session.history), estimated=True)

        return budget

    def _request(self, context: SessionContext, tracker: SkillListingTracker, history: list[Content]) -> dict[str, Any]:
        return {
            "system": context.system_prompt(),
            "sections": context.sections(),
            "skills_listing": tracker.peek(self._skills),
            "startup_reminder": context.startup_reminder(),
            "history": history,
            "tool_declarations": self.declarations(self._tools()),
        }


_CEILING = TokenCeiling()
