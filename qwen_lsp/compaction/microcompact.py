"""Microcompaction (Qwen Code's ``microcompact.ts``): old tool results and media replaced by placeholders, no model call.

Three triggers: ``force`` (manual fast compaction), ``idle`` (at least
``toolResultsThresholdMinutes`` since the last model answer) and ``size``
(the characters of successful, uncleared compactable tool results exceed
``toolResultsTotalCharsThreshold``). Force and idle clear tool results and
media; size clears tool results only.

Seed-era, with two fixes from the later source because they repair real
bugs: the size trigger clears down to ``floor(threshold / 2)`` (clearing
only just below the threshold re-triggers on every request and breaks the
endpoint's prompt cache each time), and zero-character results (errors,
earlier placeholders, empty output) neither take a keep slot nor get
cleared (otherwise they strand real recent results unprotected). The
compactable tools are 0.24.4's list (:data:`COMPACTABLE_TOOLS`); of ours
that is ``read_file``, ``grep_search``, ``glob``, ``run_shell_command``,
``edit``, ``write_file`` and ``skill``.

keep-N is per category — compactable tool results, top-level media in
user turns, media nested under other tools' results — so ``keep = 1``
keeps one of each.

The caller gets the paths of file results that were cleared
(``evicted_read_paths``) so a read cache can forget them; a cleared file
result whose path cannot be recovered (no call id) is counted in
``unresolved_evicted_reads`` and means "forget every cached read".
Contents that are not touched are passed through as the same objects;
touched ones are new objects (histories are never mutated in place).
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from ..llm.content import Content, Part
from .media import has_nested_media, iter_parts, media_of, mime_of, parts_of, sanitize_mime

CLEARED_TOOL_OUTPUT = "[Old tool result content cleared]"
CLEARED_MEDIA_PREFIX = "[Old inline media cleared:"
COMPACTABLE_TOOLS = frozenset(
    {"read_file", "run_shell_command", "grep_search", "glob", "web_fetch", "web_search", "read_mcp_resource", "edit", "write_file", "skill"}
)
"""Qwen Code 0.24.4's ``COMPACTABLE_TOOLS``: a ``skill`` result (the whole SKILL.md body) is cleared too."""
FILE_PATH_TOOLS = frozenset({"read_file", "edit", "write_file"})
MEDIA_TOKEN_ESTIMATE = 1600
DEFAULT_IDLE_MINUTES = 60
DEFAULT_KEEP = 5
DEFAULT_SIZE_THRESHOLD = 500_000
KEEP_ENV = "QWEN_MC_KEEP_RECENT"

Trigger = Literal["force", "idle", "size"]
Kind = Literal["tool", "media", "nested"]


@dataclass(frozen=True)
class MicrocompactSettings:
    """``context.clearContextOnIdle`` in settings; -1 disables a trigger."""

    threshold_minutes: float = DEFAULT_IDLE_MINUTES
    num_to_keep: int = DEFAULT_KEEP
    total_chars_threshold: int | None = None

    def keep(self, env: Mapping[str, str] | None = None) -> int:
        """``QWEN_MC_KEEP_RECENT`` (an integer string) beats the setting; at least 1."""
        raw = (os.environ if env is None else env).get(KEEP_ENV)
        if raw is not None:
            text = raw.strip()
            digits = text[1:] if text.startswith("-") else text
            if digits.isascii() and digits.isdigit():
                return max(1, int(text))
        return max(1, self.num_to_keep)

    def size_threshold(self) -> int:
        """The size trigger's threshold; -1 (disabled) also when the idle trigger is disabled and size is unset."""
        if self.total_chars_threshold is not None:
            return self.total_chars_threshold
        return -1 if self.threshold_minutes < 0 else DEFAULT_SIZE_THRESHOLD


@dataclass
class MicrocompactMeta:
    trigger: Trigger
    tools_cleared: int = 0
    media_cleared: int = 0
    tools_kept: int = 0
    media_kept: int = 0
    keep: int = DEFAULT_KEEP
    tokens_saved: int = 0
    evicted_read_paths: list[str] = field(default_factory=list)
    unresolved_evicted_reads: int = 0


@dataclass(frozen=True)
class _Ref:
    content: int
    part: int
    kind: Kind


def idle_due(last_completion: float | None, settings: MicrocompactSettings, now: float | None = None) -> bool:
    """Whether the idle trigger fires: a last answer at least ``threshold_minutes`` ago (never without one)."""
    if settings.threshold_minutes < 0 or last_completion is None:
        return False
    gap = (time.time() if now is None else now) - last_completion
    return math.isfinite(gap) and gap >= settings.threshold_minutes * 60


