"""The model ↔ tool loop of one user turn.

Each round sends the whole history, streams the answer, appends the model's
Content, runs any tool calls and appends their responses, until the model
answers without calling a tool or the round budget runs out. Every Content
is handed to ``record`` the moment it exists, so a crash or a cancel never
loses what already happened; a round that ends early (a cancel, a stall, a
cut stream) records the partial text it had streamed, marked interrupted,
before the cancellation or error propagates. While a round streams, a
``draft`` (``sessions.draft``) saves its text in pieces, so even a kill -9
keeps what the user already saw.

An answer cut off by the token limit ends the turn with ``length`` and a
status line; the client has already dropped any tool call it was writing,
because its arguments are incomplete and must not run.

The same loop runs forked runs (``fork.py``): a fork sends its parent's
``tools`` array verbatim (``TurnRequest.declarations``) while running its
own tool implementations under its own ``permissions``; a refused call is
answered with a tool error the model can read, never by ending the turn.
Only a tool may end a turn early, by marking its result ``stop``: a
speculation that reached a call nobody may approve, or the user's plain
"no" to a permission request (``Approval.denial_extra``), after which
Qwen Code 0.24.4 ends the turn too and asks the model nothing more. The
calls after it in the same answer get a "not run" response (for a denial,
0.24.4's ``PERMISSION_CANCEL_SKIP_MESSAGE``), and the outcome says
``stopped``, or ``denied`` for a denial: the engine then starts no
after-turn work (memory extraction, suggestions), as 0.24.4 does not.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..llm.client import FinishEvent, StreamEvent, TextDelta, ThoughtDelta, ToolCallEvent, UsageEvent
from ..llm.content import Content, FunctionResponseBody, OpenAIMessage, Part, to_openai_messages
from .events import EventSink, RoundDone, RoundSink, TurnEvent, TurnOutcome
from .permissions import Permissions
from .tool import Tool, ToolContext, ToolResult

log = logging.getLogger(__name__)

MAX_ROUNDS = 25
"""Tool rounds per user turn before the loop stops and says so."""

CUT_OFF_NOTE = "The answer was cut off: the model reached its output token limit (finish reason 'length')."
SHOWN_OUTPUT_MAX = 8000
"""How much of a tool's output its ``toolResult`` event carries, for the editor's expanded row (the model gets all of it)."""


class StreamingModel(Protocol):
    def stream(
        self, messages: Sequence[Mapping[str, object]], *, tools: list[dict[str, Any]] | None = None, max_tokens: int | None = None
    ) -> AsyncIterator[StreamEvent]: ...


class Recorder(Protocol):
    def __call__(self, content: Content, **meta: Any) -> None: ...


class Draft(Protocol):
    """Saves a round's answer while it streams (``sessions.draft.AnswerDraft``)."""

    def grew(self, thought: list[str], text: list[str], added: int) -> None: ...

    def settle(self) -> None: ...


@dataclass
class TurnRequest:
    """Everything one turn needs; built fresh by the engine for every turn."""

    system: str
    history: list[Content]
    """Mutable: the loop appends model and tool Contents as they happen."""
    tools: Sequence[Tool]
    tool_context: ToolContext
    finish_tool_context: Callable[[ToolContext], Awaitable[ToolContext]] | None = None
    """Awaited once, right before the turn's first tool call runs: ``tool_context`` completed with what is
    resolved only when a tool needs it (where the chat may write outside the workspace)."""
    max_tokens: int | None = None
    budget: Callable[[], int] | None = None
    """Called before each round: that round's ``max_tokens`` (the output ceiling clamped to the window left,
    ``llm/sampling.py``); None sends ``max_tokens`` as it is."""
    count_prompt: Callable[[list[OpenAIMessage]], int] | None = None
    """Fallback prompt-token counter when the endpoint reports no usage."""
    before_request: Callable[[], Awaitable[None]] | None = None
    """Awaited before every model request (compaction may shrink ``history`` here)."""
    late_reminders: Callable[[], list[str]] | None = None
    """Polled (never awaited) after a round's tool calls ran: texts that settled since the
    request was assembled (recalled memories) go after the function responses, which must lead."""
    declarations: list[dict[str, Any]] | None = None
    """The ``tools`` array to send, verbatim; None means the declarations of ``tools``.
    A fork passes its parent's array here so the prompt-cache prefix stays byte-identical."""
    permissions: Permissions | None = None
    """Rules every tool call is checked against before it runs; None lets every call run."""


