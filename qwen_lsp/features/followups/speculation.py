"""The agent side of a speculation: a fork of the finished turn that runs the suggestion into an overlay.

The third use of the fork primitive (Qwen Code's ``startSpeculation``,
``followup/speculation.ts``). The fork sends the parent turn's exact prefix
(``fork.py``: same system prompt, same ``tools`` array, same history), so
the endpoint's prompt cache serves it; then the suggestion as the user's
message, with the seed's limits: :data:`MAX_SPECULATION_TURNS` model
turns and :data:`MAX_SPECULATION_MESSAGES` messages.

Every declared tool is wrapped by the speculation gate
(``features/followups/gate.py``): read tools run, writes land in the overlay, and
anything else ends the run *at* that call — nobody is asked. The write
tools are the main chat's own (``agent/tools/approved.py``) with an applier that
writes into the overlay (:class:`OverlayApplier`), so even a write the
gate let through can only reach the overlay. Read tools see the overlay:
``read_file`` of a file the speculation wrote reads its shadow, and
``list_directory``/``glob``/``grep_search`` over a directory holding
shadows also search the overlay, reporting those hits at their workspace
paths (:class:`_OverlayView`).

The run's Contents (with the loop's metadata, for the session file), its
events (replayed to the chat panel on accept) and its token usage (the cost
reported to the user) are kept on the :class:`SpeculationRun`.

A run that did not finish (it stopped at a call needing approval, failed,
or was cancelled by accept) can still be continued from its last complete
round. A round is complete exactly when the loop sends the next request
(the model's answer and all its tool results are in the history then), so
each request marks the checkpoint: how many records and events belong to
complete rounds (:attr:`SpeculationRun.complete`), and an overlay
checkpoint, so the writes of the round after it can be undone.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import dataclasses
import os
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ...agent.applier import Applier, ApplyError, Snapshot
from ...agent.tools.approved import ApprovedEditTool, ApprovedWriteFileTool
from .gate import gate
from .overlay import OutsideWorkspace, Overlay
from ...llm.client import StreamEvent, UsageEvent
from ...llm.content import Content
from ...agent.approvals import Approval, ToolPermission
from ...agent.events import TurnEvent
from ...agent.fork import ParentRequest, run_fork
from ...agent.loop import StreamingModel
from ...agent.tool import Tool, ToolContext, ToolResult
from ...agent.tools import read_only_tools

MAX_SPECULATION_TURNS = 20
MAX_SPECULATION_MESSAGES = 100
"""Qwen Code's limits. A model turn adds at most two messages (the answer, its tool results), so
with 20 turns the message cap cannot bind; it is kept so the two limits stay those of the seed."""
MAX_SPECULATION_SECONDS = 600.0
"""A wall-clock backstop for a stuck endpoint; the turn and message limits end any normal run first."""

RunStatus = Literal["ready", "stopped", "failed", "cancelled"]


def max_rounds() -> int:
    """The model turns allowed: the turn limit, or fewer if the message limit would bind first."""
    return min(MAX_SPECULATION_TURNS, (MAX_SPECULATION_MESSAGES - 1) // 2)


@dataclass
class SpeculationUsage:
    prompt_tokens: int = 0
    """Summed over every request of the run (each request re-sends the prefix; most of it is cached)."""
    completion_tokens: int = 0
    requests: int = 0


@dataclass
class SpeculationRun:
    status: RunStatus
    reason: str = ""
    """For ``stopped``: the call it stopped at; for ``failed``: why."""
    text: str = ""
    produced: list[Content] = field(default_factory=list)
    records: list[tuple[Content, dict[str, Any]]] = field(default_factory=list)
    """Each Content the fork added with the loop's metadata (usage, tool results), for the session file."""
    events: list[TurnEvent] = field(default_factory=list)
    usage: SpeculationUsage = field(default_factory=SpeculationUsage)
    last_prompt_tokens: int = 0
    complete: int = 0
    """How many of ``records`` belong to complete rounds (see the module doc); always even."""
    complete_events: int = 0
    """How many of ``events`` those complete rounds emitted."""


class _Metered:
    """The model client, counting what the speculation costs."""

    def __init__(self, model: StreamingModel, usage: SpeculationUsage, last: Callable[[int], None], starting: Callable[[], None]) -> None:
        self._model = model
        self._usage = usage
        self._last = last
        self._starting = starting

    async def stream(
        self, messages: Sequence[Mapping[str, object]], *, tools: list[dict[str, Any]] | None = None, max_tokens: int | None = None
    ) -> AsyncIterator[StreamEvent]:
        self._starting()
        self._usage.requests += 1
        async with contextlib.aclosing(self._model.stream(messages, tools=tools, max_tokens=max_tokens)) as events:  # type: ignore[type-var]
            async for event in events:
                if isinstance(event, UsageEvent):
                    self._usage.prompt_tokens += event.prompt_tokens
                    self._usage.completion_tokens += event.completion_tokens
                    self._last(event.prompt_tokens)
                yield event


class OverlayApplier:
    """The write tools' applier in a speculation: reads overlay-first, writes only into the overlay."""

    def __init__(self, overlay: Overlay, base: Applier) -> None:
        self._overlay = overlay
        self._base = base

    async def read(self, path: Path) -> Snapshot:
        text = await asyncio.to_thread(self._overlay.read_text, path)
        if text is not None:
            return Snapshot(text)
        return Snapshot((await self._base.read(path)).text)  # never the buffer's version: nothing is sent to the editor

    def buffer_text(self, path: Path) -> str | None:
        return self._base.buffer_text(path)

    async def write(self, path: Path, before: Snapshot, text: str) -> str:
        try:
            await asyncio.to_thread(self._overlay.write_text, path, text, base=before.text)
        except (OSError, OutsideWorkspace) as exc:
            raise ApplyError(f"Could not write {path}: {exc}") from None
        return "speculative run"


