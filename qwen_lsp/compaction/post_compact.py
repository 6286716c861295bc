"""The history that replaces the compressed one (Qwen Code's ``composePostCompactHistory``).

Shape: the summary (analysis stripped, resume trailer added) as a user
message, the fixed acknowledgement as a model message, then — only if there
is anything to restore — ONE user message holding, in order, the plan-mode
reminder, the large-file reference list, the embedded recent files and the
recent images. Everything restored goes into that single message because
strict endpoints reject two messages of the same role in a row.

A trailing model turn with a function call (auto-compaction between tool
rounds: its responses are about to follow) is kept: as its own model turn
after the attachments, or, without attachments, only its function-call
parts folded into the acknowledgement (no model→model adjacency).

Files are the last five distinct ``file_path`` arguments of read_file /
write_file / edit / replace calls that did not fail, newest first, kept only
when they resolve (through symlinks) inside the workspace — a path the model
named, even in a denied call, must not pull an outside file into the prompt.
A file is skipped when missing or binary, listed by reference when over
20,000 characters or over the 200,000-character budget, else embedded in a
fence one backtick longer than its longest backtick run. File reads are
blocking: call :func:`compose_post_compact_history` on a worker thread.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from ..files.containment import resolved_inside
from ..llm.content import Content, Part
from .media import is_image, nested_parts, parts_of
from .summary import SUMMARY_ACK, post_process_summary
from ..text.visible import prompt_name

MAX_FILES = 5
MAX_IMAGES = 3
CHARS_PER_TOKEN = 4
MAX_TOKENS_PER_FILE = 5_000
TOKEN_BUDGET = 50_000
BINARY_SAMPLE = 512
BINARY_SHARE = 0.3
FILE_TOUCHING_TOOLS = frozenset({"read_file", "write_file", "edit", "replace"})

REFERENCES_PREFIX = (
    "The following files were recently accessed before context was compacted. They are listed as reference only "
    "because they are large. Use `read_file` to view current content for any file you need:"
)
EMBED_PREFIX = "Recently accessed file (full current content embedded):"
IMAGES_PREFIX = (
    "Recent visual snapshots preserved from before context was compacted (most recent last). "
    "Each image corresponds to a tool result or user-pasted image earlier in the conversation:"
)
PLAN_MODE_REMINDER = (
    "<plan-mode-active>\n"
    "You are currently in PLAN mode. You may research, read files, and propose plans, but you may not execute "
    "modification tools (write_file, edit, run_shell_command, etc.) until the user exits plan mode. The summary above "
    "may not reflect this constraint — honor plan mode regardless.\n"
    "</plan-mode-active>"
)


@dataclass(frozen=True)
class Restored:
    """The composed history and how many characters of restored text it carries (for the token estimate)."""

    history: list[Content]
    restoration_chars: int


def _failed_call_ids(history: Sequence[Content]) -> set[str]:
    failed: set[str] = set()
    for content in history:
        for part in parts_of(content):
            response = cast(Mapping[str, Any], part).get("functionResponse")
            body = response.get("response") if isinstance(response, Mapping) else None
            if isinstance(body, Mapping) and "error" in body and isinstance(response, Mapping) and isinstance(response.get("id"), str):
                failed.add(response["id"])
    return failed


def recent_file_paths(history: Sequence[Content], limit: int = MAX_FILES) -> list[str]:
    """Newest-first distinct paths of successful file-touching calls (parts of one turn read in reverse)."""
    failed = _failed_call_ids(history)
    seen: dict[str, None] = {}
    for content in reversed(history):
        if content.get("role") != "model":
            continue
        for part in reversed(parts_of(content)):
            call = cast(Mapping[str, Any], part).get("functionCall")
            if not isinstance(call, Mapping) or call.get("name") not in FILE_TOUCHING_TOOLS:
                continue
            if isinstance(call.get("id"), str) and call["id"] in failed:
                continue
            args = call.get("args")
            path = args.get("file_path") if isinstance(args, Mapping) else None
            if isinstance(path, str) and path and path not in seen:
                seen[path] = None
                if len(seen) >= limit:
                    return list(seen)
    return list(seen)


def inside_workspace(path: str, root: Path) -> bool:
    """``path`` (relative to ``root``, or absolute) still inside ``root`` once symlinks are resolved."""
    return resolved_inside(root / path, root.resolve()) is not None


def _read_adaptive(path: str, root: Path) -> tuple[str, str | None]:
    """``("embed", text)``, ``("reference", None)`` or ``("skip", None)`` for missing / binary files."""
    max_chars = MAX_TOKENS_PER_FILE * CHARS_PER_TOKEN
    full = os.path.join(root, path)
    try:
        if os.stat(full).st_size > max_chars * 4:
            return "reference", None
        with open(full, "rb") as handle:
            data = handle.read(max_chars * 4 + 1)
    except OSError:
        return "skip", None
    sample = data[:BINARY_SAMPLE]
    odd = sum(1 for b in sample if not (0x20 <= b <= 0x7E or b in (0x09, 0x0A, 0x0D) or b >= 0x80))
    if sample and odd / len(sample) > BINARY_SHARE:
        return "skip", None
    text = data.decode("utf-8", errors="replace")
    if len(text) > max_chars:
        return "reference", None
    return "embed", text


def _longest_backtick_run(text: str) -> int:
    longest = current = 0
    for ch in text:
        current = current + 1 if ch == "`" else 0
        longest = max(longest, current)
    return longest


def file_restoration_texts(paths: Sequence[str], root: Path) -> list[str]:
    """The reference list (if any large files) and one embed block per small file, within the budget."""
    references: list[str] = []
    embeds: list[tuple[str, str]] = []
    used = 0
    budget = TOKEN_BUDGET * CHARS_PER_TOKEN
    for path in paths:
        kind, text = _read_adaptive(path, root)
        if kind == "skip":
            continue
        if text is None or used + len(text) > budget:
            references.append(path)
            continue
        embeds.append((path, text))
        used += len(text)
    out: list[str] = []
    if references:
        out.append("\n".join([REFERENCES_PREFIX, "", *(f"- {prompt_name(p)}" for p in references)]))
    for path, text in embeds:
        fence = "`" * max(3, _longest_backtick_run(text) + 1)
        out.append(f"{EMBED_PREFIX}\n\n## {prompt_name(path)}\n\n{fence}\n{text}\n{fence}")
    return out


def recent_images(history: Sequence[Content], limit: int = MAX_IMAGES) -> list[tuple[int, Mapping[str, Any], Mapping[str, Any] | None]]:
    """Up to ``limit`` newest images, oldest first, each with the function call of the model turn before it."""
    found: list[tuple[int, Mapping[str, Any], Mapping[str, Any] | None]] = []
    for index in range(len(history) - 1, -1, -1):
        images: list[Mapping[str, Any]] = []
        for part in reversed(parts_of(history[index])):
            p = cast(Mapping[str, Any], part)
            if is_image(p):
                images.append(p)
            else:
                images.extend(inner for inner in reversed(list(nested_parts(p) or ())) if is_image(inner))
        if not images:
            continue
        source = None
        if index > 0 and history[index - 1].get("role") == "model":
            source = next((c for p in parts_of(history[index - 1]) if isinstance(c := cast(Mapping[str, Any], p).get("functionCall"), Mapping)), None)
        for image in images:
            found.insert(0, (index, image, source))
            if len(found) >= limit:
                return found
    return found


def _image_block(images: Sequence[tuple[int, Mapping[str, Any], Mapping[str, Any] | None]]) -> list[Part]:
    if not images:
        return []
    lines = [IMAGES_PREFIX, ""]
    for turn, _image, call in images:
        if call is not None and call.get("name"):
            args = json.dumps(call.get("args") or {}, ensure_ascii=False, separators=(",", ":"))
            lines.append(f"- turn {turn}: {call['name']} args={args}")
        else:
            lines.append(f"- turn {turn}: user-provided image")
    return [{"text": "\n".join(lines)}, *(cast(Part, dict(img)) for _t, img, _c in images)]


def trailing_function_call(history: Sequence[Content]) -> Content | None:
    """The last turn when it is a model turn with a function call (a call whose responses are pending)."""
    if history and history[-1].get("role") == "model" and any("functionCall" in p for p in parts_of(history[-1])):
        return history[-1]
    return None


def compose_post_compact_history(history: Sequence[Content], summary: str, *, root: Path, plan_mode: bool = False) -> Restored:
    """Summary + acknowledgement + one user message of attachments (+ the pending function call); see the module docstring."""
    attachments: list[Part] = []
    if plan_mode:
        attachments.append({"text": PLAN_MODE_REMINDER})
    paths = [p for p in recent_file_paths(history) if inside_workspace(p, root)]
    attachments.extend({"text": text} for text in file_restoration_texts(paths, root))
    attachments.extend(_image_block(recent_images(history)))
    restoration_chars = sum(len(p.get("text", "")) for p in attachments)
    out: list[Content] = [
        {"role": "user", "parts": [{"text": post_process_summary(summary)}]},
        {"role": "model", "parts": [{"text": SUMMARY_ACK}]},
    ]
    pending_call = trailing_function_call(history)
    if attachments:
        out.append({"role": "user", "parts": attachments})
        if pending_call is not None:
            out.append(pending_call)
    elif pending_call is not None:
        out[1]["parts"].extend(p for p in parts_of(pending_call) if "functionCall" in p)
    return Restored(out, restoration_chars)
