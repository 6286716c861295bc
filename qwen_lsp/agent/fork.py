"""Forked runs: a background agent that shares its parent turn's prompt-cache prefix.

Memory extraction and dream (and later speculation and skill review) ask the
model to do work beside the user's chat (as Qwen Code's ``extractionAgentPlanner.ts``). A fork is
cheap only if the endpoint's prompt cache recognises the parent's prefix, so
a fork sends, byte for byte, what the parent's last request sent:

* the same system prompt (``ParentRequest.system``),
* the same ``tools`` array (``ParentRequest.declarations``: the parent's
  declarations as sent, same order, same JSON),
* the same history, then what the parent's model answered, and only then
  the fork's own task as a new user message.

What breaks the cache hit (everything after the first differing byte is
re-prefilled): a system prompt that differs at all (a memory index rebuilt
between capture and fork, a different date line), a tools array that is
reordered, has a tool added or removed or a description changed, or a
history that was edited, compressed or re-serialised differently (thought
parts dropped, a reminder re-rendered). ``ParentRequest.of_turn`` captures
these right after the parent's turn so none of that can happen in between.

The tools-array decision. A fork may need tools the parent's chat does not
declare (memory extraction writes files; a chat in ``plan`` mode offers no
write tool). Qwen Code keeps the parent's declarations and restricts what the fork
may do with permissions, rather than sending a different array. We do the
same: the fork's request carries the parent's array verbatim, the fork runs
its own tool *implementations* by name, and its ``Permissions`` decide what
each call may do. When a fork tool is not declared in the parent's array at
all, its declaration is appended to the end of the array (reported in
``ForkResult.tools_appended``) so the model can call it: that costs the
cache everything from the tools block on (for Qwen's chat template that is
the history; the system text still hits). In ``default``, ``auto-edit`` and ``yolo`` the chat
declares ``write_file``/``edit`` itself (asking the user before each use), so
the memory forks send its array unchanged (``memory_fork.py`` adds a shell
only when the chat declares one).

Status. ``completed`` (the model stopped calling tools, or the turn budget
ran out — Qwen Code counts both as completed), ``failed`` (the wall-clock
budget ran out, or the model or a tool errored), ``cancelled`` (``cancel``
was set). Cancellation *resolves* with ``cancelled``; it never raises, so a
caller that must not record a finished run (dream must not write its
schedule metadata) has to check ``status`` itself. Cancelling the task that
awaits ``run_fork`` still raises ``CancelledError`` as usual (shutdown).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..llm.content import Content, Part
from .events import EventSink, TurnEvent, TurnOutcome
from .loop import Recorder, StreamingModel, TurnRequest, run_turn
from .permissions import Permissions
from .tool import Tool, ToolContext

log = logging.getLogger(__name__)

ForkStatus = Literal["completed", "cancelled", "failed"]


@dataclass(frozen=True)
class ParentRequest:
    """The cache-critical parameters of a parent turn (Qwen Code's ``CacheSafeParams``).

    Deep copies, taken once: the parent's history keeps growing after the
    capture, and a fork must not see (or change) what came later.
    """

    system: str
    declarations: list[dict[str, Any]]
    history: list[Content]

    @classmethod
    def capture(cls, system: str, declarations: Sequence[dict[str, Any]], history: Sequence[Content]) -> ParentRequest:
        return cls(system=system, declarations=copy.deepcopy(list(declarations)), history=copy.deepcopy(list(history)))

    @classmethod
    def of_turn(cls, req: TurnRequest) -> ParentRequest:
        """What ``req`` sent on the wire (call right after its turn, before the next one starts)."""
        declarations = req.declarations if req.declarations is not None else [t.declaration() for t in req.tools]
        return cls.capture(req.system, declarations, req.history)


@dataclass
class ForkResult:
    status: ForkStatus
    reason: str
    """``goal``, ``max_turns``, ``stopped`` (a tool ended the run), ``timeout``, ``cancelled`` or ``error: <message>``."""
    text: str = ""
    rounds: int = 0
    files_written: list[str] = field(default_factory=list)
    """Absolute paths the fork's tools wrote (successful calls only), in order, without repeats."""
    produced: list[Content] = field(default_factory=list)
    """The Contents the fork added after its task message."""
    tools_appended: list[str] = field(default_factory=list)
    """Fork tools missing from the parent's array whose declarations were appended (cache cost: see module doc)."""


def fork_history(history: Sequence[Content], open_call_note: str) -> list[Content]:
    """The parent history made to end on a model turn, so the task can follow as a user message.

    Trailing user Contents are dropped (a turn that failed before the model
    answered). A last model turn with function calls gets a response for
    each (``open_call_note``) and a model ``Acknowledged.`` (as ``extractionAgentPlanner.ts``).
    """
    own = list(history)  # a new list; the Contents are shared read-only (the loop only appends)
    while own and own[-1].get("role") != "model":
        own.pop()
    if not own:
        return own
    calls = [p["functionCall"] for p in own[-1].get("parts", []) if "functionCall" in p]
    if calls:
        responses: list[Part] = [
            {"functionResponse": {"id": c["id"], "name": c["name"], "response": {"output": open_call_note}}} for c in calls
        ]
        own.append({"role": "user", "parts": responses})
        own.append({"role": "model", "parts": [{"text": "Acknowledged."}]})
    return own


async def run_fork(
    model: StreamingModel,
    parent: ParentRequest,
    task: str,
    *,
    root: Path,
    tools: Sequence[Tool] = (),
    permissions: Permissions | None = None,
    read_roots: Sequence[Path] = (),
    max_turns: int = 5,
    max_seconds: float = 120.0,
    cancel: asyncio.Event | None = None,
    max_tokens: int | None = None,
    open_call_note: str = "Background task started.",
    emit: EventSink | None = None,
    tool_context: ToolContext | None = None,
    record: Recorder | None = None,
) -> ForkResult:
    """Run ``task`` as a fork of ``parent``; never raises for the run's own failures (see the module doc).

    ``tools`` are the implementations the fork may run (by name);
    ``permissions`` vote on every call; ``read_roots`` are directories
    outside ``root`` the read tools may also open (the memory roots).
    ``tool_context`` replaces the plain one built from those (a speculation
    gives its write tools an applier that writes into its overlay);
    ``record`` sees each Content the fork adds, with the loop's metadata.
    """
    declared = {d.get("function", {}).get("name") for d in parent.declarations}
    appended = [t for t in tools if t.name not in declared]
    declarations = copy.deepcopy(parent.declarations) + [t.declaration() for t in appended]
    if appended:
        log.info("fork tools %s are not in the parent's tools array; appended (prompt cache misses from the tools block on)", [t.name for t in appended])
    history = fork_history(parent.history, open_call_note)
    history.append({"role": "user", "parts": [{"text": task}]})
    start = len(history)
    req = TurnRequest(
        system=parent.system,
        history=history,
        tools=tools,
        tool_context=tool_context or ToolContext(workspace_root=root, cwd=root, read_roots=await asyncio.to_thread(lambda: tuple(r.resolve() for r in read_roots))),
        max_tokens=max_tokens,
        declarations=declarations,
        permissions=permissions,
    )
    outcome = TurnOutcome(text="", finish_reason="stop")

    def keep(content: Content, **meta: Any) -> None:
        if record is not None:
            record(content, **meta)

    def forward(event: TurnEvent) -> None:
        if emit is not None:
            emit(event)

    async def turn() -> TurnOutcome:
        return await run_turn(model, req, emit=forward, record=keep, max_rounds=max_turns, outcome=outcome)

    status, reason = await _race(asyncio.create_task(turn()), cancel, max_seconds)
    written = list(dict.fromkeys(outcome.written))
    if status == "completed":
        reason = {"length": "max_turns", "stopped": "stopped"}.get(outcome.finish_reason, "goal")
    return ForkResult(
        status=status,
        reason=reason,
        text=outcome.text,
        rounds=outcome.rounds,
        files_written=written,
        produced=history[start:],
        tools_appended=[t.name for t in appended],
    )


async def _race(work: asyncio.Task[TurnOutcome], cancel: asyncio.Event | None, max_seconds: float) -> tuple[ForkStatus, str]:
    """Wait for ``work``, the cancel signal or the deadline, whichever comes first."""
    waiter = asyncio.create_task(cancel.wait()) if cancel is not None else None
    try:
        pending = {work} if waiter is None else {work, waiter}
        done, _ = await asyncio.wait(pending, timeout=max_seconds, return_when=asyncio.FIRST_COMPLETED)
        if work in done:
            exc = work.exception()
            if exc is None:
                return "completed", ""
            log.warning("forked run failed: %s", exc)
            return "failed", f"error: {exc}"
        return ("cancelled", "cancelled") if waiter in done else ("failed", "timeout")
    finally:
        for task in (work, waiter):
            if task is not None and not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
