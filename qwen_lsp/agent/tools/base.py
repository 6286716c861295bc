"""What every built-in file tool shares: argument checking, a worker thread, error results.

A tool call must never raise into the agent loop: the model sent the
arguments, so a bad argument, a path outside the workspace or an unreadable
file is an answer the model can act on (``is_error=True``). File-system work
blocks, so it runs in ``asyncio.to_thread``; the files it touched are
reported back on the event loop's thread, because ``ctx.touched`` feeds
engine state that is not thread-safe. A cancelled turn stops waiting at
once; the worker thread itself cannot be killed, so long walks (grep, glob)
check the ``cancelled`` event they are handed and stop early.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from ..tool import ToolContext, ToolResult

log = logging.getLogger(__name__)

P = TypeVar("P", bound=BaseModel)


class ToolInputError(ValueError):
    """A problem with the call the model made; its message is shown to the model."""


class ToolArgs(BaseModel):
    """Base for argument models: unknown keys are ignored (models add stray ones)."""

    model_config = ConfigDict(extra="ignore", defer_build=True)


@dataclass
class Outcome:
    """What a tool's worker-thread body returns."""

    result: ToolResult
    touched: list[Path] = field(default_factory=list)


def function_declaration(name: str, description: str, parameters: dict[str, Any]) -> dict[str, Any]:
    """The OpenAI ``tools[]`` entry, built once per tool class."""
    return {"type": "function", "function": {"name": name, "description": description, "parameters": parameters}}


def copy_declaration(value: Any) -> Any:
    """A copy of a (JSON-shaped) tool declaration with new dicts and lists, so a caller may mutate it
    without changing the next request's bytes.

    Strings are shared, not copied (they are immutable, and the request encoder keeps their JSON by
    identity). Several times cheaper than ``copy.deepcopy`` and its memo; every tool's declaration is
    copied twice a turn (the request and its token accounting).
    """
    if isinstance(value, dict):
        return {key: copy_declaration(item) for key, item in value.items()}
    if isinstance(value, list):
        return [copy_declaration(item) for item in value]
    return value


def describe_validation_error(tool: str, exc: ValidationError) -> str:
    problems = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "arguments"
        problems.append(f"{where}: {err['msg'].removeprefix('Value error, ')}")
    return f"Invalid arguments for {tool}: " + "; ".join(problems)


class FileTool(Generic[P]):
    """A tool whose work is a blocking function of validated arguments.

    Subclasses set ``name``, ``args_model`` and ``DECLARATION`` (a dict built
    at import time) and implement ``execute``.
    """

    name: ClassVar[str]
    args_model: ClassVar[type[BaseModel]]
    DECLARATION: ClassVar[dict[str, Any]]

    def declaration(self) -> dict[str, Any]:
        """A fresh copy each call: callers may mutate it without changing the next request's bytes."""
        result: dict[str, Any] = copy_declaration(self.DECLARATION)
        return result

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        try:
            params = self.args_model.model_validate(args if args is not None else {})
        except ValidationError as exc:
            return ToolResult(output=describe_validation_error(self.name, exc), is_error=True)
        cancelled = threading.Event()
        try:
            outcome = await asyncio.to_thread(self.execute_cancellable, params, ctx, cancelled)  # type: ignore[arg-type]
        except asyncio.CancelledError:
            cancelled.set()
            raise
        except ToolInputError as exc:
            return ToolResult(output=str(exc), is_error=True)
        except OSError as exc:
            log.info("%s failed: %s", self.name, exc)
            return ToolResult(output=f"Error in {self.name}: {exc.strerror or exc}", is_error=True)
        for path in outcome.touched:
            ctx.touched(path)
        return outcome.result

    def execute(self, params: P, ctx: ToolContext) -> Outcome:
        raise NotImplementedError

    def execute_cancellable(self, params: P, ctx: ToolContext, cancelled: threading.Event) -> Outcome:
        """``execute``, for tools whose work is long enough to stop early once ``cancelled`` is set."""
        return self.execute(params, ctx)
