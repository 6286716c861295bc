"""The conversation history format, and its conversion to Chat Completions messages.

History is kept exactly as Qwen Code records it in session JSONL (``chatRecordingService.ts``):
``{"role": "user" | "model", "parts": [Part, ...]}``.  Keeping the recorded
shape means a session written by the Qwen Code CLI can be resumed here (and the
other way round) without a translation layer, and the engine records what it
sends with no loss.

``to_openai_messages`` follows the reference converter's rules (text parts of a
model turn are joined, tool calls travel on the assistant message, each
function response becomes its own ``role: "tool"`` message placed before any
user text of the same Content).  Thought parts are never sent.  The output is a
pure function of the input, built with a fixed key order and compact JSON, so
equal histories produce byte-identical requests and the endpoint's prompt
cache keeps hitting.
"""

from __future__ import annotations

import json
from typing import Any, Literal, NotRequired, TypedDict


class FunctionCall(TypedDict):
    id: str
    name: str
    args: dict[str, Any]


class FunctionResponseBody(TypedDict, total=False):
    output: str
    error: str


class FunctionResponse(TypedDict):
    id: str
    name: str
    response: FunctionResponseBody


class InlineData(TypedDict):
    mimeType: str
    data: str
    """Base64."""


class Part(TypedDict, total=False):
    """One part of a Content; exactly one of ``text``/``functionCall``/``functionResponse``/``inlineData`` is set."""

    text: str
    thought: bool
    functionCall: FunctionCall
    functionResponse: FunctionResponse
    inlineData: InlineData
    """An attached image (``context/attachments.py``)."""


class Content(TypedDict):
    role: Literal["user", "model"]
    parts: list[Part]


class OpenAIMessage(TypedDict):
    role: Literal["system", "user", "assistant", "tool"]
    content: NotRequired[str | list[dict[str, Any]] | None]
    tool_calls: NotRequired[list[dict[str, Any]]]
    tool_call_id: NotRequired[str]


def user_text(text: str) -> Content:
    return {"role": "user", "parts": [{"text": text}]}


def model_text(text: str) -> Content:
    return {"role": "model", "parts": [{"text": text}]}


def is_thought(part: Part) -> bool:
    return bool(part.get("thought")) and "text" in part


def text_of(content: Content) -> str:
    """The visible text of a Content: its non-thought text parts, joined."""
    return "".join(p["text"] for p in content.get("parts", []) if "text" in p and not is_thought(p))


INJECTED_PREFIXES = ("<system-reminder>", "--- Content from referenced files ---", "## Relevant memory")
"""Text parts the engine (or Qwen Code) adds around a user's prompt: reminders, attached files, and
recalled memories (a bare ``## Relevant memory`` part, as Qwen Code 0.24.4 sends it)."""


def visible_text(content: Content) -> str:
    """What the person typed or read: text parts minus thoughts and injected reminders/attachments."""
    parts = [p["text"] for p in content.get("parts", []) if isinstance(p, dict) and isinstance(p.get("text"), str) and not p.get("thought")]
    if content.get("role") == "user":
        parts = [t for t in parts if not t.lstrip().startswith(INJECTED_PREFIXES)]
    return "".join(parts)


def dump_args(args: dict[str, Any]) -> str:
    """Tool-call arguments as sent on the wire: compact, keys in the order given.

    Not ``sort_keys``: the arguments must read back as the model wrote them, and
    a dict's insertion order is already stable for equal input.
    """
    return _COMPACT(args)


_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
"""``json.dumps(…, ensure_ascii=False, separators=(",", ":"))`` without a new encoder per call: every tool call of
the history is dumped again for each request (and for its token count)."""


def function_response_text(response: FunctionResponse) -> str:
    """What the model sees for a tool result: ``output``, else ``error``, else the JSON."""
    body: Any = response.get("response")
    if body is None:
        return ""
    if isinstance(body, str):
        return body
    if isinstance(body, dict):
        for key in ("output", "error"):
            if isinstance(body.get(key), str):
                return body[key]
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"))


def _model_message(parts: list[Part]) -> OpenAIMessage | None:
    text = "".join(p["text"] for p in parts if "text" in p and not is_thought(p))
    calls = [
        {
            "id": p["functionCall"].get("id", ""),
            "type": "function",
            "function": {"name": p["functionCall"].get("name", ""), "arguments": dump_args(p["functionCall"].get("args") or {})},
        }
        for p in parts
        if "functionCall" in p
    ]
    if not text and not calls:
        return None  # thought-only (or empty) turns are not sent
    message: OpenAIMessage = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = calls
    return message


def _user_messages(parts: list[Part]) -> list[OpenAIMessage]:
    messages: list[OpenAIMessage] = [
        {"role": "tool", "tool_call_id": p["functionResponse"].get("id", ""), "content": function_response_text(p["functionResponse"])}
        for p in parts
        if "functionResponse" in p
    ]
    texts = [p["text"] for p in parts if "text" in p and not is_thought(p)]
    if any(_image_url(p) for p in parts):  # an attached image: text and image parts in their order
        content = [{"type": "text", "text": p["text"]} if "text" in p else {"type": "image_url", "image_url": {"url": url}}
                   for p in parts if ("text" in p and not is_thought(p)) or (url := _image_url(p))]
        messages.append({"role": "user", "content": content})
    elif len(texts) == 1:
        messages.append({"role": "user", "content": texts[0]})
    elif texts:
        # Several text parts (e.g. a <system-reminder> block and the prompt) stay
        # separate content parts, as the reference sends them, instead of being
        # glued together without a separator.
        messages.append({"role": "user", "content": [{"type": "text", "text": t} for t in texts]})
    return messages


def _image_url(part: Part) -> str | None:
    """An ``inlineData`` image part as the data URL Chat Completions takes (``image_url``), else None."""
    body: Any = part.get("inlineData")
    if not isinstance(body, dict):
        return None
    mime, data = body.get("mimeType"), body.get("data")
    if not (isinstance(mime, str) and mime.startswith("image/") and isinstance(data, str)):
        return None
    return f"data:{mime};base64,{data}"


def to_openai_messages(system: str | None, history: list[Content]) -> list[OpenAIMessage]:
    """Chat Completions ``messages`` for a system prompt and a history (deterministic)."""
    messages: list[OpenAIMessage] = []
    if system:
        messages.append({"role": "system", "content": system})
    for content in history:
        parts = content.get("parts") or []
        if content.get("role") == "model":
            message = _model_message(parts)
            if message is not None:
                messages.append(message)
        else:
            for message in _user_messages(parts):
                _append_user(messages, message)
    return messages


def _append_user(messages: list[OpenAIMessage], message: OpenAIMessage) -> None:
    """Append, merging into a directly preceding user message.

    Two user messages in a row happen when a turn was cancelled or failed
    before the model said anything (its prompt is recorded, no answer is);
    strict endpoints reject that, so their text parts are joined into one.
    """
    prev = messages[-1] if messages else None
    if message["role"] != "user" or prev is None or prev["role"] != "user":
        messages.append(message)
        return
    prev["content"] = _as_parts(prev.get("content")) + _as_parts(message.get("content"))


def _as_parts(content: Any) -> list[dict[str, str]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return list(content or [])