def _response(part: Mapping[str, Any]) -> Mapping[str, Any] | None:
    response = part.get("functionResponse")
    return response if isinstance(response, dict) else None


def _body(part: Mapping[str, Any]) -> Mapping[str, Any]:
    response = _response(part) or {}
    body = response.get("response")
    return body if isinstance(body, dict) else {}


def _tool_name(part: Mapping[str, Any]) -> str | None:
    response = _response(part)
    name = response.get("name") if response else None
    return name if isinstance(name, str) and name else None


def _is_error(part: Mapping[str, Any]) -> bool:
    return _body(part).get("error") is not None


def _output_chars(part: Mapping[str, Any]) -> int:
    """Characters a compactable result would free: 0 for errors, placeholders and other tools."""
    if _tool_name(part) not in COMPACTABLE_TOOLS or _is_error(part):
        return 0
    output = _body(part).get("output")
    if not isinstance(output, str) or output == CLEARED_TOOL_OUTPUT:
        return 0
    return len(output)


def _collect(history: Sequence[Content]) -> dict[Kind, list[_Ref]]:
    refs: dict[Kind, list[_Ref]] = {"tool": [], "media": [], "nested": []}
    for ci, content in enumerate(history):
        if content.get("role") != "user":
            continue  # asked before every request, over the whole history: the model's parts are not walked
        for pi, raw in enumerate(parts_of(content)):
            part = cast(Mapping[str, Any], raw)
            if _tool_name(part) in COMPACTABLE_TOOLS:
                refs["tool"].append(_Ref(ci, pi, "tool"))
            elif _response(part) is not None and has_nested_media(part):
                refs["nested"].append(_Ref(ci, pi, "nested"))
            elif media_of(part) is not None:
                refs["media"].append(_Ref(ci, pi, "media"))
    return refs


def _calls(history: Sequence[Content]) -> dict[str, list[tuple[str, Mapping[str, Any]]]]:
    """``functionCall.id`` → every (name, args) seen with it (ids can repeat in resumed or odd histories)."""
    calls: dict[str, list[tuple[str, Mapping[str, Any]]]] = {}
    for ci, _pi, part in iter_parts(history):
        call = part.get("functionCall")
        if history[ci].get("role") != "model" or not isinstance(call, dict):
            continue
        call_id, name, args = call.get("id"), call.get("name"), call.get("args")
        if isinstance(call_id, str) and call_id and isinstance(name, str):
            calls.setdefault(call_id, []).append((name, args if isinstance(args, dict) else {}))
    return calls


def _file_paths(part: Mapping[str, Any], calls: Mapping[str, list[tuple[str, Mapping[str, Any]]]]) -> list[str]:
    response = _response(part) or {}
    call_id = response.get("id")
    found = calls.get(call_id, []) if isinstance(call_id, str) else []
    paths = [args.get("file_path") for name, args in found if name in FILE_PATH_TOOLS]
    return list(dict.fromkeys(p for p in paths if isinstance(p, str) and p))


def _part(history: Sequence[Content], ref: _Ref) -> Mapping[str, Any]:
    return cast(Mapping[str, Any], parts_of(history[ref.content])[ref.part])


def _plan_all(history: Sequence[Content], refs: dict[Kind, list[_Ref]], keep: int) -> tuple[list[_Ref], set[_Ref]]:
    """Force / idle: keep the newest ``keep`` of each category, clear the rest that can be cleared."""
    candidates = [r for r in refs["tool"] if _output_chars(_part(history, r)) > 0 or has_nested_media(_part(history, r))]
    kept = set(candidates[-keep:]) | set(refs["media"][-keep:]) | set(refs["nested"][-keep:])
    clear = [r for r in candidates + refs["media"] + refs["nested"] if r not in kept]
    return clear, kept


def _plan_size(history: Sequence[Content], refs: list[_Ref], keep: int, threshold: int) -> tuple[list[_Ref], set[_Ref]] | None:
    """Size: clear the oldest results until the total is at most half the threshold (a soft target)."""
    chars = {r: c for r in refs if (c := _output_chars(_part(history, r))) > 0}
    total = sum(chars.values())
    if threshold < 0 or total <= threshold:
        return None
    kept = set([r for r in refs if r in chars][-keep:])
    low = threshold // 2
    clear: list[_Ref] = []
    for ref in refs:
        if total <= low:
            break
        if ref in chars and ref not in kept:
            clear.append(ref)
            total -= chars[ref]
    return clear, kept


def _without_nested(response: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in response.items() if k != "parts"}