async def run_turn(
    model: StreamingModel,
    req: TurnRequest,
    *,
    emit: EventSink,
    record: Recorder,
    on_round: RoundSink | None = None,
    max_rounds: int = MAX_ROUNDS,
    outcome: TurnOutcome | None = None,
    draft: Draft | None = None,
) -> TurnOutcome:
    """Run the turn; ``outcome``, when given, is filled in as the turn goes (a fork reads it after a cancel;
    a turn continued from an accepted speculation's rounds starts from their counts).

    ``draft``, when given, sees every delta and is settled when a round's
    stream ends, before that round's answer is recorded.
    """
    tools_by_name = {t.name: t for t in req.tools}
    declarations = (req.declarations if req.declarations is not None else [t.declaration() for t in req.tools]) or None
    answer: list[str] = []
    outcome = outcome if outcome is not None else TurnOutcome(text="", finish_reason="stop")
    for round_no in range(1, max_rounds + 1):
        outcome.rounds = round_no
        if req.before_request is not None:
            await req.before_request()
        messages = to_openai_messages(req.system, req.history)
        streamed = await _stream_round(model, messages, declarations, req, emit=emit, record=record, draft=draft)
        answer.extend(streamed.text)
        content = _model_content(streamed.thought, streamed.text, streamed.calls)
        req.history.append(content)
        usage = streamed.usage
        prompt_tokens = usage.prompt_tokens if usage else (req.count_prompt(messages) if req.count_prompt else 0)
        completion_tokens = usage.completion_tokens if usage else 0
        outcome.prompt_tokens = prompt_tokens
        outcome.completion_tokens += completion_tokens
        record(content, usage=usage)
        if on_round is not None:
            on_round(RoundDone(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens, reported=usage is not None, calls=len(streamed.calls)))
        if not streamed.calls:
            outcome.finish_reason = "length" if streamed.finish == "length" else "stop"
            if streamed.finish == "length":
                emit(TurnEvent("status", text=CUT_OFF_NOTE))
            break
        if req.finish_tool_context is not None:
            req.tool_context, req.finish_tool_context = await req.finish_tool_context(req.tool_context), None
        ended = await _run_tools(streamed.calls, tools_by_name, req, emit=emit, record=record, outcome=outcome)
        if ended is not None:
            outcome.finish_reason = ended
            break
    else:
        note = f"Stopped after {max_rounds} tool rounds in one turn."
        emit(TurnEvent("status", text=note))
        outcome.finish_reason = "length"
    outcome.text = "".join(answer)
    return outcome


@dataclass
class _Streamed:
    """One round's answer as the stream gave it."""

    text: list[str] = field(default_factory=list)
    thought: list[str] = field(default_factory=list)
    calls: list[ToolCallEvent] = field(default_factory=list)
    usage: UsageEvent | None = None
    finish: str = "stop"


async def _stream_round(
    model: StreamingModel,
    messages: Sequence[Mapping[str, object]],
    declarations: list[dict[str, Any]] | None,
    req: TurnRequest,
    *,
    emit: EventSink,
    record: Recorder,
    draft: Draft | None,
) -> _Streamed:
    """Stream one model request, passing text and thoughts on as they come. A stream that fails or is
    cancelled keeps what it said so far in the history, recorded as interrupted."""
    round_ = _Streamed()
    try:
        budget = req.budget() if req.budget is not None else req.max_tokens
        async for ev in model.stream(messages, tools=declarations, max_tokens=budget):
            if isinstance(ev, TextDelta):
                round_.text.append(ev.text)
                emit(TurnEvent("text", text=ev.text))
                if draft is not None:
                    draft.grew(round_.thought, round_.text, len(ev.text))
            elif isinstance(ev, ThoughtDelta):
                round_.thought.append(ev.text)
                emit(TurnEvent("thought", text=ev.text))
                if draft is not None:
                    draft.grew(round_.thought, round_.text, len(ev.text))
            elif isinstance(ev, ToolCallEvent):
                round_.calls.append(ev)
            elif isinstance(ev, UsageEvent):
                round_.usage = ev
            elif isinstance(ev, FinishEvent):
                round_.finish = ev.reason
    except (asyncio.CancelledError, Exception):
        if draft is not None:
            draft.settle()
        partial = _model_content(round_.thought, round_.text, [])
        if partial["parts"]:
            req.history.append(partial)
            record(partial, interrupted=True)
        raise
    if draft is not None:
        draft.settle()
    return round_