_PATH_KEY = {"read_file": "file_path", "list_directory": "path", "glob": "path", "grep_search": "path"}


class _OverlayView:
    """A read tool that also sees the overlay (see the module doc)."""

    def __init__(self, inner: Tool, overlay: Overlay) -> None:
        self._inner = inner
        self._overlay = overlay

    @property
    def name(self) -> str:
        return self._inner.name

    def declaration(self) -> dict[str, Any]:
        return self._inner.declaration()

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        key = _PATH_KEY[self.name]
        raw = args.get(key) if isinstance(args, dict) else None
        try:
            scope = self._overlay.workspace_path(raw.strip()) if isinstance(raw, str) and raw.strip() else self._overlay.workspace
        except OutsideWorkspace:
            return await self._inner.run(args, ctx)  # the tool refuses it in its own words
        shadows = self._overlay.shadows_under(scope) if scope != self._overlay.workspace else self._overlay.touched()
        if not shadows:
            return await self._inner.run(args, ctx)
        mirror_root = self._overlay.directory.resolve()
        mirror = dataclasses.replace(ctx, workspace_root=mirror_root, cwd=mirror_root, applier=None, read_cache=None, touched=lambda _p: None)
        mirrored = await self._inner.run({**args, key: str(mirror_root / scope.relative_to(self._overlay.workspace))}, mirror)
        mirrored = dataclasses.replace(mirrored, output=mirrored.output.replace(str(mirror_root), str(self._overlay.workspace)))
        if scope in shadows:  # the path is itself a file the speculation wrote: its shadow is the truth
            return mirrored
        real = await self._inner.run(args, ctx)
        if real.is_error:
            return mirrored
        if mirrored.is_error:
            return real
        names = ", ".join(os.fspath(p.relative_to(self._overlay.workspace)) for p in shadows)
        note = f"\n\nFiles this run changed ({names}) are not in the workspace yet; their current content gives:\n"
        return dataclasses.replace(real, output=real.output + note + mirrored.output)


class _Gated:
    """One declared tool behind the speculation gate; ``inner`` None means "declared, but never run here"."""

    def __init__(self, declared: dict[str, Any], inner: Tool | None, run_state: _Stop, overlay: Overlay, mode: Callable[[], str]) -> None:
        self._declared = declared
        self._name = str(declared.get("function", {}).get("name"))
        self._inner = inner
        self._stop = run_state
        self._overlay = overlay
        self._mode = mode

    @property
    def name(self) -> str:
        return self._name

    def declaration(self) -> dict[str, Any]:
        return copy.deepcopy(self._declared)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        verdict = gate(self._name, args if isinstance(args, dict) else {}, approval_mode=self._mode(), overlay=self._overlay)
        if verdict.action == "stop" or self._inner is None:
            self._stop.reason = verdict.reason or f"{self._name}: not run while speculating"
            return ToolResult(
                output="Not run: this needs the user's approval, and this run cannot ask. The run stops here.",
                is_error=True,
                display=f"Speculation stopped: {self._stop.reason}",
                extra={"stop": True},
            )
        return await self._inner.run(args, ctx)


@dataclass
class _Stop:
    reason: str = ""


async def _approve_gated(_call_id: str, _request: ToolPermission) -> Approval:
    """The gate already decided: a write that reaches its tool is one the approval mode runs without asking."""
    return Approval("auto")


def speculation_tools(parent: ParentRequest, overlay: Overlay, mode: Callable[[], str], stop: _Stop) -> list[Tool]:
    """A gated tool for every name the parent declared, in the parent's order (the array is sent as is)."""
    own: dict[str, Tool] = {t.name: _OverlayView(t, overlay) for t in read_only_tools()}
    own.update({t.name: t for t in (ApprovedEditTool(), ApprovedWriteFileTool())})
    return [_Gated(d, own.get(str(d.get("function", {}).get("name"))), stop, overlay, mode) for d in parent.declarations]


async def run_speculation(
    model: StreamingModel,
    parent: ParentRequest,
    suggestion: str,
    *,
    overlay: Overlay,
    applier: Applier,
    approval_mode: Callable[[], str],
    cancel: asyncio.Event,
    max_tokens: int | None = None,
) -> SpeculationRun:
    """Run ``suggestion`` as a fork of ``parent``; never raises for the run's own failures."""
    run = SpeculationRun(status="ready")
    stop = _Stop()

    def last(tokens: int) -> None:
        run.last_prompt_tokens = tokens

    def record(content: Content, **meta: Any) -> None:
        run.records.append((content, dict(meta)))

    def round_starts() -> None:
        """Everything recorded so far is a complete round (the module doc): the checkpoint."""
        run.complete, run.complete_events = len(run.records), len(run.events)
        overlay.checkpoint()

    root = overlay.workspace
    context = ToolContext(workspace_root=root, cwd=root, approve=_approve_gated, applier=OverlayApplier(overlay, applier))
    fork = await run_fork(
        _Metered(model, run.usage, last, round_starts),
        parent,
        suggestion,
        root=root,
        tools=speculation_tools(parent, overlay, approval_mode, stop),
        max_turns=max_rounds(),
        max_seconds=MAX_SPECULATION_SECONDS,
        cancel=cancel,
        max_tokens=max_tokens,
        emit=run.events.append,
        tool_context=context,
        record=record,
    )
    run.text = fork.text
    run.produced = fork.produced
    if fork.status == "cancelled":
        run.status, run.reason = "cancelled", "cancelled"
    elif fork.status == "failed":
        run.status, run.reason = "failed", fork.reason
    elif fork.reason == "stopped":
        run.status, run.reason = "stopped", stop.reason
    return run
