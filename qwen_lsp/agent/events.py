"""What a running turn tells its listener, independent of any transport.

The server turns these into ``qwen/chatEvent`` notifications; the CLI
prints them. Keeping them plain lets the same loop drive both.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..protocol import ChatEventKind as EventKind
from ..protocol import ContextChange


@dataclass(frozen=True)
class TurnEvent:
    kind: EventKind
    text: str | None = None
    tool: dict[str, Any] | None = None
    changes: list[ContextChange] | None = None


@dataclass(frozen=True)
class RoundDone:
    """One model round finished: how large the prompt was, for context status."""

    prompt_tokens: int
    completion_tokens: int
    reported: bool = True
    """False when the endpoint reported no usage and ``prompt_tokens`` is the server's own count."""
    calls: int = 0
    """Tool calls the answer asked for (they run after this)."""


@dataclass
class TurnOutcome:
    text: str
    finish_reason: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    rounds: int = 0
    tool_calls: int = 0
    """Tool calls the model made in this turn (refused and failed ones too): skill review counts them."""
    touched: list[str] = field(default_factory=list)
    written: list[str] = field(default_factory=list)
    """Absolute paths a tool reported writing (``ToolResult.extra["written"]``), in call order."""


EventSink = Callable[[TurnEvent], None]
RoundSink = Callable[[RoundDone], None]