async def _run_tools(
    calls: list[ToolCallEvent],
    tools_by_name: dict[str, Tool],
    req: TurnRequest,
    *,
    emit: EventSink,
    record: Recorder,
    outcome: TurnOutcome,
) -> str | None:
    """Run a round's tool calls in order; their responses (and late reminders) go into the history as one
    message whatever happens. Returns how the turn ends when a call stopped it ("denied" / "stopped")."""
    responses: list[Part] = []
    results: list[dict[str, Any]] = []
    stopped = denied = False
    try:
        for call in calls:
            part, result, stopped = await _run_tool(call, tools_by_name, req, emit, outcome)
            responses.append(part)
            results.append(result)
            if stopped:
                denied = result.get("decision") == "deny"
                note = SKIPPED_AFTER_DENIAL if denied else NOT_RUN_AFTER_STOP
                for skipped in calls[len(responses) :]:
                    responses.append(_unrun_response(skipped, note))
                    results.append({"callId": skipped.id, "status": "cancelled"})
                break
    except asyncio.CancelledError:
        # Every recorded tool call needs its response, or the history can never be sent again.
        for call in calls[len(responses) :]:
            responses.append(_unrun_response(call, CANCELLED_NOTE))
            results.append({"callId": call.id, "status": "cancelled"})
        raise
    else:
        if req.late_reminders is not None:
            responses.extend({"text": text} for text in req.late_reminders())
    finally:
        tool_content: Content = {"role": "user", "parts": responses}
        req.history.append(tool_content)
        record(tool_content, tool_results=results)
    if stopped:
        return "denied" if denied else "stopped"
    return None


def _model_content(thought: list[str], text: list[str], calls: list[ToolCallEvent]) -> Content:
    parts: list[Part] = []
    if thought:
        parts.append({"text": "".join(thought), "thought": True})
    if text:
        parts.append({"text": "".join(text)})
    for call in calls:
        parts.append({"functionCall": {"id": call.id, "name": call.name, "args": call.arguments}})
    return {"role": "model", "parts": parts}


CANCELLED_NOTE = "Cancelled by the user before the tool finished."
NOT_RUN_AFTER_STOP = "Not run: the run stopped at an earlier call of this response."
SKIPPED_AFTER_DENIAL = "Skipped because a permission request was cancelled before the user answered; user input is required before continuing."
"""Qwen Code 0.24.4's ``PERMISSION_CANCEL_SKIP_MESSAGE``: what each call after a denied one answers."""


def _unrun_response(call: ToolCallEvent, note: str) -> Part:
    return {"functionResponse": {"id": call.id, "name": call.name, "response": {"error": note}}}


async def _run_tool(
    call: ToolCallEvent, tools: dict[str, Tool], req: TurnRequest, emit: EventSink, outcome: TurnOutcome
) -> tuple[Part, dict[str, Any], bool]:
    """Run one call: its function response, Qwen Code's ``toolCallResult`` for the session file, and whether
    the tool ended the turn (``ToolResult.extra["stop"]``: a speculation reached a call nobody may approve)."""
    emit(TurnEvent("toolCall", tool={"id": call.id, "name": call.name, "args": call.arguments}))
    outcome.tool_calls += 1
    tool = tools.get(call.name)
    refusal = None
    if req.permissions is not None and tool is not None:  # rules stat files and may judge a shell command: off the loop
        refusal = await asyncio.to_thread(req.permissions.refusal, call.name, call.arguments)
    if call.arguments_error is not None:
        result = ToolResult(output=call.arguments_error, is_error=True, display=f"Invalid arguments for '{call.name}'")
    elif tool is None:
        result = ToolResult(output=f"Unknown tool '{call.name}'. Available tools: {', '.join(sorted(tools))}.", is_error=True)
    elif refusal is not None:
        result = ToolResult(output=refusal, is_error=True)
    else:
        try:
            result = await tool.run(call.arguments, dataclasses.replace(req.tool_context, call_id=call.id))
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a tool bug must not end the turn; the model sees the error
            log.exception("tool %s failed", call.name)
            result = ToolResult(output=f"Tool '{call.name}' failed: {exc}", is_error=True)
    written = result.extra.get("written")
    if isinstance(written, str) and not result.is_error:
        outcome.written.append(written)
    display = result.display or (result.output.splitlines()[0] if result.output else "")
    decision = result.extra.get("decision")
    shown: dict[str, Any] = {"id": call.id, "name": call.name, "isError": result.is_error, "output": result.output[:SHOWN_OUTPUT_MAX]}
    if isinstance(decision, str):
        shown["decision"] = decision
    emit(TurnEvent("toolResult", text=display, tool=shown))
    body: FunctionResponseBody = {"error": result.output} if result.is_error else {"output": result.output}
    recorded: dict[str, Any] = {
        "callId": call.id,
        "status": "cancelled" if decision == "deny" else "error" if result.is_error else "success",
        "resultDisplay": display,
    }
    if result.is_error:
        recorded["error"] = {"message": result.output}
    if isinstance(decision, str):
        recorded["decision"] = decision
    return {"functionResponse": {"id": call.id, "name": call.name, "response": body}}, recorded, result.extra.get("stop") is True
