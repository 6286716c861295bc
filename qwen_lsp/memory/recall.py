"""Recall: which memories a turn gets, and the text that brings them in (Qwen Code's ``recall.ts``).

The model picks first — a side query that sees only each memory's header
(type, absolute path, time, description), never the body — because only a
model can tell that "why is CI red" wants the flaky-test memory. It runs
under a 30 s safety timeout. When it fails, times out or answers something
invalid, the heuristic scorer (:mod:`.heuristic`) answers instead, so a
broken or slow model never costs the user their memories. A user cancel
returns nothing at all: the turn that asked is gone.

This module does no disk IO: the caller scans (project first, then user, so
project shadows user on a full tie) and passes the documents in.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Literal, Protocol

from . import heuristic
from .age import memory_age, memory_freshness_text
from .model import MemoryDoc
from ..llm.json_answer import parse_json_answer
from ..text.jstext import u16_head, u16_len

log = logging.getLogger(__name__)

MAX_RELEVANT_DOCS = 5
MAX_FAST_RECALL_DOCS = 2
"""The early heuristic result offered while the selector runs: only the two best, no model judgement behind it."""
SELECTOR_TIMEOUT_SECONDS = 30.0
"""A safety net for a hung endpoint, far above a normal ~1 s selection (as ``relevanceSelector.ts``'s abort)."""
MAX_MODEL_CANDIDATES = 200
RECENT_CANDIDATE_RESERVE = 20
"""Of the 200 candidates, at least this many seats go to recent memories the lexical pass missed."""
MAX_MANIFEST_BYTES = 25_000
MAX_MANIFEST_DESCRIPTION = 512
"""UTF-16 units of a description shown to the selector."""
MAX_SELECTOR_ANSWER_CHARS = 64_000
"""A longer answer is not a list of at most five paths; it is refused unparsed."""
TRUNCATION_NOTE = "> NOTE: Relevant memory truncated for prompt budget."
NO_BODY_TEXT = "_No detailed entries yet._"
RELEVANT_MEMORY_INTRO = (
    "Use the following memories only when they are directly relevant to the current request."
    " Verify file/function claims before relying on them."
)

Strategy = Literal["model", "heuristic", "none"]


class SideQuery(Protocol):
    """One model request with no tools, as recall, forget and compaction make it.

    ``system`` is the system prompt and ``user`` the single user message.
    With a ``json_schema`` the answer must be one JSON value matching it (the
    implementation asks the endpoint for structured output where it can and
    returns the raw text either way: the caller parses and validates).
    ``timeout`` is the caller's budget in seconds for the whole request; the
    implementation should stop by then, and callers enforce it too.

    Returns the answer text. Raises on any failure (HTTP, model error, empty
    answer); callers treat every exception as "no answer". Cancelling the
    awaiting task must abort the request.
    """

    async def __call__(self, *, system: str, user: str, json_schema: Mapping[str, Any] | None, timeout: float) -> str: ...


@dataclass(frozen=True)
class RecallResult:
    docs: tuple[MemoryDoc, ...]
    """The selected memories, best first; each carries its absolute ``path``."""
    strategy: Strategy
    """``model`` (the selector chose), ``heuristic`` (the scorer did) or ``none`` (nothing recalled)."""
    text: str
    """The ``## Relevant memory`` block to put inside a ``<system-reminder>`` ('' when nothing)."""


NOTHING = RecallResult((), "none", "")


class SideQueryCancelled(Exception):
    """The user cancelled while a side query was running."""


async def recall(
    query: str,
    docs: Sequence[MemoryDoc],
    *,
    select: SideQuery | None,
    now: float,
    active_tools: Collection[str] = (),
    cancel: asyncio.Event | None = None,
    limit: int = MAX_RELEVANT_DOCS,
    selector_timeout: float = SELECTOR_TIMEOUT_SECONDS,
    on_fast_result: Callable[[RecallResult], None] | None = None,
) -> RecallResult:
    """The memories relevant to ``query`` among ``docs`` and their rendered block (``now``: seconds, for ages).

    ``select`` is the model selector (None: the heuristic alone, e.g. no model
    configured or ``--no-model``). ``active_tools`` are the tools used
    recently in the chat: memories that merely document how to call them are
    left out (``createActiveToolUsageFilter``). Setting ``cancel`` returns :data:`NOTHING`.

    ``on_fast_result`` is called once, before the selector is asked, with the
    heuristic's top two (if any): a turn that makes no tool call has no later
    moment to receive the model's choice, so it can inject this instead.
    """
    if not query.strip() or not docs or limit <= 0 or _is_set(cancel):
        return NOTHING
    tools = _ordered(active_tools)
    wanted = limit if select is None else max(MAX_MODEL_CANDIDATES - RECENT_CANDIDATE_RESERVE, limit)
    # Scoring thousands of memories is CPU work of tens of milliseconds: off the event loop.
    eligible, lexical = await asyncio.to_thread(_lexical, query, docs, tools, wanted)
    if select is not None:
        if on_fast_result is not None and lexical:
            on_fast_result(_result(lexical[: min(MAX_FAST_RECALL_DOCS, limit)], "heuristic", now))
        try:
            chosen = await _select_by_model(select, query, _model_candidates(lexical, eligible), tools, limit, cancel, selector_timeout)
        except SideQueryCancelled:
            return NOTHING
        except Exception as exc:  # timeout, HTTP or model error, invalid answer: the heuristic answers
            log.info("recall selector gave no usable answer (%s); using the heuristic", _describe(exc))
            fallback = lexical[:limit]
        else:
            return _result(chosen, "model", now)
    else:
        fallback = lexical
    if _is_set(cancel):
        return NOTHING
    return _result(fallback, "heuristic", now)


def _lexical(query: str, docs: Sequence[MemoryDoc], tools: Sequence[str], limit: int) -> tuple[list[MemoryDoc], list[MemoryDoc]]:
    """The documents that are not active-tool noise, and the heuristic's best ``limit`` of them."""
    eligible = [doc for doc in docs if not is_active_tool_noise(doc, tools)]
    return eligible, heuristic.rank(query, eligible, limit)


def _result(docs: Sequence[MemoryDoc], strategy: Strategy, now: float) -> RecallResult:
    if not docs:
        return NOTHING
    return RecallResult(tuple(docs), strategy, render_relevant_memory(docs, now))


def _is_set(cancel: asyncio.Event | None) -> bool:
    return cancel is not None and cancel.is_set()


def _ordered(tools: Collection[str]) -> list[str]:
    """A sequence keeps its order (it is shown to the selector); a set is sorted so the prompt is stable."""
    return list(tools) if isinstance(tools, Sequence) else sorted(tools)


def _describe(exc: BaseException) -> str:
    return type(exc).__name__ + (f": {exc}" if str(exc) else "")


# --------------------------------------------------------------------------- active-tool filter
USAGE_MARKERS = (
    "api docs", "api documentation", "failed call", "failed tool call", "failed tool-call",
    "field mapping", "field mappings", "guessed call", "guessed tool", "mcp tool",
    "parameter schema", "parameter schemas", "tool schema", "tool schemas", "tool usage", "usage reference",
)
DURABLE_MARKERS = (
    "credential", "credentials", "escalation", "gotcha", "gotchas", "known issue", "known issues",
    "owner", "ownership", "warning", "warnings", "workaround", "workarounds",
)


def tool_aliases(tool: str) -> list[str]:
    """How a memory may name a tool: its name, the part after the last ``::``, an MCP tool's own name."""
    name = tool.strip().lower()
    aliases = [name]
    if "::" in name:
        aliases.append(name.split("::")[-1])
    if name.startswith("mcp__"):
        parts = name.split("__")
        if len(parts) >= 3:
            aliases += ["__".join(parts[2:]), parts[-1]]
    return list(dict.fromkeys(a.strip() for a in aliases if a.strip()))


def is_active_tool_noise(doc: MemoryDoc, tools: Sequence[str]) -> bool:
    """A memory about calling a tool in use now: the live tool definition is the better source.

    Kept anyway when it records something the schema cannot (a credential's
    location, an owner, a gotcha, a workaround).
    """
    if not tools:
        return False
    haystack = " ".join((doc.title, doc.description, heuristic.normalize_body(doc.body))).lower()
    if not any(alias in haystack for tool in tools for alias in tool_aliases(tool)):
        return False
    if any(marker in haystack for marker in DURABLE_MARKERS):
        return False
    return any(marker in haystack for marker in USAGE_MARKERS)


# --------------------------------------------------------------------------- model selector
SELECTOR_SYSTEM_PROMPT = """\
You choose which saved memories an AI coding assistant should see while it works on a user's query. You get the query and a list of memory files, each with its type, path, save time and description.

Answer with the paths of the memories that will clearly help with this query — at most 5. Include a memory only when its description makes you sure it is useful.
- When in doubt, leave a memory out. Be selective.
- When nothing clearly helps, return an empty list.
- When recently used tools are listed, do not pick memories that are usage notes, API documentation, parameter schemas, field mappings, guessed call formats or failed-call transcripts for those tools: the live tool definitions are authoritative. Do still pick lasting operational knowledge the schema cannot give, such as where credentials live, who owns something, escalation paths, known gotchas, warnings and confirmed workarounds."""

SELECTOR_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {"selected_memories": {"type": "array", "items": {"type": "string"}}},
    "required": ["selected_memories"],
    "additionalProperties": False,
}


