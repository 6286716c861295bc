"""Tool calls a session recorded without their results, answered so the history can be sent again.

A model turn with a function call is recorded before the call runs; its
result is recorded when the tool finishes. A server killed in between (kill
-9, a crash, a power cut) — or a Qwen Code CLI that exited mid-call — leaves
a call with no response in the file. OpenAI-compatible endpoints refuse a
request whose assistant ``tool_calls`` are not each followed by a ``tool``
message, so a session resumed as is could never be continued (found by the
kill campaign in ``tests/reliability``).

Resume therefore gives every such call an error response saying the tool's
outcome is unknown, placed right after the call as the loop would have
(before any later prompt). Nothing is written back: the file stays what was
recorded, and every resume repairs it the same way.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..llm.content import Content, Part

UNKNOWN_OUTCOME = (
    "No result was recorded for this call: the session stopped (the server was closed or crashed) while it ran. "
    "Its effect is unknown; check before relying on it."
)


def answer_orphaned_calls(history: Sequence[Content]) -> list[Content]:
    """``history`` with an error response for every function call that has none (a new list; inputs untouched).

    A round's responses may come back as several user Contents (one per
    ``tool_result`` record), so all the response Contents right after a call
    count; the missing responses go after them.
    """
    out: list[Content] = []
    at = 0
    while at < len(history):
        content = history[at]
        out.append(content)
        at += 1
        calls = [p["functionCall"] for p in content.get("parts", []) if isinstance(p, dict) and isinstance(p.get("functionCall"), dict)]
        if content.get("role") != "model" or not calls:
            continue
        answered: set[object] = set()
        while at < len(history) and (ids := _response_ids(history[at])):
            answered |= ids
            out.append(history[at])
            at += 1
        missing: list[Part] = [
            {"functionResponse": {"id": call.get("id"), "name": call.get("name"), "response": {"error": UNKNOWN_OUTCOME}}}
            for call in calls
            if call.get("id") not in answered
        ]
        if missing:
            out.append({"role": "user", "parts": missing})
    return out


def _response_ids(content: Content) -> set[object]:
    """The call ids a user Content answers (empty for a prompt)."""
    if content.get("role") != "user":
        return set()
    return {p["functionResponse"].get("id") for p in content.get("parts", []) if isinstance(p, dict) and isinstance(p.get("functionResponse"), dict)}