def microcompact_history(
    history: Sequence[Content],
    last_completion: float | None,
    settings: MicrocompactSettings,
    *,
    force: bool = False,
    now: float | None = None,
    env: Mapping[str, str] | None = None,
) -> tuple[list[Content], MicrocompactMeta] | None:
    """The history with old results cleared and what was done, or None when nothing fired or nothing was saved."""
    keep = settings.keep(env)
    refs = _collect(history)
    trigger: Trigger
    if force or idle_due(last_completion, settings, now):
        trigger = "force" if force else "idle"
        clear, kept = _plan_all(history, refs, keep)
    else:
        planned = _plan_size(history, refs["tool"], keep, settings.size_threshold())
        if planned is None:
            return None
        trigger = "size"
        clear, kept = planned
    if not clear and trigger != "size":
        return None
    meta = MicrocompactMeta(trigger=trigger, keep=keep)
    calls = _calls(history)
    kept_written = _kept_written_paths(history, kept, calls)
    evicted: dict[str, None] = {}
    by_content: dict[int, dict[int, Kind]] = {}
    for ref in clear:
        by_content.setdefault(ref.content, {})[ref.part] = ref.kind
    out = list(history)
    for ci, targets in by_content.items():
        new_parts: list[Any] = []
        touched = False
        for pi, part in enumerate(parts_of(history[ci])):
            kind = targets.get(pi)
            replacement = None if kind is None else _clear(cast(Mapping[str, Any], part), kind, meta)
            if replacement is None:
                new_parts.append(part)
                continue
            touched = True
            if kind == "tool" and _tool_name(cast(Mapping[str, Any], part)) in FILE_PATH_TOOLS:
                paths = _file_paths(cast(Mapping[str, Any], part), calls)
                if not paths:
                    meta.unresolved_evicted_reads += 1
                evicted.update((p, None) for p in paths if p not in kept_written)
            new_parts.append(replacement)
        if touched:
            out[ci] = {"role": history[ci]["role"], "parts": cast(list[Part], new_parts)}
    if meta.tokens_saved == 0 and trigger != "size":
        return None
    meta.evicted_read_paths = list(evicted)
    meta.tools_kept = sum(1 for r in refs["tool"] if r in kept)
    meta.media_kept = 0 if trigger == "size" else min(len(refs["media"]) + len(refs["nested"]), keep)
    return out, meta


def _kept_written_paths(history: Sequence[Content], kept: set[_Ref], calls: Mapping[str, list[tuple[str, Mapping[str, Any]]]]) -> set[str]:
    """Paths whose full bytes stay in history through a kept ``write_file`` call: not evicted."""
    out: set[str] = set()
    for ref in kept:
        part = _part(history, ref)
        if ref.kind == "tool" and _tool_name(part) == "write_file" and not _is_error(part):
            paths = _file_paths(part, calls)
            if len(paths) == 1:
                out.add(paths[0])
    return out


def _clear(part: Mapping[str, Any], kind: Kind, meta: MicrocompactMeta) -> dict[str, Any] | None:
    """The placeholder for one part (counting what it saves), or None to leave it."""
    response = _response(part)
    if kind == "tool" and response is not None and not _is_error(part):
        output = _body(part).get("output")
        if output == CLEARED_TOOL_OUTPUT:
            return None
        meta.tokens_saved += math.ceil(len(output) / 4) if isinstance(output, str) else 0
        meta.tokens_saved += MEDIA_TOKEN_ESTIMATE * sum(1 for p in response.get("parts") or [] if isinstance(p, dict) and media_of(p))
        meta.tools_cleared += 1
        return {"functionResponse": {**_without_nested(response), "response": {"output": CLEARED_TOOL_OUTPUT}}}
    if kind == "nested" and response is not None and not _is_error(part):
        meta.tokens_saved += MEDIA_TOKEN_ESTIMATE * sum(1 for p in response.get("parts") or [] if isinstance(p, dict) and media_of(p))
        meta.media_cleared += 1
        return {"functionResponse": _without_nested(response)}
    if kind == "media" and media_of(part) is not None:
        meta.tokens_saved += MEDIA_TOKEN_ESTIMATE
        meta.media_cleared += 1
        return {"text": f"{CLEARED_MEDIA_PREFIX} {sanitize_mime(mime_of(part))}]"}
    return None


def strip_thoughts(history: Sequence[Content]) -> list[Content]:
    """Model turns without their thought parts (fast compaction); turns left empty are dropped."""
    out: list[Content] = []
    for content in history:
        parts = parts_of(content)
        if content.get("role") != "model" or not any(p.get("thought") for p in parts):
            out.append(content)
            continue
        kept = [p for p in parts if not p.get("thought")]
        if kept:
            out.append({"role": "model", "parts": kept})
    return out
