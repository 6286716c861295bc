"""``save_memory``: the model's way to remember something on the user's request.

Qwen Code's name and parameters — ``fact`` (required) and ``scope``
(``"global"`` or ``"project"``) — so prompts and habits carry over. What
it writes is the auto-memory format, not a ``## Qwen Added Memories``
section of ``QWEN.md``: one file per memory with ``name`` /
``description`` / ``type`` frontmatter through
:meth:`qwen_lsp.memory.store.MemoryStore.remember`, the same path every
other memory write takes, so the index and the two-server lock apply.

Mapping: ``global`` → user scope, type ``user`` (facts about the person,
shared by every project); ``project`` → project scope, type ``feedback``
(how to work in this project). Qwen Code asks the user when ``scope`` is
missing; there is no such dialog here, so the default is ``project`` — the
narrower, less surprising place — and the description says so.

Plan mode writes nothing: there the call is refused, unrun, with the
error Qwen Code 0.24.4's scheduler gives every non-read-only tool in plan
mode (``Tool blocked by plan mode: …``), so a memory cannot reach
``~/.qwen/memories`` (read by every project) from a read-only chat.

The result's ``extra`` carries ``memory_path`` and ``memory_scope`` so the
engine can skip that turn's extraction (the main agent already saved).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from ...agent.tool import ToolContext, ToolResult
from ...agent.tools.base import FileTool, Outcome, ToolArgs, ToolInputError, function_declaration
from ...errors import EngineError
from ...memory.model import Scope, Topic
from ...memory.store import MemoryStore

PLAN_MODE_BLOCKED = (
    'Tool blocked by plan mode: "save_memory" is not a read-only tool. Only read-only tools (read_file, grep_search, '
    "glob, etc.) are allowed in plan mode. Do NOT retry this tool. Pivot to read-only alternatives to gather "
    "equivalent information, then present your plan directly to the caller."
)
"""Qwen Code 0.24.4's ``isPlanModeBlocked`` error for a tool that is not read-only (its list names web tools we lack)."""

_WHERE: dict[str, tuple[Scope, Topic]] = {"global": ("user", "user"), "project": ("project", "feedback")}


class SaveMemoryArgs(ToolArgs):
    fact: str = Field(min_length=1)
    scope: Literal["global", "project"] = "project"


class SaveMemoryTool(FileTool[SaveMemoryArgs]):
    name = "save_memory"
    args_model = SaveMemoryArgs
    DECLARATION = function_declaration(
        "save_memory",
        "Saves a specific piece of information or fact to your long-term memory. Use this when the user "
        "explicitly asks you to remember something, or when they state a clear, concise fact that seems "
        "important to retain for future interactions. Each fact becomes one memory file that later sessions "
        "recall when relevant.",
        {
            "properties": {
                "fact": {
                    "description": "The specific fact or piece of information to remember. Should be a clear, "
                    "self-contained statement.",
                    "type": "string",
                },
                "scope": {
                    "description": 'Where to save the memory: "global" for facts about the user that apply in '
                    'every project, "project" for facts and conventions of the current project only. '
                    'Defaults to "project".',
                    "enum": ["global", "project"],
                    "type": "string",
                },
            },
            "required": ["fact"],
            "type": "object",
        },
    )

    def __init__(
        self,
        store: MemoryStore,
        *,
        saved: Callable[[Scope, Path], None] | None = None,
        enabled: Callable[[], bool] = lambda: True,
        plan_mode: Callable[[], bool] = lambda: False,
    ) -> None:
        self._store = store
        self._saved = saved
        """Told on the event loop after each save, so the editor hears ``qwen/memoryChanged``."""
        self._enabled = enabled
        """``memory.enabled``, read per call: the tools array stays byte-stable when the setting flips."""
        self._plan_mode = plan_mode
        """Whether ``tools.approvalMode`` is ``plan`` now, read per call for the same reason."""

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        if not self._enabled():
            return ToolResult(output="Memory is turned off in this workspace (memory.enabled: false); nothing was saved.", is_error=True)
        if self._plan_mode():
            return ToolResult(output=PLAN_MODE_BLOCKED, is_error=True, display="Plan mode blocked a non-read-only tool call.")
        result = await super().run(args, ctx)
        if self._saved is not None and not result.is_error and result.extra:
            self._saved(result.extra["memory_scope"], Path(result.extra["memory_path"]))
        return result

    def execute(self, params: SaveMemoryArgs, ctx: ToolContext) -> Outcome:
        if not params.fact.strip():
            raise ToolInputError('Parameter "fact" must be a non-empty string.')
        scope, topic = _WHERE[params.scope]
        try:
            doc = self._store.remember(text=params.fact, type=topic, scope=scope)
        except EngineError as exc:
            raise ToolInputError(f"Error saving memory: {exc.message}") from None
        message = f'Okay, I\'ve remembered that in {params.scope} memory: "{params.fact.strip()}"'
        return Outcome(
            ToolResult(
                output=message,
                display=f"Saved memory {doc.relative_path} ({scope})",
                extra={"memory_path": str(doc.path), "memory_scope": scope},
            )
        )
