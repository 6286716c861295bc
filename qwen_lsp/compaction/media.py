"""Inline media in a history: how to recognise it, count it and replace it with text.

Our own tools return text only, but a session recorded by the Qwen Code CLI
may carry images and documents, either as top-level ``inlineData`` /
``fileData`` parts (pasted by the user) or nested in
``functionResponse.parts`` (how Qwen Code's tools return screenshots). These
helpers read parts as plain mappings because :class:`~qwen_lsp.llm.content.Part`
only types the shapes we produce. Histories are decoded JSON, so shapes are
checked with ``isinstance(…, dict)``: the ``Mapping`` ABC check costs several
times more, and microcompaction walks every part of long histories.

``sanitize_mime`` and the placeholders are Qwen Code's
(``sanitizeMimeForPlaceholder`` in ``compactionInputSlimming.ts``):
a mime string from an untrusted tool must not break out of the bracketed
placeholder it is printed into.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, cast

from ..llm.content import Content, Part

MIME_PLACEHOLDER_CHARS = 128


def sanitize_mime(mime: str) -> str:
    """``[\\r\\n\\t]+`` → one space, ``[`` and ``]`` deleted, trimmed, at most 128 characters."""
    out: list[str] = []
    in_run = False
    for ch in mime:
        if ch in "\r\n\t":
            if not in_run:
                out.append(" ")
            in_run = True
            continue
        in_run = False
        if ch not in "[]":
            out.append(ch)
    return "".join(out).strip()[:MIME_PLACEHOLDER_CHARS]


def media_of(part: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The ``inlineData`` / ``fileData`` body of a media part, else None."""
    for key in ("inlineData", "fileData"):
        body = part.get(key)
        if isinstance(body, dict):
            return body
    return None


def mime_of(part: Mapping[str, Any]) -> str:
    body = media_of(part) or {}
    mime = body.get("mimeType")
    return mime if isinstance(mime, str) else "application/octet-stream"


def is_image(part: Mapping[str, Any]) -> bool:
    body = part.get("inlineData")
    return isinstance(body, dict) and isinstance(body.get("mimeType"), str) and body["mimeType"].startswith("image/")


def nested_parts(part: Mapping[str, Any]) -> Sequence[Mapping[str, Any]] | None:
    """The media carrier Qwen Code puts on a tool result (``functionResponse.parts``), if any."""
    response = part.get("functionResponse")
    if not isinstance(response, dict):
        return None
    nested = response.get("parts")
    if not isinstance(nested, list):
        return None
    return [p for p in nested if isinstance(p, dict)]


def has_nested_media(part: Mapping[str, Any]) -> bool:
    return any(media_of(p) is not None for p in nested_parts(part) or ())


def parts_of(content: Content) -> list[Part]:
    parts = content.get("parts")
    return parts if isinstance(parts, list) else []


def count_tool_response_images(history: Sequence[Content]) -> int:
    """Images returned by tools (nested in ``functionResponse.parts``); pasted images do not count (as upstream).

    Asked before every request, over the whole history: only tool results are looked into.
    """
    total = 0
    for content in history:
        for part in parts_of(content):
            if "functionResponse" in part:
                total += sum(1 for inner in nested_parts(cast(Mapping[str, Any], part)) or () if is_image(inner))
    return total


def media_placeholder(part: Mapping[str, Any]) -> str:
    """``[image: <mime>]`` or ``[document: <mime>]`` — what the compression model sees instead of the bytes."""
    mime = sanitize_mime(mime_of(part))
    kind = "image" if mime.startswith("image/") else "document"
    return f"[{kind}: {mime}]"


def _slim_part(part: Mapping[str, Any]) -> Any:
    if media_of(part) is not None:
        return {"text": media_placeholder(part)}
    nested = nested_parts(part)
    if nested is not None and any(media_of(p) is not None for p in nested):
        # Chat Completions carries only a tool result's text, so the placeholders
        # join its output (Qwen Code keeps them as nested text parts, which Gemini sends).
        response = {k: v for k, v in part["functionResponse"].items() if k != "parts"}
        body = response.get("response")
        body = dict(body) if isinstance(body, dict) else {}
        key = "error" if isinstance(body.get("error"), str) and not isinstance(body.get("output"), str) else "output"
        notes = [media_placeholder(p) for p in nested if media_of(p) is not None]
        body[key] = "\n".join([t for t in (body.get(key),) if isinstance(t, str) and t] + notes)
        response["response"] = body
        return {**part, "functionResponse": response}
    return part


def slim_compaction_input(history: Sequence[Content]) -> list[Content]:
    """The history the compression model reads: media replaced by placeholders (``slimCompactionInput``).

    Nested media (and their non-media siblings) are dropped from tool results;
    their placeholders are appended to the result's text.

    Contents without media are passed through as the same objects; the
    caller's history is never changed, so the originals stay available for
    restoring the newest images after compaction.
    """
    out: list[Content] = []
    for content in history:
        parts = parts_of(content)
        if any(media_of(cast(Mapping[str, Any], p)) is not None or has_nested_media(cast(Mapping[str, Any], p)) for p in parts):
            out.append({"role": content["role"], "parts": [_slim_part(cast(Mapping[str, Any], p)) for p in parts]})
        else:
            out.append(content)
    return out


def iter_parts(history: Sequence[Content]) -> Iterator[tuple[int, int, Mapping[str, Any]]]:
    for ci, content in enumerate(history):
        for pi, part in enumerate(parts_of(content)):
            yield ci, pi, cast(Mapping[str, Any], part)