def _model_candidates(lexical: Sequence[MemoryDoc], eligible: Sequence[MemoryDoc]) -> list[MemoryDoc]:
    """The lexical top 180 interleaved with the newest others (L1, R1, L2, R2, …), up to 200."""
    top = list(lexical[: MAX_MODEL_CANDIDATES - RECENT_CANDIDATE_RESERVE])
    taken = {doc.path for doc in top}
    recent = sorted((d for d in eligible if d.path not in taken), key=lambda d: -d.mtime)[: MAX_MODEL_CANDIDATES - len(top)]
    out: list[MemoryDoc] = []
    for i, doc in enumerate(top):
        out.append(doc)
        if i < len(recent):
            out.append(recent[i])
    out.extend(recent[len(top) :])
    return out


def iso_time(mtime: float) -> str:
    """JavaScript's ``new Date(ms).toISOString()`` (milliseconds, ``Z``) for a time in seconds."""
    ms = math.trunc(mtime * 1000) if math.isfinite(mtime) else 0
    try:
        moment = datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(milliseconds=ms)
    except OverflowError:
        moment = datetime(1970, 1, 1, tzinfo=timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def manifest(docs: Sequence[MemoryDoc]) -> tuple[str, list[MemoryDoc]]:
    """One header line per memory (never the body) and the memories that fit in 25,000 UTF-8 bytes.

    Absolute paths, so ``user/role.md`` in the project and in the user scope
    stay two different memories. A line that does not fit is skipped and later
    ones are still tried.
    """
    lines: list[str] = []
    included: list[MemoryDoc] = []
    used = 0
    for doc in docs:
        description = u16_head(doc.description, MAX_MANIFEST_DESCRIPTION)
        line = f"- [{doc.type}] {doc.path} ({iso_time(doc.mtime)})" + (f": {description}" if description else "")
        size = len((("\n" if lines else "") + line).encode("utf-8", "surrogatepass"))
        if used + size > MAX_MANIFEST_BYTES:
            continue
        lines.append(line)
        included.append(doc)
        used += size
    return "\n".join(lines), included


def selector_user_message(query: str, listing: str, tools: Sequence[str]) -> str:
    tools_part = f"\n\nRecently used tools: {', '.join(tools)}" if tools else ""
    return f"Query: {query.strip()}\n\nAvailable memories:\n{listing}{tools_part}"


async def _select_by_model(
    select: SideQuery,
    query: str,
    candidates: Sequence[MemoryDoc],
    tools: Sequence[str],
    limit: int,
    cancel: asyncio.Event | None,
    timeout: float,
) -> list[MemoryDoc]:
    listing, included = manifest(candidates)
    if not included:
        return []
    user = selector_user_message(query, listing, tools)
    answer = await run_side_query(select, system=SELECTOR_SYSTEM_PROMPT, user=user, schema=SELECTOR_SCHEMA, timeout=timeout, cancel=cancel)
    by_path = {str(doc.path): doc for doc in included}
    chosen = _parse_selection(answer, by_path.keys(), limit)
    return [by_path[p] for p in chosen][:limit]


def _parse_selection(answer: str, known: Collection[str], limit: int) -> list[str]:
    value = parse_json_answer(answer, max_chars=MAX_SELECTOR_ANSWER_CHARS)
    if not isinstance(value, dict) or not isinstance(value.get("selected_memories"), list):
        raise ValueError("Recall selector must return selected_memories array")
    paths = value["selected_memories"]
    if len(paths) > limit:
        raise ValueError(f"Recall selector returned too many documents: {len(paths)}")
    if any(not isinstance(p, str) or p not in known for p in paths):
        raise ValueError("Recall selector returned unknown file path")
    return list(dict.fromkeys(paths))


async def run_side_query(
    select: SideQuery,
    *,
    system: str,
    user: str,
    schema: Mapping[str, Any] | None,
    timeout: float,
    cancel: asyncio.Event | None,
) -> str:
    """``select(...)`` bounded by ``timeout`` (TimeoutError) and by ``cancel`` (:class:`SideQueryCancelled`).

    The timeout is enforced here as well as handed to the side query, so a
    helper that ignores it cannot hold recall past the safety net.
    """
    call = asyncio.ensure_future(select(system=system, user=user, json_schema=schema, timeout=timeout))
    waiters: set[asyncio.Future[Any]] = {call}
    cancelled = asyncio.ensure_future(cancel.wait()) if cancel is not None else None
    if cancelled is not None:
        waiters.add(cancelled)
    try:
        done, _ = await asyncio.wait(waiters, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in waiters:
            if not task.done():
                task.cancel()
    if _is_set(cancel):
        raise SideQueryCancelled
    if call not in done:
        raise TimeoutError(f"no answer within {timeout:g} s")
    return call.result()


# --------------------------------------------------------------------------- rendering
def truncate_body(body: str) -> str:
    """The body as shown: over 1,200 UTF-16 units it is cut (trailing space trimmed) and says so."""
    normalized = heuristic.normalize_body(body)
    if u16_len(normalized) <= heuristic.MAX_BODY_CHARS:
        return normalized
    return f"{u16_head(normalized, heuristic.MAX_BODY_CHARS).rstrip()}\n\n{TRUNCATION_NOTE}"


def render_relevant_memory(docs: Sequence[MemoryDoc], now: float) -> str:
    """The ``## Relevant memory`` block for ``docs`` ('' for none), to wrap in a ``<system-reminder>``."""
    if not docs:
        return ""
    lines = ["## Relevant memory", "", RELEVANT_MEMORY_INTRO, ""]
    for doc in docs:
        freshness = memory_freshness_text(doc.mtime, now)
        lines += [
            f"### {doc.title} ({doc.relative_path or doc.path.name})",
            f"Saved {memory_age(doc.mtime, now)}.",
            doc.description,
            "",
            truncate_body(doc.body) or NO_BODY_TEXT,
            *(["", f"> NOTE: {freshness}"] if freshness else []),
            "",
        ]
    return "\n".join(lines)
