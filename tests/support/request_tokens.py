"""A request's size from its HTTP body alone, counted as the server says it counts one (``llm/tokens.py``):
the system message, each other message with its overhead (a tool call with its own), the tools array.
The picture tests compare the server's own figures with this."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from qwen_lsp.llm.tokens import MESSAGE_OVERHEAD, TOOL_CALL_OVERHEAD


def texts(message: dict[str, Any]) -> list[str]:
    content = message.get("content")
    if content is None:
        return []
    return [content] if isinstance(content, str) else [p["text"] for p in content if isinstance(p, dict) and "text" in p]


def body_tokens(body: dict[str, Any], count: Callable[[str], int]) -> int:
    system, *rest = body["messages"]
    total = count(system["content"])
    for m in rest:
        total += sum(count(t) for t in texts(m)) + MESSAGE_OVERHEAD
        for call in m.get("tool_calls") or []:
            total += count(call["function"]["name"]) + count(call["function"]["arguments"]) + TOOL_CALL_OVERHEAD
    return total + count(json.dumps(body.get("tools", []), separators=(",", ":"), ensure_ascii=False))


def is_main_request(body: dict[str, Any]) -> bool:
    """A chat's own request (it carries the tools), not a side query (a JSON answer, no tools)."""
    return "tools" in body and body.get("response_format") is None
